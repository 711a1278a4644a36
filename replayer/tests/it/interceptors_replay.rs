//! A session using all four hooks on what the runtime sends — `before_tool_response`,
//! `on_turn_boundary`, `instruction_template`, `instruction_amendment` — replays offline
//! with no divergence: the redacted tool responses, the instruction updates and the
//! boundary's context frames are the runtime's, recorded as such and sent again, and the
//! journal (with the hooks' own state writes) comes out equal, entry by entry.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::Interceptors;
use reel_actors::clock::TokioClock;
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::writer::Origin;
use reel_protocol::{ApiEndpoint, Content, SessionConfig};
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::{Direction, MemoryWireRecorder, Source, WireEntry, WireRecorder};
use reel_replayer::{Pacing, ReplayOptions, Tape, replay_session};
use reel_tools::{SimpleTool, ToolDispatcher};
use replay_support::connect;
use serde_json::{Value, json};

const T0: u64 = 1_718_000_000_000;

fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "find_guest",
            "Finds a guest by name.",
            None,
            |args, ctx| async move {
                ctx.state
                    .set("app:guest", &args["name"])
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"name": args["name"], "passport": "X1234567"}))
            },
        ))
        .unwrap();
    dispatcher
}

fn phases() -> PhaseMachine {
    PhaseMachine::builder("lookup")
        .phase(
            Phase::new("lookup")
                .instruction("Find the guest.")
                .transition("welcome", |s| s.contains("app:guest")),
        )
        .phase(Phase::new("welcome").instruction("Welcome the guest."))
        .build()
        .unwrap()
}

/// All four hooks; the two async ones write state too.
fn interceptors() -> Interceptors {
    Interceptors {
        before_tool_response: Some(Arc::new(|mut responses, state| {
            Box::pin(async move {
                for response in &mut responses {
                    if let Some(Value::Object(fields)) = response.response.as_mut() {
                        fields.insert("passport".into(), json!("[redacted]"));
                    }
                }
                let count = state.get::<u64>("app:redacted").unwrap_or(0) + 1;
                state.set("app:redacted", count).await.unwrap();
                responses
            })
        })),
        on_turn_boundary: Some(Arc::new(|state, writer| {
            Box::pin(async move {
                let boundaries = state.get::<u64>("app:boundaries").unwrap_or(0) + 1;
                state.set("app:boundaries", boundaries).await.unwrap();
                let note = format!("(boundary {boundaries})");
                writer
                    .send_client_content(vec![Content::user_text(note)], false)
                    .unwrap();
            })
        })),
        instruction_template: Some(Arc::new(|state| {
            (state.get::<u64>("app:boundaries")? >= 3).then(|| "Wrap up politely.".to_owned())
        })),
        instruction_amendment: Some(Arc::new(|state| {
            let guest = state.get::<String>("app:guest")?;
            Some(format!("The guest is {guest}."))
        })),
    }
}

fn builder(endpoint: ApiEndpoint, journal: &Arc<MemoryJournalSink>) -> LiveSessionBuilder {
    LiveSessionBuilder::new(SessionConfig::default(), endpoint)
        .dispatcher(dispatcher())
        .phases(phases())
        .interceptors(interceptors())
        .journal_sink(journal.clone() as Arc<dyn JournalSink>)
}

fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

fn instruction(text: &str) -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": text}]}}})
}

fn context(n: u64) -> Value {
    json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": format!("(boundary {n})")}]}], "turnComplete": false}})
}

/// Records four turns: a tool call (redacted), a phase transition, an amended turn, a
/// templated turn.
async fn record() -> (Vec<WireEntry>, Vec<StateMutation>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = builder(server.endpoint(), &journal)
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>);
    let (handle, mut conn) = connect(builder, &mut server, 0).await;
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "g1", "name": "find_guest", "args": {"name": "Ada"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "g1", "name": "find_guest", "response": {"name": "Ada", "passport": "[redacted]"}}
        ]}})
    );
    // Turn 1: the transition's instruction, then the boundary's frame.
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction("Welcome the guest."));
    assert_eq!(conn.recv_json().await, context(1));
    // Turn 2: amended.
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction("Welcome the guest.\n\nThe guest is Ada.")
    );
    assert_eq!(conn.recv_json().await, context(2));
    // Turn 3: unchanged: no update.
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, context(3));
    // Turn 4: the template.
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction("Wrap up politely."));
    assert_eq!(conn.recv_json().await, context(4));
    tokio::time::advance(Duration::from_millis(100)).await;
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    (recorder.entries(), journal.entries())
}

#[tokio::test(start_paused = true)]
async fn a_session_using_the_four_hooks_replays_with_no_divergence() {
    let (entries, recorded_journal) = record().await;
    // Setup, tool response, then per turn the instruction update (none at turn 3) and
    // the boundary's context. Tool responses and instruction updates are the runtime's by
    // their kind; client content is marked, the boundary's as the runtime's.
    let sources: Vec<(u64, Option<Source>)> = entries
        .iter()
        .filter(|e| e.dir == Direction::Out && !e.is_close_marker())
        .map(|e| (e.seq, e.source))
        .collect();
    let runtime = Some(Source::Runtime);
    assert_eq!(
        sources,
        [
            (1, None),
            (4, None),
            (6, None),
            (7, runtime),
            (9, None),
            (10, runtime),
            (12, runtime),
            (14, None),
            (15, runtime)
        ]
    );

    let journal = Arc::new(MemoryJournalSink::new());
    let options = ReplayOptions {
        pacing: Pacing::Causal,
        ..ReplayOptions::default()
    };
    let replay = replay_session(
        builder(ApiEndpoint::offline(), &journal),
        Tape::from_entries(entries),
        options,
    )
    .await
    .unwrap();
    replay.release();
    replay.drained().await;
    replay.disconnect().await;
    assert_eq!(replay.divergences(), vec![], "no divergence");
    let runtime: Vec<bool> = replay
        .outbound_frames()
        .into_iter()
        .filter(|f| f.origin == Origin::Runtime)
        .map(|f| f.identical)
        .collect();
    assert_eq!(
        runtime, [true; 9],
        "the setup and eight runtime frames, identical"
    );
    let replayed_journal = journal.entries();
    assert!(
        recorded_journal
            .iter()
            .any(|m| m.key == "app:boundaries" && m.new == json!(4)),
        "the hooks' writes are journaled"
    );
    assert_eq!(replayed_journal, recorded_journal);
}
