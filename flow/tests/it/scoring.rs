//! Scoring entries already read: how the journal and the wire log are merged.

use reel_flow::score::score_entries;
use reel_flow::{Flow, Guard, Verdict};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::{Value, json};

fn frame(seq: u64, dir: Direction, ts: u64, body: Value) -> WireEntry {
    WireEntry::frame(
        seq,
        dir,
        ts,
        serde_json::to_vec(&body).unwrap(),
        None,
        false,
    )
}

fn call(seq: u64, ts: u64, id: &str, name: &str) -> WireEntry {
    frame(
        seq,
        Direction::In,
        ts,
        json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": {}}]}}),
    )
}

fn answer(seq: u64, ts: u64, id: &str, name: &str, response: Value) -> WireEntry {
    frame(
        seq,
        Direction::Out,
        ts,
        json!({"toolResponse": {"functionResponses": [{"id": id, "name": name, "response": response}]}}),
    )
}

fn write(sequence: u64, ts: u64, key: &str, new: Value, delta: bool) -> StateMutation {
    StateMutation {
        sequence,
        key: key.into(),
        old: Value::Null,
        new,
        origin: "set".into(),
        timestamp_ms: ts,
        delta,
    }
}

/// verify (lookup_account sets `verified` from its delta) → pay (charge_card).
fn flow() -> reel_flow::CompiledFlow {
    Flow::new()
        .step("verify")
        .allow(["lookup_account"])
        .done(Guard::is_true("verified"))
        .step("pay")
        .after("verify")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .compile()
        .unwrap()
}

#[test]
fn a_tools_own_writes_count_from_its_response_not_its_call() {
    // lookup_account at 100 writes `verified` (delta, at 100); charge_card in the same
    // millisecond, before the response, would be a violation; after it, is admitted.
    let entries = [
        call(5, 100, "a", "lookup_account"),
        call(6, 100, "b", "charge_card"),
        answer(7, 100, "a", "lookup_account", json!({"ok": true})),
        call(8, 100, "c", "charge_card"),
        answer(9, 100, "b", "charge_card", json!({"error": "declined"})),
        answer(10, 100, "c", "charge_card", json!({"charged": 20})),
    ];
    let journal = [write(1, 100, "verified", json!(true), true)];
    let score = score_entries(&entries, &journal, &flow());
    assert_eq!(score.tool_calls, 3);
    assert_eq!(
        score
            .violations
            .iter()
            .map(|v| (v.seq, v.reason.as_str()))
            .collect::<Vec<_>>(),
        [(
            6,
            "\"charge_card\" is not allowed by any active step (active: verify)"
        )]
    );
    assert_eq!(
        score.verdicts.iter().map(|v| v.verdict).collect::<Vec<_>>(),
        [Verdict::Done, Verdict::Done]
    );
    assert!(score.complete);
}

#[test]
fn state_written_before_a_call_counts_and_a_background_ack_is_not_a_return() {
    let entries = [
        call(3, 200, "a", "charge_card"),
        frame(
            4,
            Direction::Out,
            200,
            json!({"toolResponse": {"functionResponses": [
                {"id": "a", "name": "charge_card", "response": {"status": "running"}, "willContinue": true}
            ]}}),
        ),
        call(5, 300, "b", "charge_card"),
        frame(
            6,
            Direction::In,
            300,
            json!({"toolCallCancellation": {"ids": ["b"]}}),
        ),
    ];
    // `verified` set by the application at 250 (not a tool's delta).
    let journal = [write(1, 250, "verified", json!(true), false)];
    let score = score_entries(&entries, &journal, &flow());
    assert_eq!(
        score.violations.iter().map(|v| v.seq).collect::<Vec<_>>(),
        [3]
    );
    assert_eq!(
        score.verdicts.iter().map(|v| v.verdict).collect::<Vec<_>>(),
        [Verdict::Done, Verdict::Active],
        "neither the acknowledgement nor the cancelled call is a return without error"
    );
    assert_eq!(score.unmet_requirements, Vec::<String>::new());
    assert!(
        !score.complete,
        "no require, no terminal: every step must be done"
    );
}

#[test]
fn a_recording_on_disk_is_scored_with_the_journal_beside_it() {
    let dir = std::env::temp_dir().join(format!("reel-flow-score-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (wire, journal) = (dir.join("call.wire.jsonl"), dir.join("call.journal.jsonl"));
    let lines = |items: Vec<String>| items.join("\n") + "\n";
    let entries = [
        frame(1, Direction::Out, 10, json!({"setup": {}})),
        call(2, 100, "a", "charge_card"),
        answer(3, 100, "a", "charge_card", json!({"charged": 5})),
        call(4, 300, "b", "lookup_account"),
    ];
    std::fs::write(
        &wire,
        lines(
            entries
                .iter()
                .map(|e| serde_json::to_string(e).unwrap())
                .collect(),
        ),
    )
    .unwrap();
    assert_eq!(
        reel_flow::score::journal_beside(&wire),
        None,
        "no journal yet"
    );
    std::fs::write(
        &journal,
        lines(vec![
            serde_json::to_string(&write(1, 200, "verified", json!(true), false)).unwrap(),
        ]),
    )
    .unwrap();
    assert_eq!(
        reel_flow::score::journal_beside(&wire),
        Some(journal.clone())
    );

    let score = reel_flow::score::score_recording(&wire, Some(&journal), &flow()).unwrap();
    assert_eq!(
        score
            .violations
            .iter()
            .map(|v| (v.seq, v.tool.as_str()))
            .collect::<Vec<_>>(),
        [(2, "charge_card"), (4, "lookup_account")],
        "charge_card before verify; lookup_account after it"
    );
    assert_eq!(
        (score.tool_calls, score.journal_entries, score.complete),
        (2, 1, true),
        "pay latched done on the earlier charge once verify was"
    );
    let missing = reel_flow::score::score_recording(&dir.join("none.wire.jsonl"), None, &flow());
    assert!(matches!(
        missing,
        Err(reel_flow::score::ScoreError::Recording(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
