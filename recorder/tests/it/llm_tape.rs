//! Per-call tapes: what is written is exactly the documented shape, it reads back equal, and a
//! broken tape is refused with the file and the JSON path (or line and column) of the fault.

use crate::llm_support;

use llm_support::TempDir;
use reel_recorder::llm_tape::{
    DocumentError, DocumentKind, LlmTape, RecordedChunk, RecordedUsage, TapeEnd, TapeMeta,
    Timestamp, parse_tape, read_tape, write_tape,
};
use serde_json::{Value, json};

fn smoke_tape() -> LlmTape {
    let request = json!({
        "model": "gemini-2.5-flash",
        "systemInstruction": "SYSTEM ROLE: forecaster",
        "contents": [{"role": "user", "parts": [{"text": "news?"}]}]
    });
    LlmTape {
        meta: TapeMeta {
            label: "smoke-1".to_owned(),
            model: "gemini-2.5-flash".to_owned(),
            recorded_at: Timestamp::from_epoch_ms(1_765_389_600_000),
            sdk: "reel 0.1.0".to_owned(),
            comment: Some("first smoke test".to_owned()),
        },
        request: request.as_object().unwrap().clone(),
        stream: vec![
            RecordedChunk::text(0, "[{\"type\":\"news-published\"}"),
            RecordedChunk::text(12_000_000, ""),
            RecordedChunk {
                finish_reason: Some("STOP".to_owned()),
                usage: Some(RecordedUsage {
                    prompt_tokens: 10,
                    response_tokens: 4,
                    total_tokens: 14,
                }),
                ..RecordedChunk::text(8_000_000, "]")
            },
        ],
        end: None,
    }
}

/// `tape` with `edit` applied to its JSON, written to `name` in `dir`.
fn write_edited(dir: &TempDir, name: &str, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let mut value = serde_json::to_value(smoke_tape()).unwrap();
    edit(&mut value);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    path
}

/// The error's JSON path and message, when it is `Invalid` for the tape at `path`.
fn invalid_at(error: DocumentError, expected_path: &std::path::Path) -> (String, String) {
    match error {
        DocumentError::Invalid {
            kind: DocumentKind::Tape,
            path,
            at,
            message,
        } => {
            assert_eq!(path, expected_path);
            (at, message)
        }
        other => panic!("expected an invalid tape, got {other:?}"),
    }
}

#[test]
fn a_tape_is_written_as_seed_004_and_reads_back_equal() {
    let dir = TempDir::new("tape-roundtrip");
    let path = dir.join("smoke-1.json");
    let tape = smoke_tape();
    let written = write_tape(&path, &tape).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, text.len() as u64);
    assert!(text.ends_with("}\n"));
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value,
        json!({
            "meta": {
                "label": "smoke-1",
                "model": "gemini-2.5-flash",
                "recordedAt": "2025-12-10T18:00:00.000Z",
                "sdk": "reel 0.1.0",
                "comment": "first smoke test"
            },
            "request": {
                "model": "gemini-2.5-flash",
                "systemInstruction": "SYSTEM ROLE: forecaster",
                "contents": [{"role": "user", "parts": [{"text": "news?"}]}]
            },
            "stream": [
                {"delayNs": 0, "text": "[{\"type\":\"news-published\"}"},
                {"delayNs": 12_000_000, "text": ""},
                {"delayNs": 8_000_000, "text": "]", "finishReason": "STOP",
                 "usage": {"promptTokens": 10, "responseTokens": 4, "totalTokens": 14}}
            ]
        })
    );
    // The keys keep the seed's order: meta, request, stream.
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["meta", "request", "stream"]);
    assert_eq!(read_tape(&path).unwrap(), tape);
    // Atomic: the temporary file was renamed away.
    assert_eq!(dir.names(), ["smoke-1.json"]);
}

#[test]
fn seed_004s_example_tape_reads() {
    let text = r#"{
      "meta": {"label": "smoke-1", "model": "gemini-2.5-flash",
               "recordedAt": "2025-12-10T18:00:00Z", "sdk": "@google/genai",
               "comment": "optional notes", "host": "ci-7"},
      "request": {"model": "gemini-2.5-flash", "systemPrompt": "SYSTEM ROLE: ...",
                  "materialsUsed": ["expert-model-of-x-risk"], "history": [{"type": "x"}]},
      "stream": [
        {"delayNs": 0, "text": "[{\"type\":\"news-published\"}]"},
        {"delayNs": 12000000, "text": ""},
        {"delayNs": 8000000, "text": "[{\"type\":\"news-published\"}]"}
      ]
    }"#;
    let tape = parse_tape(text.as_bytes(), "seed-004.json").unwrap();
    assert_eq!(tape.meta.sdk, "@google/genai");
    assert_eq!(tape.meta.recorded_at.epoch_ms(), 1_765_389_600_000);
    assert_eq!(tape.request["systemPrompt"], "SYSTEM ROLE: ...");
    assert_eq!(
        tape.stream
            .iter()
            .map(|chunk| chunk.delay_ns)
            .collect::<Vec<_>>(),
        [0, 12_000_000, 8_000_000]
    );
    assert_eq!(tape.end, None);
}

#[test]
fn an_ended_tape_says_how_it_ended() {
    let dir = TempDir::new("tape-end");
    let path = dir.join("failed.json");
    let tape = LlmTape {
        stream: vec![RecordedChunk::text(5, "par")],
        end: Some(TapeEnd::Error {
            delay_ns: 7,
            message: "the model API answered 503".to_owned(),
        }),
        ..smoke_tape()
    };
    write_tape(&path, &tape).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value["end"],
        json!({"kind": "error", "delayNs": 7, "message": "the model API answered 503"})
    );
    assert_eq!(read_tape(&path).unwrap(), tape);

    let abandoned = LlmTape {
        end: Some(TapeEnd::Abandoned {
            reason: "no runtime".to_owned(),
        }),
        ..smoke_tape()
    };
    write_tape(&path, &abandoned).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value["end"],
        json!({"kind": "abandoned", "reason": "no runtime"})
    );
    assert_eq!(read_tape(&path).unwrap(), abandoned);
}

#[test]
fn writing_replaces_a_tape_whole_and_creates_its_folder() {
    let dir = TempDir::new("tape-replace");
    let path = dir.join("nested/deeper/call.json");
    write_tape(&path, &smoke_tape()).unwrap();
    let shorter = LlmTape {
        stream: vec![RecordedChunk::text(1, "x")],
        ..smoke_tape()
    };
    write_tape(&path, &shorter).unwrap();
    assert_eq!(read_tape(&path).unwrap(), shorter);
    let names: Vec<String> = std::fs::read_dir(dir.join("nested/deeper"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["call.json"]);
}

#[test]
fn a_missing_stream_is_named() {
    let dir = TempDir::new("tape-missing-stream");
    let path = write_edited(&dir, "t.json", |value| {
        value.as_object_mut().unwrap().remove("stream");
    });
    let error = read_tape(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the tape `{}` is invalid at `stream`: missing field `stream`",
            path.display()
        )
    );
    assert_eq!(
        invalid_at(error, &path),
        ("stream".to_owned(), "missing field `stream`".to_owned())
    );
}

#[test]
fn a_negative_or_fractional_delay_is_refused_with_its_path() {
    let dir = TempDir::new("tape-bad-delay");
    let negative = write_edited(&dir, "negative.json", |value| {
        value["stream"][1]["delayNs"] = json!(-5);
    });
    assert_eq!(
        invalid_at(read_tape(&negative).unwrap_err(), &negative),
        (
            "stream[1].delayNs".to_owned(),
            "invalid value: integer `-5`, expected u64".to_owned()
        )
    );
    let fractional = write_edited(&dir, "fractional.json", |value| {
        value["stream"][2]["delayNs"] = json!(1.5);
    });
    assert_eq!(
        invalid_at(read_tape(&fractional).unwrap_err(), &fractional),
        (
            "stream[2].delayNs".to_owned(),
            "invalid type: floating point `1.5`, expected u64".to_owned()
        )
    );
    let missing = write_edited(&dir, "missing.json", |value| {
        value["stream"][0]
            .as_object_mut()
            .unwrap()
            .remove("delayNs");
    });
    assert_eq!(
        invalid_at(read_tape(&missing).unwrap_err(), &missing),
        (
            "stream[0].delayNs".to_owned(),
            "missing field `delayNs`".to_owned()
        )
    );
}

#[test]
fn values_of_the_wrong_type_are_refused_with_their_path() {
    let dir = TempDir::new("tape-wrong-types");
    type Case = (&'static str, fn(&mut Value), &'static str, &'static str);
    let cases: [Case; 6] = [
        (
            "text.json",
            |v| v["stream"][0]["text"] = json!(5),
            "stream[0].text",
            "invalid type: integer `5`, expected a string",
        ),
        (
            "stream.json",
            |v| v["stream"] = json!({"delayNs": 0}),
            "stream",
            "invalid type: map, expected a sequence",
        ),
        (
            "request.json",
            |v| v["request"] = json!("hello"),
            "request",
            "invalid type: string \"…\", expected a map",
        ),
        (
            "label.json",
            |v| v["meta"]["label"] = json!(null),
            "meta.label",
            "invalid type: null, expected a string",
        ),
        (
            "recorded-at.json",
            |v| v["meta"]["recordedAt"] = json!("yesterday"),
            "meta.recordedAt",
            "not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS.sssZ)",
        ),
        (
            "usage.json",
            |v| v["stream"][2]["usage"]["totalTokens"] = json!("14"),
            "stream[2].usage.totalTokens",
            "invalid type: string \"…\", expected u64",
        ),
    ];
    for (name, edit, at, message) in cases {
        let path = write_edited(&dir, name, edit);
        assert_eq!(
            invalid_at(read_tape(&path).unwrap_err(), &path),
            (at.to_owned(), message.to_owned()),
            "{name}"
        );
    }
}

#[test]
fn an_empty_file_is_empty() {
    let dir = TempDir::new("tape-empty");
    for (name, content) in [("empty.json", ""), ("blank.json", " \n\t\n")] {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let error = read_tape(&path).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("the tape `{}` is empty", path.display())
        );
        assert!(
            matches!(error, DocumentError::Empty { kind: DocumentKind::Tape, path: p } if p == path)
        );
    }
}

#[test]
fn text_that_is_not_json_is_refused_with_line_and_column() {
    let dir = TempDir::new("tape-not-json");
    let trailing = format!("{}\n{{}}", serde_json::to_string(&smoke_tape()).unwrap());
    let cases = [
        ("garbage.json", "hello", 1, 1, "expected value"),
        (
            "torn.json",
            "{\"meta\": {\"label\": \"x\"",
            1,
            22,
            "EOF while parsing an object",
        ),
        ("trailing.json", &trailing, 2, 1, "trailing characters"),
        (
            "bad-line-2.json",
            "{\n  \"meta\": ,\n}",
            2,
            11,
            "expected value",
        ),
    ];
    for (name, content, line, column, message) in cases {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        match read_tape(&path).unwrap_err() {
            DocumentError::NotJson {
                kind: DocumentKind::Tape,
                path: p,
                line: l,
                column: c,
                message: m,
            } => {
                assert_eq!(p, path);
                assert_eq!((l, c, m.as_str()), (line, column, message), "{name}");
            }
            other => panic!("{name}: expected not JSON, got {other:?}"),
        }
    }
    let path = dir.join("garbage.json");
    assert_eq!(
        read_tape(&path).unwrap_err().to_string(),
        format!(
            "the tape `{}` is not JSON: expected value at line 1 column 1",
            path.display()
        )
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = TempDir::new("tape-missing-file");
    let path = dir.join("nope.json");
    let error = read_tape(&path).unwrap_err();
    assert_eq!(error.path(), path);
    match error {
        DocumentError::Io { kind, source, .. } => {
            assert_eq!(kind, DocumentKind::Tape);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}
