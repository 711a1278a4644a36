//! The `debt_collection` example: its agent holds the whole call with the bundled tape on
//! loopback — every phase where it should be — the bundled recording replays offline CLEAN
//! (`-- --replay`), and the context frames it sends at each turn boundary are exactly these:
//! one frame per boundary, held for the caller's next line unless the model must answer.
//!
//! The bundled tape is what reel records when that agent talks to the scripted model
//! (`support/debt_model.rs`): regenerated here and compared byte for byte, so it never
//! drifts from the code. After an intended change: `REEL_BLESS=1 cargo test --test it
//! example_debt_collection`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/debt_collection.rs"]
mod debt_collection;

use crate::bundled_tape::{self, context_frames};
use crate::scripted_call::{ScriptedCall, talk};

#[path = "../support/debt_model.rs"]
mod debt_model;

use std::collections::BTreeMap;

use debt_collection::collector::{CALLER_TURNS, Call, converse, debt_collector};
use serde_json::{Value, json};

/// The tape's start time: 2025-06-02T15:00:00Z.
const START_MS: u64 = 1_748_876_400_000;

const DISCLOSURE: &str = "Say this is an attempt to collect a debt and that any information \
                          obtained will be used for that purpose; then record disclosure_given.";

fn expected() -> Call {
    let state: BTreeMap<String, Value> = [
        ("caller_name", json!("Ada Lovelace")),
        ("debt_acknowledged", json!(true)),
        ("disclosure_given", json!(true)),
        ("emotional_state", json!("angry")),
        ("identity_verified", json!(true)),
        ("payment_plan", json!("5 x $250")),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    Call {
        answers: vec![
            "Hi, this is Sam from Reel Recovery. This is an attempt to collect a debt, and any \
             information obtained will be used for that purpose.Is now a good time to talk?"
                .into(),
            "Before we go on, could you confirm your full name and date of birth?".into(),
            "Thank you, Ada, you're verified.".into(),
            "Your account shows a balance of $1,250 owed to Acme Bank. Do you acknowledge this \
             debt?"
                .into(),
            "I understand, and I'm sorry this is stressful.".into(),
            "I hear you. Can you confirm that you owe the $1,250?".into(),
            "Thank you. Let's find a plan that works for you.".into(),
            "Five monthly payments of $250. I'll set that up.".into(),
            "You're all set: five payments of $250 starting next month. Thank you, Ada. Goodbye!"
                .into(),
        ],
        phases: vec![
            "verify_identity".into(),
            "inform_debt".into(),
            "negotiate".into(),
            "close".into(),
        ],
        state,
        navigation: Some(
            "[Navigation]\nCurrent phase: close -- Confirm the plan and end the call politely.\n\
             Previous: negotiate (turn 7)"
                .into(),
        ),
    }
}

/// The context frames the agent sends, in order: each frame's model turns and whether it
/// asks the model to answer.
fn expected_context() -> Vec<(Vec<String>, bool)> {
    let frame =
        |turns: &[&str], prompt: bool| (turns.iter().map(|t| (*t).to_owned()).collect(), prompt);
    let nav_disclosure = "[Navigation]\nCurrent phase: disclosure -- Say this is an attempt to \
        collect a debt and that any information obtained will be used for that purpose; then \
        record disclosure_given.\nStill needed: disclosure_given\nPossible next:\n  -> \
        verify_identity: once the disclosure is given";
    let nav_verify = "[Navigation]\nCurrent phase: verify_identity -- Verify the caller's \
        identity: full name and date of birth.\nPrevious: disclosure (turn 0)\nStill needed: \
        caller_name, identity_verified\nPossible next:\n  -> inform_debt: once the identity is \
        verified";
    let nav_inform = "[Navigation]\nCurrent phase: inform_debt -- Tell the caller the balance \
        owed to Acme Bank and ask them to acknowledge it.\nPrevious: verify_identity (turn 2)\n\
        Still needed: debt_acknowledged\nPossible next:\n  -> negotiate: once the debt is \
        acknowledged";
    let nav_negotiate = "[Navigation]\nCurrent phase: negotiate -- Offer a payment plan the \
        caller can afford.\nPrevious: inform_debt (turn 6)\nStill needed: payment_plan\n\
        Possible next:\n  -> close: once a plan is agreed";
    let nav_close = "[Navigation]\nCurrent phase: close -- Confirm the plan and end the call \
        politely.\nPrevious: negotiate (turn 7)";
    let angry = "[Context: caller_name=Ada Lovelace, emotional_state=angry]\nIMPORTANT: Use \
        extra empathy. Never threaten.";
    let nudge = "I still need to collect: debt_acknowledged.";
    vec![
        // Queued when the initial phase was entered (before `connect` returned), sent
        // with the caller's greeting.
        frame(&[DISCLOSURE, nav_disclosure], false),
        // The disclosure given: verify_identity's entry, its enter prompt answered at once.
        frame(
            &[
                "Verify the caller's identity: full name and date of birth.",
                nav_verify,
                "I'll now verify who I'm speaking with.",
            ],
            true,
        ),
        // Verified: inform_debt's entry, its enter prompt computed from the state.
        frame(
            &[
                "[Context: caller_name=Ada Lovelace]\nBalance: $1250 owed to Acme Bank.",
                "Tell the caller the balance owed to Acme Bank and ask them to acknowledge it.",
                nav_inform,
                "Thank you, Ada Lovelace. I'll explain the account now.",
            ],
            true,
        ),
        // Two unmet turns: the first nudge (at once) with the changed modifiers.
        frame(
            &[
                nudge,
                &format!("{angry}\nBalance: $1250 owed to Acme Bank."),
            ],
            true,
        ),
        // The second nudge, held for the caller's next line.
        frame(&[nudge], false),
        // Acknowledged: negotiate's entry, held for the caller's next line.
        frame(
            &[
                angry,
                "Offer a payment plan the caller can afford.",
                nav_negotiate,
            ],
            false,
        ),
        // A plan: close's entry, with its own state modifier after the defaults'.
        frame(
            &[
                &format!("{angry}\n[Context: payment_plan=5 x $250]"),
                "Confirm the plan and end the call politely.",
                nav_close,
                "Wrapping up the call.",
            ],
            true,
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_debt_collection_example_talks_to_the_bundled_tape() {
    let outcome = debt_collection::run(debt_collection::Target::BundledTape { speed: None })
        .await
        .unwrap();
    let debt_collection::Outcome::Call(call) = outcome else {
        panic!("a call was asked for");
    };
    assert_eq!(call, expected());
}

#[tokio::test(start_paused = true)]
async fn the_bundled_debt_collection_tape_replays_clean_offline() {
    let outcome = debt_collection::run(debt_collection::Target::Replay)
        .await
        .unwrap();
    let debt_collection::Outcome::Replay { frames } = outcome else {
        panic!("a replay was asked for");
    };
    assert!(frames > 0);
    let replayed = debt_collector()
        .greeting(CALLER_TURNS[0].0)
        .replay(debt_collection::bundled_tape().unwrap())
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(replayed.divergences, vec![]);
    assert_eq!(
        context_frames(&debt_collection::bundled_tape().unwrap()),
        expected_context()
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_debt_collection_tape_is_what_reel_records_today() {
    let agent = debt_collector().greeting(CALLER_TURNS[0].0);
    let ScriptedCall { call, wire, .. } = talk(agent, START_MS, debt_model::play, converse).await;
    assert_eq!(call, expected());
    assert_eq!(context_frames(&wire), expected_context());

    bundled_tape::check_or_bless(
        "debt_collection.wire.jsonl",
        &wire,
        debt_collection::DEBT_TAPE,
    );
}
