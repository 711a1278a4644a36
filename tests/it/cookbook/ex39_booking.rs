//! The `booking` capstone (the seed's `39_booking`): the bundled tape is what reel records
//! today when the agent talks to the scripted model (`support/booking_capstone_model.rs`) —
//! regenerated here byte for byte, with the sub-agent's result
//! (`booking.resolved.jsonl`) and the flow (`booking.flow.json`) beside it — the flow
//! refuses the early booking with the exact answer frame, the steps complete in order, and
//! the example's `--replay`, run as a real process, replays it offline CLEAN calling no
//! sub-agent. After an intended change: `REEL_BLESS=1 cargo test --test it cookbook::ex39`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/39_booking.rs"]
mod booking;

#[path = "../../support/booking_capstone_model.rs"]
mod booking_capstone_model;

use super::example_process::check_live_needs_a_key;
use super::support::refused_frames;
use crate::scripted_call::{ScriptedCall, talk};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::example_process::{check_or_bless_text, run_example};
use crate::bundled_tape;
use booking::capstone::{booking_agent, booking_flow, converse};
use booking::capstone_replay::{flow_done_sequence, replaying};
use reel_agents::Resolutions;
use serde_json::{Value, json};

/// The tape's start time: 2025-06-04T10:00:00Z.
const START_MS: u64 = 1_749_031_200_000;

/// The `flow:done` values the journal holds, in order.
fn expected_flow_done() -> Vec<Value> {
    vec![
        json!([]),
        json!(["collect"]),
        json!(["collect", "check"]),
        json!(["collect", "check", "confirm", "done"]),
    ]
}

fn expected_refusals() -> Vec<Value> {
    vec![json!({"toolResponse": {"functionResponses": [{
        "id": "bk-1",
        "name": "book_table",
        "response": {"error": "tool `book_table` was refused by the flow: \"book_table\" is forbidden until resolved(check)"}
    }]}})]
}

#[tokio::test(start_paused = true)]
async fn the_bundled_booking_tape_is_what_reel_records_today() {
    let log = Resolutions::record();
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = booking_agent(Arc::clone(&calls)).resolutions(&log);
    let ScriptedCall {
        call,
        wire,
        journal,
    } = talk(agent, START_MS, booking_capstone_model::play, converse).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the sub-agent ran once");
    assert_eq!(call.completed, ["collect", "check", "confirm", "done"]);
    assert_eq!(
        call.refused,
        [(
            "bk-1".to_owned(),
            "tool `book_table` was refused by the flow: \"book_table\" is forbidden until \
             resolved(check)"
                .to_owned()
        )]
    );
    assert_eq!(
        call.state["check:result"],
        json!("a table for 4 is free at 19:00")
    );
    assert_eq!(
        call.state["booked"],
        json!({"party_size": 4, "date": "2025-06-05", "time": "19:00", "reference": "R-0412"})
    );
    assert_eq!(refused_frames(&wire), expected_refusals());
    assert_eq!(flow_done_sequence(&journal), expected_flow_done());

    bundled_tape::check_or_bless("booking.wire.jsonl", &wire, booking::BOOKING_TAPE);
    let resolved: String = log
        .entries()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    check_or_bless_text(
        "booking.resolved.jsonl",
        &resolved,
        booking::BOOKING_RESOLUTIONS,
    );
    check_or_bless_text(
        "booking.flow.json",
        &(booking_flow().to_json().unwrap() + "\n"),
        booking::BOOKING_FLOW,
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_booking_tape_replays_clean_offline_calling_nothing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let log = replaying(booking::BOOKING_RESOLUTIONS, "booking.resolved.jsonl").unwrap();
    let outcome = booking_agent(Arc::clone(&calls))
        .resolutions(&log)
        .replay(booking::bundled_tape().unwrap())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(outcome.divergences.is_empty(), "{:?}", outcome.divergences);
    assert!(
        outcome.resolver_drift.is_empty(),
        "{:?}",
        outcome.resolver_drift
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a replay calls no sub-agent"
    );
    assert_eq!(flow_done_sequence(&outcome.journal), expected_flow_done());
    assert_eq!(
        refused_frames(&booking::bundled_tape().unwrap()),
        expected_refusals()
    );
}

#[test]
fn the_booking_example_replays_its_recording_as_a_process() {
    let printed = run_example("39_booking", &["--replay"]);
    let tail: Vec<&str> = printed
        .lines()
        .skip_while(|line| !line.starts_with("refused "))
        .collect();
    assert_eq!(tail, replay_report());
    let head = printed
        .lines()
        .take_while(|line| !line.starts_with("refused "));
    let mermaid: Vec<String> = head.map(str::to_owned).collect();
    assert_eq!(mermaid.join("\n"), booking_flow().to_mermaid());
}

/// What `--replay` prints after the flow's diagram.
fn replay_report() -> Vec<&'static str> {
    vec![
        "refused book_table (bk-1): tool `book_table` was refused by the flow: \"book_table\" \
         is forbidden until resolved(check)",
        "completed collect",
        "check:result = a table for 4 is free at 19:00",
        "completed check",
        "completed confirm",
        "completed done",
        "availability sub-agent calls: 0",
        "replay CLEAN: 7 frames sent, each the recorded one",
    ]
}

#[test]
fn live_without_a_key_fails_naming_the_missing_variable() {
    check_live_needs_a_key("39_booking", "");
}
