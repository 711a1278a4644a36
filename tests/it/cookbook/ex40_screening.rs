//! The `screening` capstone (the seed's `40_screening`): the bundled tape is what reel
//! records today when the agent talks to the scripted model
//! (`support/screening_capstone_model.rs`) — regenerated here byte for byte, with the
//! router's verdict (`screening.resolved.jsonl`, with the place it landed) and the flow
//! (`screening.flow.json`) beside it — the flow refuses both transfers with the exact
//! answer frames, the dispatched verdict lands at the same journal position in the replay
//! as live, and the example's `--replay`, run as a real process, replays it offline CLEAN
//! calling no sub-agent. After an intended change:
//! `REEL_BLESS=1 cargo test --test it cookbook::ex40`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/40_screening.rs"]
mod screening;

#[path = "../../support/screening_capstone_model.rs"]
mod screening_capstone_model;

use super::example_process::check_live_needs_a_key;
use super::support::refused_frames;
use crate::scripted_call::{ScriptedCall, talk};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::example_process::{check_or_bless_text, run_example};
use crate::bundled_tape;
use reel_agents::Resolutions;
use reel_recorder::journal::StateMutation;
use screening::capstone::{converse, screening_agent, screening_flow};
use screening::capstone_replay::{flow_done_sequence, replaying};
use serde_json::{Value, json};

/// The tape's start time: 2025-06-04T10:00:00Z.
const START_MS: u64 = 1_749_031_200_000;

/// The `flow:done` values the journal holds, in order.
fn expected_flow_done() -> Vec<Value> {
    vec![
        json!([]),
        json!(["identify"]),
        json!(["identify", "triage"]),
        json!(["identify", "triage", "route", "end"]),
    ]
}

fn expected_refusals() -> Vec<Value> {
    ["sc-1", "sc-2"]
        .into_iter()
        .map(|id| {
            json!({"toolResponse": {"functionResponses": [{
                "id": id,
                "name": "transfer_call",
                "response": {"error": NEVER_TRANSFER}
            }]}})
        })
        .collect()
}

/// Why the flow refused each transfer.
const NEVER_TRANSFER: &str = "tool `transfer_call` was refused by the flow: \"transfer_call\" is \
                              forbidden until eq(triage:result, \"known\")";

#[tokio::test(start_paused = true)]
async fn the_bundled_screening_tape_is_what_reel_records_today() {
    let log = Resolutions::record();
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = screening_agent(Arc::clone(&calls)).resolutions(&log);
    let ScriptedCall {
        call,
        wire,
        journal,
    } = talk(agent, START_MS, screening_capstone_model::play, converse).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the router ran once");
    assert_eq!(call.completed, ["identify", "triage", "route", "end"]);
    assert_eq!(
        call.refused,
        [
            ("sc-1".to_owned(), NEVER_TRANSFER.to_owned()),
            ("sc-2".to_owned(), NEVER_TRANSFER.to_owned())
        ]
    );
    assert_eq!(
        call.state["caller"],
        json!({"caller_name": "Bob Smith", "organisation": "Acme Warranty", "reason": "warranty"})
    );
    assert_eq!(call.state["triage:result"], json!("spam"));
    assert_eq!(call.state["blocked"], json!(true));
    assert_eq!(refused_frames(&wire), expected_refusals());
    assert_eq!(flow_done_sequence(&journal), expected_flow_done());

    // The same chain replaying what was just recorded writes the same journal, entry by
    // entry: the dispatched verdict at the position it landed live (entry 32, stamped
    // with the time it was stamped with live) — and nothing calls the router.
    let replayed = screening_agent(Arc::clone(&calls))
        .resolutions(&Resolutions::replay(log.entries()))
        .replay(wire.clone())
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the replay called no router"
    );
    let verdict = |journal: &[StateMutation]| {
        journal
            .iter()
            .find(|m| m.key == "triage:result")
            .map(|m| (m.sequence, m.new.clone(), m.timestamp_ms))
    };
    assert_eq!(
        verdict(&replayed.journal),
        Some((32, json!("spam"), START_MS + 840))
    );
    assert_eq!(verdict(&replayed.journal), verdict(&journal));
    // Every entry is the recorded one, times included — the two the flow publishes on
    // seeing the verdict too: live the verdict landed after the lane was done with the
    // turn's last +840 ms event, so the gate saw it at the next frame (the model's `sc-2`
    // call, +1050 ms); the replay releases it at the same lane mark, between those two
    // events, and the gate publishes at the same frame.
    let recorded = journal;
    assert_eq!(recorded.len(), replayed.journal.len());
    assert_eq!(replayed.journal, recorded);
    let published: Vec<(u64, &str, u64)> = recorded
        .iter()
        .filter(|m| m.sequence == 34 || m.sequence == 35)
        .map(|m| (m.sequence, m.key.as_str(), m.timestamp_ms - START_MS))
        .collect();
    assert_eq!(
        published,
        [(34, "flow:done", 1050), (35, "flow:active", 1050)]
    );

    bundled_tape::check_or_bless("screening.wire.jsonl", &wire, screening::SCREENING_TAPE);
    let resolved: String = log
        .entries()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    check_or_bless_text(
        "screening.resolved.jsonl",
        &resolved,
        screening::SCREENING_RESOLUTIONS,
    );
    check_or_bless_text(
        "screening.flow.json",
        &(screening_flow().to_json().unwrap() + "\n"),
        screening::SCREENING_FLOW,
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_screening_tape_replays_clean_offline_calling_nothing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let log = replaying(screening::SCREENING_RESOLUTIONS, "screening.resolved.jsonl").unwrap();
    let outcome = screening_agent(Arc::clone(&calls))
        .resolutions(&log)
        .replay(screening::bundled_tape().unwrap())
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
        refused_frames(&screening::bundled_tape().unwrap()),
        expected_refusals()
    );
}

/// What `--replay` prints after the flow's diagram.
fn replay_report() -> Vec<String> {
    vec![
        format!("refused transfer_call (sc-1): {NEVER_TRANSFER}"),
        format!("refused transfer_call (sc-2): {NEVER_TRANSFER}"),
        "completed identify".to_owned(),
        "triage:result = spam".to_owned(),
        "completed triage".to_owned(),
        "completed route".to_owned(),
        "completed end".to_owned(),
        "router sub-agent calls: 0".to_owned(),
        "replay CLEAN: 9 frames sent, each the recorded one".to_owned(),
    ]
}

#[test]
fn the_screening_example_replays_its_recording_as_a_process() {
    let printed = run_example("40_screening", &["--replay"]);
    let tail: Vec<&str> = printed
        .lines()
        .skip_while(|line| !line.starts_with("refused "))
        .collect();
    assert_eq!(tail, replay_report());
    let head = printed
        .lines()
        .take_while(|line| !line.starts_with("refused "));
    let mermaid: Vec<String> = head.map(str::to_owned).collect();
    assert_eq!(mermaid.join("\n"), screening_flow().to_mermaid());
}

#[test]
fn live_without_a_key_fails_naming_the_missing_variable() {
    check_live_needs_a_key("40_screening", "");
}
