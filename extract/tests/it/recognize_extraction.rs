//! The deterministic extraction kit through a whole text session: a record of recognizer
//! fields, run at every turn complete over the user's side of its window, writes the
//! exact journal entries (the record, then its `derived:` fields, only what changed), with
//! relative dates resolved against the session time of the turns.

use crate::turns_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::LiveEvent;
use reel_actors::testing::ScriptedServer;
use reel_extract::{Extract, Recognizer};
use serde_json::{Value, json};
use turns_support::Rig;

/// The user types `user` (a text turn: the transcript's user side), the model answers
/// `model` in text, and the turn completes; returns the turn complete's session time.
async fn text_turn(rig: &mut Rig, user: &str, model: &str) -> u64 {
    rig.handle.send_text(user).unwrap();
    let sent = rig.conn.recv_json().await;
    assert_eq!(
        sent,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": user}]}],
            "turnComplete": true}})
    );
    rig.model_text(model).await;
    rig.turn().await
}

#[tokio::test(start_paused = true)]
async fn a_record_fills_its_fields_turn_by_turn() {
    let mut server = ScriptedServer::bind().await;
    let order = Extract::record("order")
        .field("quantity", Recognizer::integer_near(["want", "get"]))
        .field("item", Recognizer::one_of(["pizza", "salad", "soda"]))
        .field("name", Recognizer::fuzzy(["Johnson", "Jackson"]))
        .field("pickup", Recognizer::datetime())
        .field("total", Recognizer::money())
        .field("confirmed", Recognizer::yes_no())
        .window(2)
        .build();
    let mut rig = Rig::start(&mut server, |b| b.extractor(Arc::new(order))).await;

    // The session clock starts at 2024-06-10T06:13:20Z, a Monday: "tomorrow" is the 11th
    // whatever day the test runs on.
    let first = text_turn(
        &mut rig,
        "Hi, I want two pizzas for tomorrow evening at 7",
        "Sure. Your name?",
    )
    .await;
    let pickup = json!({"date": "2024-06-11", "time": "19:00", "part_of_day": "evening"});
    let after_first = json!({"quantity": 2, "item": "pizza", "pickup": pickup});
    tokio::time::advance(Duration::from_secs(60)).await;
    // The window still holds the first turn: its fields are found again, the newer ones
    // win.
    let second = text_turn(&mut rig, "Jonson. Make it a salad", "Got it, Johnson.").await;
    let after_second = json!({"quantity": 2, "item": "salad", "name": "Johnson", "pickup": pickup});
    // A day later. The first turn is out of the window: what it said stays from the
    // state. "Tomorrow" now is the 12th (this turn's session time, a Tuesday); "at 8" is read
    // in the evening said before.
    tokio::time::advance(Duration::from_secs(86_400)).await;
    let third = text_turn(
        &mut rig,
        "Tomorrow at 8 instead. $24.50 in total? Yes please",
        "That's $24.50, see you at 8.",
    )
    .await;
    let pickup_at_eight = json!({"date": "2024-06-12", "time": "20:00", "part_of_day": "evening"});
    let after_third = json!({"quantity": 2, "item": "salad", "name": "Johnson",
        "pickup": pickup_at_eight, "total": {"amount": 24.5, "currency": "USD"},
        "confirmed": true});
    tokio::time::advance(Duration::from_secs(60)).await;
    // Said nothing a field recognizes: nothing changes, nothing is written.
    let fourth = text_turn(&mut rig, "Thanks a lot", "Bye!").await;
    rig.settle().await;

    assert_eq!(
        rig.writes(),
        [
            ("order".into(), Value::Null, after_first.clone(), first),
            ("derived:quantity".into(), Value::Null, json!(2), first),
            ("derived:item".into(), Value::Null, json!("pizza"), first),
            ("derived:pickup".into(), Value::Null, pickup.clone(), first),
            (
                "order".into(),
                after_first.clone(),
                after_second.clone(),
                second
            ),
            (
                "derived:item".into(),
                json!("pizza"),
                json!("salad"),
                second
            ),
            ("derived:name".into(), Value::Null, json!("Johnson"), second),
            (
                "order".into(),
                after_second.clone(),
                after_third.clone(),
                third
            ),
            (
                "derived:pickup".into(),
                pickup.clone(),
                pickup_at_eight.clone(),
                third
            ),
            (
                "derived:total".into(),
                Value::Null,
                json!({"amount": 24.5, "currency": "USD"}),
                third
            ),
            ("derived:confirmed".into(), Value::Null, json!(true), third),
        ]
    );
    assert_eq!(
        [second - first, third - second, fourth - third],
        [60_000, 86_400_000, 60_000]
    );
    // One extraction event per turn, the last one unchanged.
    assert_eq!(
        rig.control(&["extraction", "extraction_error"]),
        [
            LiveEvent::Extraction {
                name: "order".into(),
                value: after_first
            },
            LiveEvent::Extraction {
                name: "order".into(),
                value: after_second
            },
            LiveEvent::Extraction {
                name: "order".into(),
                value: after_third.clone()
            },
            LiveEvent::Extraction {
                name: "order".into(),
                value: after_third
            },
        ]
    );
    // The derived fallback finds the fields by their own names.
    let state = rig.handle.state();
    assert_eq!(state.get::<i64>("quantity"), Some(2));
    assert_eq!(state.get::<bool>("confirmed"), Some(true));
    assert_eq!(state.get::<Value>("pickup"), Some(pickup_at_eight));
}
