//! The `call_screening` example: its assistant answers the phone and holds the whole call
//! with the bundled tape on loopback — every phase where it should be — the bundled
//! recording replays offline CLEAN (`-- --replay`), and the context frames it sends at
//! each turn boundary are exactly these: one frame per boundary, each phase entry asking
//! the model to speak but the last.
//!
//! The bundled tape is what reel records when that assistant talks to the scripted model
//! (`support/screening_model.rs`), regenerated here and compared byte for byte. After an
//! intended change: `REEL_BLESS=1 cargo test --test it example_call_screening`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/call_screening.rs"]
mod call_screening;

use crate::bundled_tape::{self, context_frames};
use crate::scripted_call::{ScriptedCall, talk};

#[path = "../support/screening_model.rs"]
mod screening_model;

use std::collections::BTreeMap;

use call_screening::screening::{Call, converse, screener};
use serde_json::json;

/// The tape's start time: 2025-06-03T09:30:00Z.
const START_MS: u64 = 1_748_943_000_000;

fn expected() -> Call {
    let state = [
        ("call_purpose", json!("Q3 budget")),
        ("call_transferred", json!(true)),
        ("caller_name", json!("Jane Smith")),
        ("caller_org", json!("Marketing")),
        ("is_known_contact", json!(true)),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect::<BTreeMap<_, _>>();
    Call {
        answers: vec![
            "Hello, you've reached Alex Rivera's office. Who's calling, please?".into(),
            "Thank you, Jane.".into(),
            "What is the call about, Jane?".into(),
            "Noted.".into(),
            "Connecting you to Alex now. Have a great call!".into(),
        ],
        phases: vec![
            "determine_purpose".into(),
            "transfer".into(),
            "farewell".into(),
        ],
        state,
    }
}

fn expected_context() -> Vec<(Vec<String>, bool)> {
    let frame =
        |turns: &[&str], prompt: bool| (turns.iter().map(|t| (*t).to_owned()).collect(), prompt);
    let caller = "[Context: caller_name=Jane Smith, caller_org=Marketing]";
    let nav_greeting = "[Navigation]\nCurrent phase: greeting -- Answer on behalf of Alex Rivera \
        and ask who is calling.\nStill needed: caller_name, caller_org\nPossible next:\n  -> \
        determine_purpose: when the caller gives their name";
    let nav_purpose = "[Navigation]\nCurrent phase: determine_purpose -- Ask why they are \
        calling and note it.\nPrevious: greeting (turn 1)\nStill needed: call_purpose\n\
        Possible next:\n  -> transfer: a known contact with a purpose\n  -> take_message: \
        anyone else";
    let nav_transfer = "[Navigation]\nCurrent phase: transfer -- Tell the caller you are \
        connecting them, then transfer the call.\nPrevious: determine_purpose (turn 3)\n\
        Possible next:\n  -> farewell: once transferred";
    let nav_farewell =
        "[Navigation]\nCurrent phase: farewell -- Say goodbye.\nPrevious: transfer (turn 4)";
    vec![
        // At connect: the greeting phase, and the model is asked to answer the phone.
        frame(
            &[
                "Answer on behalf of Alex Rivera and ask who is calling.",
                nav_greeting,
            ],
            true,
        ),
        // The caller named: determine_purpose, its enter prompt computed from the state.
        frame(
            &[
                caller,
                "Ask why they are calling and note it.",
                nav_purpose,
                "I'll ask Jane Smith what the call is about.",
            ],
            true,
        ),
        // A known contact with a purpose: transfer.
        frame(
            &[
                caller,
                "Tell the caller you are connecting them, then transfer the call.",
                nav_transfer,
                "I'll connect the caller to Alex now.",
            ],
            true,
        ),
        // Transferred: farewell, whose own `prompt_on_enter(false)` wins over the defaults.
        frame(&[caller, "Say goodbye.", nav_farewell], false),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_screening_example_talks_to_the_bundled_tape() {
    let outcome = call_screening::run(call_screening::Target::BundledTape { speed: None })
        .await
        .unwrap();
    let call_screening::Outcome::Call(call) = outcome else {
        panic!("a call was asked for");
    };
    assert_eq!(call, expected());
}

#[tokio::test(start_paused = true)]
async fn the_bundled_call_screening_tape_replays_clean_offline() {
    let outcome = call_screening::run(call_screening::Target::Replay)
        .await
        .unwrap();
    let call_screening::Outcome::Replay { frames } = outcome else {
        panic!("a replay was asked for");
    };
    assert!(frames > 0);
    assert_eq!(
        context_frames(&call_screening::bundled_tape().unwrap()),
        expected_context()
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_call_screening_tape_is_what_reel_records_today() {
    let agent = screener();
    let ScriptedCall { call, wire, .. } =
        talk(agent, START_MS, screening_model::play, converse).await;
    assert_eq!(call, expected());
    assert_eq!(context_frames(&wire), expected_context());

    bundled_tape::check_or_bless(
        "call_screening.wire.jsonl",
        &wire,
        call_screening::SCREENING_TAPE,
    );
}
