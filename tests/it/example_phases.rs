//! The `phases` example: its booking assistant holds the whole call with the bundled tape
//! on loopback — every phase, hook and watcher where it should be — and replays it clean.
//!
//! The bundled tape is what reel records when that assistant talks to the scripted model
//! (`support/booking_model.rs`): regenerated here and compared byte for byte, so it never
//! drifts from the code. After an intended change: `REEL_BLESS=1 cargo test --test
//! example_phases`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/phases.rs"]
mod phases;

use crate::bundled_tape;
use crate::scripted_call::{ScriptedCall, talk};

#[path = "../support/booking_model.rs"]
mod booking_model;

use std::collections::BTreeMap;

use phases::booking::{Activity, Booking, CALLER_TURNS, booking_assistant, converse};
use serde_json::{Value, json};

/// The tape's start time: 2025-06-01T19:00:00Z.
const START_MS: u64 = 1_748_804_400_000;

fn expected() -> Booking {
    let state: BTreeMap<String, Value> = [
        ("app:caller_name", json!("Ada Lovelace")),
        ("app:confirmed", json!(true)),
        ("app:deposit_required", json!(true)),
        ("app:party_size", json!(8)),
        ("app:reference", json!("TR-2000-8")),
        ("app:summary", json!("8 guests at 20:00 for Ada Lovelace")),
        ("app:time", json!("20:00")),
        ("derived:guests", json!(8)),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    Booking {
        answers: vec![
            "Welcome to Trattoria Reel! May I have your name for the booking?".into(),
            "Thank you, Ada! How many guests, and for what time?".into(),
            "A table for eight at 20:00. Shall I book it?".into(),
            "You're booked! Your reference is TR-2000-8; parties of seven or more leave a 50 \
             euro deposit."
                .into(),
            "See you tonight, Ada. Goodbye!".into(),
        ],
        tools: vec![
            ("note_name".into(), json!({"name": "Ada Lovelace"})),
            (
                "note_party".into(),
                json!({"party_size": 8, "time": "20:00"}),
            ),
            (
                "confirm_booking".into(),
                json!({"reference": "TR-2000-8", "deposit_eur": 50}),
            ),
        ],
        phases: vec![
            "greeting".into(),
            "collect_details".into(),
            "confirm".into(),
            "farewell".into(),
        ],
        activity: vec![
            "enter collect_details: booking for Ada Lovelace".into(),
            // At `note_party`'s commit: the computed guests follow the tool's write at once,
            // before the turn completes and leaves the phase.
            "watch: 8 guests, a deposit is required".into(),
            "exit collect_details: 8 guests at 20:00 for Ada Lovelace".into(),
            "watch: booking TR-2000-8 confirmed".into(),
            "enter farewell: booking TR-2000-8 closed".into(),
        ],
        state,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_phases_example_talks_to_the_bundled_tape() {
    let booking = phases::run(phases::Target::BundledTape { speed: None })
        .await
        .unwrap();
    assert_eq!(booking, expected());
}

#[tokio::test(start_paused = true)]
async fn the_bundled_phases_tape_replays_clean_with_the_same_assistant() {
    let activity = Activity::default();
    let outcome = booking_assistant(&activity)
        .greeting(CALLER_TURNS[0])
        .replay(phases::bundled_tape().unwrap())
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(activity.lines(), expected().activity);
    let app_keys: BTreeMap<String, Value> = outcome
        .state
        .iter()
        .filter(|(key, _)| key.starts_with("app:") || key.starts_with("derived:"))
        .map(|(key, value)| (key.to_owned(), value.clone()))
        .collect();
    assert_eq!(app_keys, expected().state);
}

#[tokio::test(start_paused = true)]
async fn the_bundled_phases_tape_is_what_reel_records_today() {
    let activity = Activity::default();
    let [greeting, rest @ ..] = CALLER_TURNS;
    let assistant = booking_assistant(&activity).greeting(greeting);
    let ScriptedCall {
        call: booking,
        wire,
        ..
    } = talk(
        assistant,
        START_MS,
        booking_model::play,
        async |handle, events| converse(handle, events, &rest, &activity).await,
    )
    .await;
    assert_eq!(booking, expected());

    bundled_tape::check_or_bless("phases.wire.jsonl", &wire, phases::PHASES_TAPE);
}
