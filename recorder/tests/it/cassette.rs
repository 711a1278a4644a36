//! Cassette files: exact shape, round trip, the size cap on both sides, the version, and
//! broken files refused with the JSON path of the fault.

use crate::llm_support;

use llm_support::TempDir;
use reel_recorder::cassette::{
    CASSETTE_VERSION, CassetteFile, DEFAULT_MAX_CASSETTE_BYTES, Interaction,
};
use reel_recorder::llm_tape::{
    DocumentError, DocumentKind, RecordedChunk, RecordedFunctionCall, RecordedUsage, Timestamp,
};
use serde_json::{Value, json};

fn interaction(question: &str, answer: &[&str]) -> Interaction {
    let request = json!({
        "model": "gemini-2.5-flash",
        "contents": [{"role": "user", "parts": [{"text": question}]}]
    });
    Interaction {
        request: request.as_object().unwrap().clone(),
        response: answer
            .iter()
            .enumerate()
            .map(|(i, text)| RecordedChunk::text(i as u64 * 1_000_000, *text))
            .collect(),
        recorded_at: Timestamp::from_epoch_ms(1_765_389_600_000),
        usage: Some(RecordedUsage {
            prompt_tokens: 3,
            response_tokens: 2,
            total_tokens: 5,
        }),
        duration_ns: Some(1_000_000),
        failure: None,
    }
}

fn two_calls() -> CassetteFile {
    CassetteFile {
        version: CASSETTE_VERSION,
        interactions: vec![
            interaction("hi", &["Hel", "lo"]),
            Interaction {
                usage: None,
                duration_ns: None,
                failure: None,
                ..interaction("bye", &["Bye"])
            },
        ],
    }
}

#[test]
fn a_cassette_is_written_exactly_and_reads_back_equal() {
    let dir = TempDir::new("cassette-roundtrip");
    let path = dir.join("session.cassette.json");
    let cassette = two_calls();
    cassette.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value,
        json!({
            "version": 2,
            "interactions": [
                {
                    "request": {"model": "gemini-2.5-flash",
                                "contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                    "response": [{"delayNs": 0, "text": "Hel"}, {"delayNs": 1_000_000, "text": "lo"}],
                    "recordedAt": "2025-12-10T18:00:00.000Z",
                    "usage": {"promptTokens": 3, "responseTokens": 2, "totalTokens": 5},
                    "durationNs": 1_000_000
                },
                {
                    "request": {"model": "gemini-2.5-flash",
                                "contents": [{"role": "user", "parts": [{"text": "bye"}]}]},
                    "response": [{"delayNs": 0, "text": "Bye"}],
                    "recordedAt": "2025-12-10T18:00:00.000Z"
                }
            ]
        })
    );
    assert_eq!(
        CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap(),
        cassette
    );
    assert_eq!(dir.names(), ["session.cassette.json"]);
    assert_eq!(CassetteFile::default(), CassetteFile::new());
    assert_eq!(CassetteFile::new().interactions, []);
}

#[test]
fn the_size_cap_refuses_to_write_or_read_a_larger_cassette() {
    let dir = TempDir::new("cassette-cap");
    let path = dir.join("c.json");
    let small = CassetteFile {
        version: CASSETTE_VERSION,
        interactions: vec![interaction("hi", &["Hello"])],
    };
    let size = small.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    assert_eq!(size, std::fs::metadata(&path).unwrap().len());
    let before = std::fs::read(&path).unwrap();

    // Writing: refused, the file on disk untouched.
    let big = two_calls();
    let error = big.write(&path, size).unwrap_err();
    let DocumentError::TooLarge {
        kind,
        path: p,
        size: big_size,
        limit,
    } = &error
    else {
        panic!("expected too large, got {error:?}");
    };
    assert_eq!((*kind, p, *limit), (DocumentKind::Cassette, &path, size));
    assert!(*big_size > size);
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` would be {big_size} bytes, over its cap of {size} bytes; raise the cap or record less into one file",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(dir.names(), ["c.json"]);

    // Exactly at the cap is fine; one byte under is not.
    assert_eq!(CassetteFile::read(&path, size).unwrap(), small);
    match CassetteFile::read(&path, size - 1).unwrap_err() {
        DocumentError::TooLarge {
            size: s, limit: l, ..
        } => assert_eq!((s, l), (size, size - 1)),
        other => panic!("expected too large, got {other:?}"),
    }
}

#[test]
fn a_version_1_cassette_reads_and_is_written_back_as_version_2() {
    let dir = TempDir::new("cassette-v1");
    let path = dir.join("old.cassette.json");
    let old = r#"{"version": 1, "interactions": [{"request": {"model": "m"},
        "response": [{"delayNs": 5, "text": "hi"}], "recordedAt": "2025-12-10T18:00:00Z"}]}"#;
    std::fs::write(&path, old).unwrap();
    let cassette = CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    assert_eq!(cassette.version, 1);
    assert_eq!(
        cassette.interactions[0].response,
        [RecordedChunk::text(5, "hi")]
    );
    cassette.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value,
        json!({"version": 2, "interactions": [{"request": {"model": "m"},
            "response": [{"delayNs": 5, "text": "hi"}],
            "recordedAt": "2025-12-10T18:00:00.000Z"}]})
    );
}

#[test]
fn function_calls_in_a_chunk_are_written_exactly_and_read_back_equal() {
    let dir = TempDir::new("cassette-calls");
    let path = dir.join("calls.cassette.json");
    let chunk = RecordedChunk {
        function_calls: vec![
            RecordedFunctionCall {
                id: Some("c1".to_owned()),
                name: "get_weather".to_owned(),
                args: Some(json!({"city": "Lisbon"})),
            },
            RecordedFunctionCall {
                id: None,
                name: "now".to_owned(),
                args: None,
            },
        ],
        ..RecordedChunk::text(0, "")
    };
    let mut cassette = two_calls();
    cassette.interactions.truncate(1);
    cassette.interactions[0].response = vec![chunk];
    cassette.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value["interactions"][0]["response"],
        json!([{"delayNs": 0, "text": "", "functionCalls": [
            {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}},
            {"name": "now"}
        ]}])
    );
    assert_eq!(
        CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap(),
        cassette
    );
}

#[test]
fn an_unknown_version_is_refused() {
    let dir = TempDir::new("cassette-version");
    let path = dir.join("v3.json");
    std::fs::write(&path, r#"{"version": 3, "interactions": []}"#).unwrap();
    let error = CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` has format version 3; this reader knows versions 1 to 2",
            path.display()
        )
    );
}

#[test]
fn broken_interactions_are_refused_with_their_path() {
    let dir = TempDir::new("cassette-broken");
    type Case = (fn(&mut Value), &'static str, &'static str);
    let cases: [Case; 5] = [
        (
            |v| v["interactions"][1]["recordedAt"] = json!("2025-12-10"),
            "interactions[1].recordedAt",
            "not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS.sssZ)",
        ),
        (
            |v| v["interactions"][0]["response"][1]["delayNs"] = json!(-1),
            "interactions[0].response[1].delayNs",
            "invalid value: integer `-1`, expected u64",
        ),
        (
            |v| {
                v["interactions"][1]
                    .as_object_mut()
                    .unwrap()
                    .remove("response");
            },
            "interactions[1].response",
            "missing field `response`",
        ),
        (
            |v| v["interactions"][0]["request"] = json!([1]),
            "interactions[0].request",
            "invalid type: sequence, expected a map",
        ),
        (
            |v| {
                v.as_object_mut().unwrap().remove("version");
            },
            "version",
            "missing field `version`",
        ),
    ];
    let path = dir.join("broken.json");
    for (edit, at, message) in cases {
        let mut value = serde_json::to_value(two_calls()).unwrap();
        edit(&mut value);
        std::fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        match CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap_err() {
            DocumentError::Invalid {
                kind: DocumentKind::Cassette,
                path: p,
                at: a,
                message: m,
            } => {
                assert_eq!(p, path);
                assert_eq!((a.as_str(), m.as_str()), (at, message));
            }
            other => panic!("{at}: expected invalid, got {other:?}"),
        }
    }
    std::fs::write(&path, "").unwrap();
    assert!(matches!(
        CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap_err(),
        DocumentError::Empty {
            kind: DocumentKind::Cassette,
            ..
        }
    ));
}
