//! An extract record's orchestration (the seed's `field_resolve` and `on_complete`) in a
//! whole session on a loopback WebSocket: a field resolver runs when its arguments are
//! set and changed, its result lands in `{name}:result`; the agent runs when the record
//! is complete, its output in `{record}:result`; and the same chain replaying the
//! recording writes the same journal, entry by entry, with nothing fetched and no agent
//! run.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reel_actors::state::State;
use reel_actors::testing::ScriptedServer;
use reel_agents::{AgentMode, FnTextAgent, Resolution, Resolutions};
use reel_extract::{Extract, Recognizer};
use reel_fluent::{Live, LiveBuilder, RecordOrchestration};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::WireEntry;
use serde_json::{Value, json};
use support::{recording, text, turn_complete, until_turn_complete};

/// How many times the availability fetch and the router ran.
#[derive(Default)]
struct Runs {
    fetches: AtomicUsize,
    routes: AtomicUsize,
}

fn booking(runs: &Arc<Runs>, log: &Resolutions) -> LiveBuilder {
    let (fetches, routes) = (Arc::clone(runs), Arc::clone(runs));
    let router = FnTextAgent::new("router", move |state: &State| {
        routes.routes.fetch_add(1, Ordering::SeqCst);
        let slot = state.get::<String>("derived:slot").unwrap_or_default();
        let guests = state.get::<i64>("derived:guests").unwrap_or_default();
        Ok(format!("table for {guests} in the {slot}"))
    });
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .resolutions(log)
        .extract_record(
            Extract::record("booking")
                .field("slot", Recognizer::one_of(["morning", "afternoon"]))
                .field_resolve(
                    "availability",
                    ["slot"],
                    Some(Duration::from_secs(30)),
                    move |args| {
                        fetches.fetches.fetch_add(1, Ordering::SeqCst);
                        async move {
                            let slot = args.get("slot").and_then(Value::as_str).unwrap_or("");
                            Ok(json!({"open": slot == "afternoon"}))
                        }
                    },
                )
                .field("guests", Recognizer::integer_near(["for", "party"]))
                .on_complete(router, AgentMode::Call)
                .build(),
        )
}

struct Recorded {
    wire: Vec<WireEntry>,
    journal: Vec<StateMutation>,
    resolutions: Vec<Resolution>,
}

async fn record() -> Recorded {
    let runs = Arc::new(Runs::default());
    let log = Resolutions::record();
    let (builder, memory) = recording(booking(&runs, &log));
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
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
        ("The afternoon please", "How many of you?"),
        ("A table for 4", "Four in the afternoon."),
        ("Thanks, the afternoon is fine", "See you then."),
    ] {
        tokio::time::advance(Duration::from_millis(400)).await;
        handle.send_text(said).unwrap();
        conn.recv_json().await;
        conn.send_json(&text(answered)).await;
        conn.send_json(&turn_complete()).await;
        until_turn_complete(&mut events).await;
    }
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    // The slot never changed after the first turn: one fetch; the record completed once.
    assert_eq!(runs.fetches.load(Ordering::SeqCst), 1);
    assert_eq!(runs.routes.load(Ordering::SeqCst), 1);
    Recorded {
        wire: memory.wire.entries(),
        journal: memory.journal.entries(),
        resolutions: log.entries(),
    }
}

fn orchestration_keys(journal: &[StateMutation]) -> Vec<(String, Value)> {
    journal
        .iter()
        .filter(|m| m.key.starts_with("derived:") || m.key.ends_with(":result"))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_field_resolver_and_the_complete_record_s_agent_run_recorded_and_replay_without_running()
{
    let recorded = record().await;
    let key = |k: &str, v: Value| (k.to_owned(), v);
    assert_eq!(
        orchestration_keys(&recorded.journal),
        [
            key("derived:slot", json!("afternoon")),
            key("availability:result", json!({"open": true})),
            key(
                "state_meta:availability:result",
                json!({"source": "fetch", "inputs": {"derived:slot": "afternoon"}})
            ),
            key("derived:guests", json!(4)),
            key("booking:result", json!("table for 4 in the afternoon")),
            key(
                "state_meta:booking:result",
                json!({"source": "agent", "inputs": {}})
            ),
        ]
    );
    let names: Vec<(&str, u64)> = recorded
        .resolutions
        .iter()
        .map(|r| (r.resolver.as_str(), r.call))
        .collect();
    assert_eq!(names, [("availability", 1), ("booking", 1)]);
    assert_eq!(
        recorded.resolutions[0].inputs,
        json!({"derived:slot": "afternoon"})
            .as_object()
            .unwrap()
            .clone()
    );

    let runs = Arc::new(Runs::default());
    let outcome = booking(&runs, &Resolutions::replay(recorded.resolutions.clone()))
        .replay(recorded.wire.clone())
        .await
        .unwrap()
        .finish()
        .await
        .with_recorded_journal(recorded.journal.clone());
    assert_eq!(runs.fetches.load(Ordering::SeqCst), 0, "nothing fetched");
    assert_eq!(runs.routes.load(Ordering::SeqCst), 0, "no agent run");
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.resolver_drift, vec![]);
    assert_eq!(outcome.journal, recorded.journal, "journal, entry by entry");
    assert!(outcome.is_clean(), "{}", outcome.verdict());
}
