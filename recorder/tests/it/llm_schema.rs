//! The tape and cassette JSON Schemas: files the writers write validate, the documented
//! example validates, and what the readers refuse the schemas refuse too.

use crate::llm_support;

use llm_support::TempDir;
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES, Interaction};
use reel_recorder::llm_tape::{
    LlmTape, RecordedChunk, RecordedUsage, TapeEnd, TapeMeta, Timestamp, parse_tape, write_tape,
};
use reel_recorder::schema::{cassette_schema, llm_tape_schema};
use serde_json::{Value, json};

/// A 2020-12 validator that also checks `format` (so `recordedAt` must be a date-time).
fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .unwrap()
}

fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|error| error.to_string())
        .collect()
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn tape(end: Option<TapeEnd>) -> LlmTape {
    LlmTape {
        meta: TapeMeta {
            label: "extractor-001".to_owned(),
            model: "gemini-2.5-flash".to_owned(),
            recorded_at: Timestamp::from_epoch_ms(1_718_000_000_000),
            sdk: "reel 0.1.0".to_owned(),
            comment: None,
        },
        request: json!({"model": "gemini-2.5-flash", "contents": []})
            .as_object()
            .unwrap()
            .clone(),
        stream: vec![
            RecordedChunk::text(0, "{\"city\":"),
            RecordedChunk {
                finish_reason: Some("STOP".to_owned()),
                usage: Some(RecordedUsage {
                    prompt_tokens: 1,
                    response_tokens: 2,
                    total_tokens: 3,
                }),
                ..RecordedChunk::text(250_000, "\"Paris\"}")
            },
        ],
        end,
    }
}

#[test]
fn the_schemas_are_draft_2020_12_and_require_the_seeds_fields() {
    let tape = llm_tape_schema();
    assert_eq!(
        tape["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(tape["title"], "LlmTape");
    assert_eq!(tape["required"], json!(["meta", "request", "stream"]));
    assert_eq!(
        tape["$defs"]["TapeMeta"]["required"],
        json!(["label", "model", "recordedAt", "sdk"])
    );
    assert_eq!(
        tape["$defs"]["TapeMeta"]["properties"]["recordedAt"]["$ref"],
        "#/$defs/Timestamp"
    );
    assert_eq!(tape["$defs"]["Timestamp"]["format"], "date-time");
    assert_eq!(
        tape["$defs"]["RecordedChunk"]["required"],
        json!(["delayNs", "text"])
    );
    assert_eq!(
        tape["$defs"]["RecordedChunk"]["properties"]["delayNs"]["minimum"],
        0
    );
    let cassette = cassette_schema();
    assert_eq!(
        cassette["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(cassette["title"], "CassetteFile");
    assert_eq!(cassette["required"], json!(["version", "interactions"]));
    assert_eq!(
        cassette["$defs"]["Interaction"]["required"],
        json!(["request", "response", "recordedAt"])
    );
}

#[test]
fn written_tapes_and_seed_004s_example_validate() {
    let dir = TempDir::new("schema-tapes");
    let validator = validator(&llm_tape_schema());
    let ends = [
        None,
        Some(TapeEnd::Error {
            delay_ns: 3,
            message: "503".to_owned(),
        }),
        Some(TapeEnd::Abandoned {
            reason: "dropped".to_owned(),
        }),
    ];
    for (i, end) in ends.into_iter().enumerate() {
        let path = dir.join(&format!("tape-{i}.json"));
        write_tape(&path, &tape(end)).unwrap();
        let value = read_json(&path);
        assert_eq!(errors(&validator, &value), Vec::<String>::new(), "{value}");
    }
    let seed = json!({
        "meta": {"label": "smoke-1", "model": "gemini-2.5-flash",
                 "recordedAt": "2025-12-10T18:00:00Z", "sdk": "@google/genai",
                 "comment": "optional notes"},
        "request": {"model": "gemini-2.5-flash", "systemPrompt": "SYSTEM ROLE: ...",
                    "history": [{"type": "news-published"}]},
        "stream": [
            {"delayNs": 0, "text": "[]"},
            {"delayNs": 12_000_000, "text": ""}
        ]
    });
    assert_eq!(errors(&validator, &seed), Vec::<String>::new());
}

#[test]
fn written_cassettes_validate() {
    let dir = TempDir::new("schema-cassettes");
    let path = dir.join("c.json");
    let validator = validator(&cassette_schema());
    let t = tape(None);
    let cassette = CassetteFile {
        version: 1,
        interactions: vec![
            Interaction {
                request: t.request.clone(),
                response: t.stream.clone(),
                recorded_at: t.meta.recorded_at,
                usage: t.stream[1].usage,
                duration_ns: Some(250_000),
                failure: None,
            },
            Interaction {
                request: t.request.clone(),
                response: Vec::new(),
                recorded_at: "2025-12-10T18:00:00+01:00".parse().unwrap(),
                usage: None,
                duration_ns: None,
                failure: None,
            },
        ],
    };
    cassette.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    assert_eq!(errors(&validator, &read_json(&path)), Vec::<String>::new());
    CassetteFile::new()
        .write(&path, DEFAULT_MAX_CASSETTE_BYTES)
        .unwrap();
    assert_eq!(errors(&validator, &read_json(&path)), Vec::<String>::new());
}

#[test]
fn tapes_the_reader_refuses_the_schema_refuses() {
    let validator = validator(&llm_tape_schema());
    let good = serde_json::to_value(tape(None)).unwrap();
    assert!(validator.is_valid(&good));
    let edits: [fn(&mut Value); 8] = [
        |v| {
            v.as_object_mut().unwrap().remove("stream");
        },
        |v| v["stream"][0]["delayNs"] = json!(-5),
        |v| v["stream"][0]["delayNs"] = json!(1.5),
        |v| v["stream"][0]["text"] = json!(5),
        |v| v["request"] = json!("hello"),
        |v| v["meta"]["recordedAt"] = json!("yesterday"),
        |v| v["end"] = json!({"kind": "exploded"}),
        |v| {
            v["meta"].as_object_mut().unwrap().remove("sdk");
        },
    ];
    for edit in edits {
        let mut bad = good.clone();
        edit(&mut bad);
        assert!(!validator.is_valid(&bad), "{bad} should not validate");
        let bytes = serde_json::to_vec(&bad).unwrap();
        assert!(parse_tape(&bytes, "bad.json").is_err(), "{bad}");
    }
}

#[test]
fn cassettes_the_reader_refuses_the_schema_refuses() {
    let validator = validator(&cassette_schema());
    let good = json!({"version": 1, "interactions": [
        {"request": {"model": "m"}, "response": [{"delayNs": 0, "text": "a"}],
         "recordedAt": "2025-12-10T18:00:00Z"}
    ]});
    assert!(validator.is_valid(&good));
    let dir = TempDir::new("schema-cassettes-bad");
    let path = dir.join("bad.json");
    let edits: [fn(&mut Value); 5] = [
        |v| v["version"] = json!(3),
        |v| v["interactions"] = json!({}),
        |v| v["interactions"][0]["recordedAt"] = json!("noon"),
        |v| v["interactions"][0]["response"][0]["delayNs"] = json!("0"),
        |v| {
            v["interactions"][0]
                .as_object_mut()
                .unwrap()
                .remove("request");
        },
    ];
    for edit in edits {
        let mut bad = good.clone();
        edit(&mut bad);
        assert!(!validator.is_valid(&bad), "{bad} should not validate");
        std::fs::write(&path, serde_json::to_vec(&bad).unwrap()).unwrap();
        assert!(
            CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).is_err(),
            "{bad}"
        );
    }
}
