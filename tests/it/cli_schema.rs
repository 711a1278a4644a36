//! `reel schema`: the JSON Schemas of the recording formats, as JSON.

use crate::cli_support;

use cli_support::reel;
use serde_json::Value;

#[test]
fn schema_prints_both_formats_or_one() {
    let (code, stdout, stderr) = reel(&["schema"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let both: Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&String> = both.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["wire_entry", "journal_entry", "tape", "cassette", "trace"]
    );
    assert_eq!(
        both["wire_entry"],
        reel_recorder::schema::wire_entry_schema()
    );
    assert_eq!(
        both["journal_entry"],
        reel_recorder::schema::journal_entry_schema()
    );

    let (code, stdout, _) = reel(&["schema", "wire"]);
    assert_eq!(code, 0);
    let wire: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(wire["title"], "WireEntry");
    assert_eq!(
        wire["properties"]["payload_b64"]["contentEncoding"],
        "base64"
    );

    let (code, stdout, _) = reel(&["schema", "journal"]);
    assert_eq!(code, 0);
    let journal: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(journal["title"], "StateMutation");

    let (code, stdout, stderr) = reel(&["schema", "reel"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains("invalid value 'reel'"), "{stderr}");
}

#[test]
fn schema_prints_the_tape_and_cassette_formats() {
    let (code, stdout, stderr) = reel(&["schema"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let all: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(all["tape"], reel_recorder::schema::llm_tape_schema());
    assert_eq!(all["cassette"], reel_recorder::schema::cassette_schema());

    let (code, stdout, stderr) = reel(&["schema", "tape"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let tape: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(tape, reel_recorder::schema::llm_tape_schema());
    assert_eq!(tape["title"], "LlmTape");
    assert_eq!(
        tape["required"],
        serde_json::json!(["meta", "request", "stream"])
    );

    let (code, stdout, stderr) = reel(&["schema", "cassette"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let cassette: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(cassette, reel_recorder::schema::cassette_schema());
    assert_eq!(cassette["title"], "CassetteFile");
}

#[test]
fn schema_prints_the_trace_format() {
    let (code, stdout, stderr) = reel(&["schema", "trace"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let trace: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(trace, reel_recorder::schema::trace_schema());
    assert_eq!(trace["title"], "AgentTrace");
    assert_eq!(
        trace["required"],
        serde_json::json!([
            "version",
            "traceName",
            "capturedAt",
            "agentName",
            "entries",
            "performance"
        ])
    );
    let (_, stdout, _) = reel(&["schema"]);
    let all: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(all["trace"], trace);
}
