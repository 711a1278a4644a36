//! A deterministic record extractor in the chain (`extract_record`): the user's typed turns
//! fill its fields (relative dates resolved on session time), a watcher on one of its
//! `derived:` keys fires, and the same chain replaying the recording writes the same
//! journal, entry by entry.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_extract::{Extract, Recognizer};
use reel_fluent::{Live, LiveBuilder};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::WireEntry;
use serde_json::{Value, json};
use support::{recording, text, turn_complete, until_turn_complete};

type Log = Arc<Mutex<Vec<String>>>;

fn booking(log: &Log) -> LiveBuilder {
    let log = Arc::clone(log);
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .extract_record(
            Extract::record("booking")
                .field("guests", Recognizer::integer_near(["for", "party"]))
                .field("when", Recognizer::datetime())
                .field("confirmed", Recognizer::yes_no())
                .build(),
        )
        .watch("derived:guests")
        .crossed_above(6.0)
        .blocking()
        .then(move |old, new, _| {
            let log = Arc::clone(&log);
            async move {
                log.lock()
                    .unwrap()
                    .push(format!("large party: {old} -> {new}"))
            }
        })
}

async fn record() -> (Vec<String>, Vec<WireEntry>, Vec<StateMutation>) {
    let log = Log::default();
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(booking(&log));
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    for (said, answered) in [
        (
            "A table for 4 tomorrow at 7pm please",
            "Four people tomorrow at seven?",
        ),
        ("Actually make it a party of 8", "Eight then."),
        ("Yes please", "Booked!"),
    ] {
        tokio::time::advance(Duration::from_millis(400)).await;
        handle.send_text(said).unwrap();
        conn.recv_json().await;
        conn.send_json(&text(answered)).await;
        conn.send_json(&turn_complete()).await;
        until_turn_complete(&mut events).await;
    }
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    let log = log.lock().unwrap().clone();
    (log, memory.wire.entries(), memory.journal.entries())
}

fn record_keys(journal: &[StateMutation]) -> Vec<(String, Value)> {
    journal
        .iter()
        .filter(|m| m.key == "booking" || m.key.starts_with("derived:"))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_record_fills_from_typed_turns_and_replays_exactly() {
    let (log, wire, journal) = record().await;
    // The session clock starts at support::T0 (2024-06-10); "tomorrow" is the 11th.
    let when = json!({"date": "2024-06-11", "time": "19:00"});
    let key = |k: &str, v: Value| (k.to_owned(), v);
    assert_eq!(
        record_keys(&journal),
        [
            key("booking", json!({"guests": 4, "when": when})),
            key("derived:guests", json!(4)),
            key("derived:when", when.clone()),
            key("booking", json!({"guests": 8, "when": when})),
            key("derived:guests", json!(8)),
            key(
                "booking",
                json!({"guests": 8, "when": when, "confirmed": true})
            ),
            key("derived:confirmed", json!(true)),
        ]
    );
    assert_eq!(log, ["large party: 4 -> 8"]);

    let replay_log = Log::default();
    let outcome = booking(&replay_log)
        .replay(wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(*replay_log.lock().unwrap(), log, "the same firings");
    assert_eq!(outcome.journal, journal, "journal, entry by entry");
}
