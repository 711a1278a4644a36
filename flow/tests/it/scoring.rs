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
