//! The `governed_flow` example: its agent holds the whole call with the bundled tape on
//! loopback — the flow refusing the card before the caller is verified and once it was
//! charged — the bundled recording replays offline CLEAN (`-- --replay`), and the steering
//! it sends at each turn boundary is exactly this: the active step's posture (and ground
//! line) after the persona, as the system instruction.
//!
//! The bundled tape is what reel records when that agent talks to the scripted model
//! (`support/governed_model.rs`), regenerated here and compared byte for byte. After an
//! intended change: `REEL_BLESS=1 cargo test --test it cookbook::ex37`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/37_governed_flow.rs"]
mod governed_flow;

use super::example_process::check_live_needs_a_key;
use super::example_process::run_example_without_key;
use crate::bundled_tape;
use crate::scripted_call::{ScriptedCall, talk};

#[path = "../../support/governed_model.rs"]
mod governed_model;

use governed_flow::governed::{Call, converse, governed_collector};
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::json;

/// The tape's start time: 2025-06-04T10:00:00Z.
const START_MS: u64 = 1_749_031_200_000;

const PERSONA: &str =
    "You are Sam, a courteous collections agent for Reel Recovery. Never threaten, never mislead.";

fn expected() -> Call {
    let state = [
        ("charged", json!(250)),
        ("flow:active", json!([])),
        (
            "flow:done",
            json!(["verify", "negotiate", "take_payment", "close"]),
        ),
        ("identity_verified", json!(true)),
        ("ptp_amount", json!(250)),
        ("ptp_date", json!("Friday")),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    let explanation = serde_json::from_value(json!({
        "active": [],
        "done": ["verify", "negotiate", "take_payment", "close"],
        "blocked_tools": {
            "charge_card": "\"charge_card\" may run once and already ran (frame 25)",
            "lookup_account": "\"lookup_account\" is not allowed by any active step (no step is active)",
            "record_promise": "\"record_promise\" is not allowed by any active step (no step is active)"
        },
        "missing_requirements": [],
        "complete": true
    }))
    .unwrap();
    Call {
        answers: vec![
            "Before anything else, could you confirm your full name and date of birth?".into(),
            "Thank you, Ada, you're verified. You owe $1,250; what can you pay?".into(),
            "I've noted $250 on Friday. Shall I charge your card now?".into(),
            "Done: $250 charged. Thank you, Ada!".into(),
            "Your card was already charged once; you're all set. Goodbye!".into(),
        ],
        refused: vec![
            (
                "gf-1".into(),
                "tool `charge_card` was refused by the flow: \"charge_card\" is forbidden until \
                 is_true(ptp_confirmed)"
                    .into(),
            ),
            (
                "gf-5".into(),
                "tool `charge_card` was refused by the flow: \"charge_card\" may run once and \
                 already ran (frame 25)"
                    .into(),
            ),
        ],
        explanation: Some(explanation),
        state,
    }
}

/// The system instructions the runtime sent after the setup's.
fn expected_steering() -> Vec<String> {
    vec![
        format!("{PERSONA}\n\nVerify the caller's identity before anything else."),
        format!(
            "{PERSONA}\n\nNegotiate an affordable payment; record the promise to pay.\n\
             Balance due: $1250"
        ),
        format!("{PERSONA}\n\nTake the payment the caller promised."),
        PERSONA.to_owned(),
    ]
}

/// The system instruction updates on a recording (the runtime's: the application sends
/// none).
fn steering(entries: &[WireEntry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.dir == Direction::Out)
        .filter_map(|e| {
            let frame: serde_json::Value = serde_json::from_slice(&e.payload).ok()?;
            let text = frame.pointer("/contextUpdate/systemInstruction/parts/0/text")?;
            Some(text.as_str()?.to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_governed_flow_example_talks_to_the_bundled_tape() {
    let outcome = governed_flow::run(governed_flow::Target::BundledTape { speed: None })
        .await
        .unwrap();
    let governed_flow::Outcome::Call(call) = outcome else {
        panic!("a call was asked for");
    };
    assert_eq!(call, expected());
}

#[tokio::test(start_paused = true)]
async fn the_bundled_governed_flow_tape_replays_clean_offline() {
    let outcome = governed_flow::run(governed_flow::Target::Replay)
        .await
        .unwrap();
    let governed_flow::Outcome::Replay { frames } = outcome else {
        panic!("a replay was asked for");
    };
    assert!(frames > 0);
    assert_eq!(
        steering(&governed_flow::bundled_tape().unwrap()),
        expected_steering()
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_governed_flow_tape_is_what_reel_records_today() {
    let agent = governed_collector();
    let ScriptedCall { call, wire, .. } =
        talk(agent, START_MS, governed_model::play, converse).await;
    assert_eq!(call, expected());
    assert_eq!(steering(&wire), expected_steering());

    bundled_tape::check_or_bless(
        "governed_flow.wire.jsonl",
        &wire,
        governed_flow::GOVERNED_TAPE,
    );
}

#[test]
fn live_without_a_key_fails_naming_the_missing_variable() {
    check_live_needs_a_key("37_governed_flow", "");
}

#[test]
fn the_command_line_names_an_offline_run_or_the_live_api() {
    use governed_flow::live::{Governed, governed_target};
    use governed_flow::replayed_call::{Target, target_from};
    let parse = |args: &[&str]| governed_target(args.iter().map(|a| a.to_string()), target_from);
    assert_eq!(
        parse(&[]),
        Ok(Governed::Offline(Target::BundledTape { speed: Some(1.0) }))
    );
    assert_eq!(parse(&["--replay"]), Ok(Governed::Offline(Target::Replay)));
    assert_eq!(
        parse(&["--speed", "0"]),
        Ok(Governed::Offline(Target::BundledTape { speed: None }))
    );
    assert_eq!(parse(&["--live"]), Ok(Governed::Live { record: None }));
    assert_eq!(
        parse(&["--live", "--record", "debt.wire.jsonl"]),
        Ok(Governed::Live {
            record: Some("debt.wire.jsonl".into())
        })
    );
    assert_eq!(
        parse(&["--live", "--replay"]),
        Err("--replay runs the bundled recording: it does not go with --live".to_owned())
    );
    assert_eq!(
        parse(&["--record", "debt.wire.jsonl"]),
        Err("--record records live calls: add --live".to_owned())
    );
    assert_eq!(
        parse(&["--live", "--record"]),
        Err("--record needs a path".to_owned())
    );
}

#[test]
fn live_with_an_offline_argument_is_refused_as_a_bad_command_line() {
    let (code, _, stderr) =
        run_example_without_key("37_governed_flow", &["--live", "--speed", "4"]);
    assert_eq!(
        stderr,
        "error: --speed runs the bundled recording: it does not go with --live\n"
    );
    assert_eq!(code, Some(2));
}
