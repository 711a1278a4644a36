//! The JSON Schemas: what the writers write validates; a wrong type does not.

use crate::common;

use bytes::Bytes;
use common::TempFile;
use reel_recorder::journal::{FileJournalSink, JournalSink, StateMutation};
use reel_recorder::schema::{journal_entry_schema, wire_entry_schema};
use reel_recorder::wire_file::FileWireRecorder;
use reel_recorder::wire_log::{CloseMark, Direction, Source, WireEntry, WireRecorder};
use serde_json::{Value, json};

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema).unwrap()
}

/// Every line of the file, parsed.
fn lines(file: &TempFile) -> Vec<Value> {
    file.text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn the_schemas_are_draft_2020_12_and_require_seed_000s_fields() {
    let wire = wire_entry_schema();
    assert_eq!(
        wire["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(wire["title"], "WireEntry");
    assert_eq!(
        wire["required"],
        json!(["seq", "dir", "ts_ms", "payload_b64"])
    );
    assert_eq!(
        wire["properties"]["payload_b64"],
        json!({
            "type": "string",
            "description": "The frame's bytes exactly as sent or received.",
            "contentEncoding": "base64"
        })
    );
    let journal = journal_entry_schema();
    assert_eq!(journal["title"], "StateMutation");
    assert_eq!(
        journal["required"],
        json!([
            "sequence",
            "key",
            "old",
            "new",
            "origin",
            "timestamp_ms",
            "delta"
        ])
    );
}

#[test]
fn every_line_a_file_wire_recorder_writes_validates() {
    let file = TempFile::new("schema-wire");
    {
        let recorder = FileWireRecorder::create(file.path()).unwrap();
        recorder.record(WireEntry::frame(
            1,
            Direction::Out,
            1_718_000_000_000,
            Bytes::from_static(br#"{"setup":{}}"#),
            None,
            false,
        ));
        recorder.record(WireEntry {
            source: Some(Source::App),
            ..WireEntry::frame(
                2,
                Direction::Out,
                1_718_000_000_001,
                &b"{}"[..],
                None,
                false,
            )
        });
        recorder.record(WireEntry::close_mark(
            3,
            1_718_000_000_002,
            None,
            CloseMark {
                code: Some(1000),
                reason: Some("go_away".to_owned()),
                client: true,
            },
        ));
        recorder.record(WireEntry::frame(
            4,
            Direction::In,
            1_718_000_000_003,
            &b"{}"[..],
            Some(2),
            true,
        ));
    }
    let validator = validator(&wire_entry_schema());
    let lines = lines(&file);
    assert_eq!(lines.len(), 4);
    for line in &lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| e.to_string()).collect();
        assert_eq!(errors, Vec::<String>::new(), "{line}");
    }
}

#[test]
fn every_line_a_file_journal_sink_writes_validates() {
    let file = TempFile::new("schema-journal");
    {
        let sink = FileJournalSink::create(file.path()).unwrap();
        for (sequence, old, new) in [
            (1, Value::Null, json!("London")),
            (2, json!("London"), json!({"city": "Paris", "days": [1, 2]})),
            (3, json!({"city": "Paris"}), Value::Null),
        ] {
            sink.record(&StateMutation {
                sequence,
                key: "app:last_city".to_owned(),
                old,
                new,
                origin: "set".to_owned(),
                timestamp_ms: 1_718_000_000_456,
                delta: sequence == 2,
            });
        }
    }
    let validator = validator(&journal_entry_schema());
    let lines = lines(&file);
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert!(validator.is_valid(line), "{line}");
    }
}

#[test]
fn wire_lines_of_the_wrong_shape_do_not_validate() {
    let validator = validator(&wire_entry_schema());
    let good = json!({"seq": 1, "dir": "out", "ts_ms": 5, "payload_b64": "e30="});
    assert!(validator.is_valid(&good));
    let bad = [
        json!({"seq": "1", "dir": "out", "ts_ms": 5, "payload_b64": "e30="}),
        json!({"seq": -1, "dir": "out", "ts_ms": 5, "payload_b64": "e30="}),
        json!({"seq": 1, "dir": "sideways", "ts_ms": 5, "payload_b64": "e30="}),
        json!({"seq": 1, "dir": "out", "ts_ms": 5, "payload_b64": [1, 2]}),
        json!({"seq": 1, "dir": "out", "ts_ms": 5}),
        json!({"seq": 1, "dir": "out", "ts_ms": 5, "payload_b64": "", "source": "tool"}),
        json!({"seq": 1, "dir": "in", "ts_ms": 5, "payload_b64": "", "close": {"code": 1000}}),
        json!({"seq": 1, "dir": "in", "ts_ms": 5, "payload_b64": "", "close": {"code": 70000, "client": true}}),
    ];
    for line in &bad {
        assert!(!validator.is_valid(line), "{line} should not validate");
        // And the reader agrees.
        assert!(
            serde_json::from_value::<WireEntry>(line.clone()).is_err(),
            "{line}"
        );
    }
}

#[test]
fn journal_lines_of_the_wrong_shape_do_not_validate() {
    let validator = validator(&journal_entry_schema());
    let good = json!({"sequence":7,"key":"app:last_city","old":null,"new":"London","origin":"set","timestamp_ms":1_718_000_000_456_u64,"delta":false});
    assert!(validator.is_valid(&good));
    let mut wrong_delta = good.clone();
    wrong_delta["delta"] = json!("no");
    let mut wrong_key = good.clone();
    wrong_key["key"] = json!(42);
    let mut missing_new = good.clone();
    missing_new.as_object_mut().unwrap().remove("new");
    for line in [wrong_delta, wrong_key, missing_new] {
        assert!(!validator.is_valid(&line), "{line} should not validate");
        assert!(
            serde_json::from_value::<StateMutation>(line.clone()).is_err(),
            "{line}"
        );
    }
}
