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

use super::example_process::run_example_without_key;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::example_process::{check_or_bless_text, run_example};
use crate::bundled_tape;
use booking::capstone::{booking_agent, booking_flow, converse};
use booking::capstone_replay::{flow_done_sequence, replaying};
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_agents::Resolutions;
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::{Direction, MemoryWireRecorder, WireEntry, WireRecorder};
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

/// The answer frames the flow's refusals sent, as they crossed the wire.
fn refusal_frames(entries: &[WireEntry]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e.dir == Direction::Out)
        .filter_map(|e| serde_json::from_slice::<Value>(&e.payload).ok())
        .filter(|frame| {
            frame
                .pointer("/toolResponse/functionResponses/0/response/error")
                .is_some()
        })
        .collect()
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
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let log = Resolutions::record();
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = booking_agent(Arc::clone(&calls))
        .resolutions(&log)
        .record_wire_to(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_to(journal.clone() as Arc<dyn JournalSink>)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(START_MS))));
    let mut events = agent.subscribe();
    let endpoint = server.endpoint().without_credential();
    let model = async {
        let mut conn = server.accept().await;
        booking_capstone_model::play(&mut conn).await;
    };
    let caller = async {
        let handle = agent.connect(endpoint).await.unwrap();
        let call = converse(&handle, &mut events).await.unwrap();
        tokio::time::advance(Duration::from_millis(400)).await;
        (call, handle.disconnect().await)
    };
    let ((), (call, end)) = tokio::join!(model, caller);
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
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
    assert_eq!(refusal_frames(&recorder.entries()), expected_refusals());
    assert_eq!(flow_done_sequence(&journal.entries()), expected_flow_done());

    bundled_tape::check_or_bless(
        "booking.wire.jsonl",
        &recorder.entries(),
        booking::BOOKING_TAPE,
    );
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
        refusal_frames(&booking::bundled_tape().unwrap()),
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
    let (code, _, stderr) = run_example_without_key("39_booking", &["--live"]);
    assert_eq!(
        stderr,
        format!("error: {}\n", reel_protocol::EndpointError::MissingApiKey),
        "39_booking -- --live with no key"
    );
    assert!(stderr.contains("GEMINI_API_KEY"), "{stderr}");
    assert_eq!(code, Some(1));
}
