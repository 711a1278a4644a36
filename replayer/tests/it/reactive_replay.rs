//! Reactive state under record & replay: a session with computed values, watchers that
//! write state and temporal patterns that write state and update the instruction, recorded
//! on loopback, replays offline with the same rules and writes the same journal, entry by
//! entry — the rules run on event time, which the replay reproduces.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::writer::Origin;
use reel_actors::{Lane, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, SessionConfig, SessionEvent};
use reel_reactive::{Reactive, ReactiveConfig, TemporalRegistry, Watcher};
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use reel_tools::{SimpleTool, ToolDispatcher};
use replay_support::{Outcome, connect, drain, lane, replay_outcome, seen, turn_complete};
use serde_json::{Value, json};

const T0: u64 = 1_718_000_000_000;

/// A tool that writes `args.writes` (`[[key, value], …]`) in order.
fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "set",
            "Writes state.",
            None,
            |args, ctx| async move {
                for write in args["writes"].as_array().cloned().unwrap_or_default() {
                    let key = write[0].as_str().unwrap_or_default().to_owned();
                    ctx.state.set(&key, &write[1]).map_err(|e| ctx.fail(e))?;
                }
                Ok(json!({"ok": true}))
            },
        ))
        .unwrap();
    dispatcher
}

/// The rules, the same for the recording and the replay.
fn reactive() -> Reactive {
    ReactiveConfig::new()
        .computed("with_tax", &["derived:total"], |s| {
            Some(json!(s.get::<i64>("derived:total")? * 6 / 5))
        })
        .computed("total", &["app:price", "app:quantity"], |s| {
            Some(json!(
                s.get::<i64>("app:price")? * s.get::<i64>("app:quantity")?
            ))
        })
        .watch(
            Watcher::on("derived:with_tax")
                .crossed_above(800.0)
                .blocking()
                .then(|_old, new, state| async move {
                    state
                        .set("app:alert", format!("with tax: {new}"))
                        .await
                        .unwrap();
                }),
        )
        .watch(Watcher::on("turn:flag").became_false().blocking().then(
            |_old, _new, state| async move {
                let now = reel_actors::clock::Clock::now_ms(state.clock().as_ref());
                state.set("app:flag_cleared_at", now).await.unwrap();
            },
        ))
        .temporal(
            TemporalRegistry::new()
                .when_sustained(
                    "alert_held",
                    |s| s.contains("app:alert"),
                    Duration::from_millis(1000),
                    |state, writer| async move {
                        state.set("app:alert_held", true).await.unwrap();
                        writer
                            .update_instruction("Offer to remove something.")
                            .unwrap();
                    },
                )
                .when_turns(
                    "two_turns",
                    |s| s.contains("derived:total"),
                    2,
                    |state, _writer| async move {
                        let turns = state.get::<u64>("session:turn_count").unwrap_or_default();
                        state.set("app:steady_since_turn", turns).await.unwrap();
                    },
                ),
        )
        .build()
        .unwrap()
}

fn usage(e: &SessionEvent) -> bool {
    matches!(e, SessionEvent::Usage(_))
}

async fn advance(ms: u64) {
    tokio::time::advance(Duration::from_millis(ms)).await;
}

fn set(id: &str, writes: Value) -> Value {
    json!({"toolCall": {"functionCalls": [{"id": id, "name": "set", "args": {"writes": writes}}]}})
}

async fn record() -> (Outcome, Vec<WireEntry>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .dispatcher(dispatcher())
        .reactor(Box::new(reactive()))
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let mut sync = builder.subscribe();
    let (handle, mut conn) = connect(builder, &mut server, 40).await;
    advance(200).await;
    conn.send_json(&set(
        "c1",
        json!([["app:price", 250], ["app:quantity", 2], ["turn:flag", true]]),
    ))
    .await;
    // The commit: total 500, with tax 600 (computed values follow the tools' writes).
    conn.recv_json().await;
    advance(100).await;
    // Turn 1: `turn:flag` cleared.
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    seen(&mut sync, turn_complete).await;
    advance(400).await;
    conn.send_json(&set("c2", json!([["app:quantity", 3]])))
        .await;
    // The commit: total 750, with tax 900 (crosses 800: the alert).
    conn.recv_json().await;
    advance(100).await;
    // Turn 2: the total has been there two turns in a row.
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    seen(&mut sync, turn_complete).await;
    advance(600).await;
    conn.send_json(&json!({"usageMetadata": {"totalTokenCount": 10}}))
        .await;
    seen(&mut sync, usage).await;
    advance(600).await;
    // The alert has been up for 1200 ms: the sustained pattern changes the instruction.
    conn.send_json(&json!({"usageMetadata": {"totalTokenCount": 20}}))
        .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Offer to remove something."}]}}})
    );
    let early = events
        .collect_until_idle(Duration::from_millis(200), Duration::from_secs(30))
        .await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let mut all = early;
    all.extend(drain(&mut events).await);
    (Outcome::of(all, &handle, &journal), recorder.entries())
}

async fn replay(entries: Vec<WireEntry>) -> (Outcome, reel_replayer::Replay) {
    let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
        .dispatcher(dispatcher())
        .reactor(Box::new(reactive()));
    replay_outcome(builder, entries).await
}

#[tokio::test(start_paused = true)]
async fn a_session_with_reactive_rules_replays_with_an_equal_journal() {
    let (live, entries) = record().await;
    // What the rules wrote, live: computed values, watchers' and patterns' writes.
    let reactive_writes: Vec<(String, Value)> = live
        .journal
        .iter()
        .filter(|m| m.key.starts_with("derived:") || (m.key.starts_with("app:") && !m.delta))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect();
    let turn_1 = T0 + 40 + 200 + 100;
    let turn_2 = turn_1 + 400 + 100;
    assert_eq!(
        reactive_writes,
        [
            ("derived:total".to_owned(), json!(500)),
            ("derived:with_tax".to_owned(), json!(600)),
            ("app:flag_cleared_at".to_owned(), json!(turn_1)),
            ("derived:total".to_owned(), json!(750)),
            ("derived:with_tax".to_owned(), json!(900)),
            ("app:alert".to_owned(), json!("with tax: 900")),
            ("app:steady_since_turn".to_owned(), json!(1)),
            ("app:alert_held".to_owned(), json!(true)),
        ]
    );
    let held = live
        .journal
        .iter()
        .find(|m| m.key == "app:alert_held")
        .map(|m| m.timestamp_ms);
    assert_eq!(held, Some(turn_2 + 1200), "at the first tick 1000 ms on");

    let (replayed, replay) = replay(entries).await;
    assert_eq!(replay.divergences(), vec![], "no divergence");
    assert_eq!(replayed.journal, live.journal, "journal, entry by entry");
    assert_eq!(replayed.state, live.state, "final state");
    assert_eq!(
        lane(&replayed.events, Lane::Control),
        lane(&live.events, Lane::Control),
        "control lane"
    );
    let runtime_frames: Vec<_> = replay
        .outbound_frames()
        .into_iter()
        .filter(|f| f.origin == Origin::Runtime)
        .collect();
    // The setup, two tool responses and the sustained pattern's instruction, byte for byte.
    assert_eq!(runtime_frames.len(), 4);
    assert!(runtime_frames.iter().all(|f| f.identical));
}
