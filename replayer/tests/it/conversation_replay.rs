//! A session using all of conversation control — context injection with deferred
//! delivery, phase defaults with a state modifier and navigation, needs, an entry guard,
//! enter prompts (one computed from the state and the transcript), repair with a nudge
//! held for the user's next send and an escalation, tool filtering per phase — replays
//! offline CLEAN: every context frame (the deferred ones where the application's sends
//! flushed them), every prompt and tool response identical, the journal equal entry by
//! entry.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::conversation::{ContextDelivery, PhaseDefaults, RepairConfig, SteeringMode};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::writer::Origin;
use reel_actors::{LiveEvent, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, SessionConfig, SessionEvent};
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use reel_replayer::{Pacing, ReplayOptions, Tape, replay_session};
use reel_tools::{SimpleTool, ToolDispatcher};
use replay_support::connect;
use serde_json::{Value, json};

const T0: u64 = 1_718_000_000_000;

/// `remember` writes `args.value` under `args.key`; `transfer` does nothing.
fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "remember",
            "Remembers what the caller said.",
            None,
            |args, ctx| async move {
                let key = args["key"].as_str().unwrap_or("app:unknown").to_owned();
                ctx.state
                    .set(&key, &args["value"])
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"ok": true}))
            },
        ))
        .unwrap();
    dispatcher
        .register(SimpleTool::new(
            "transfer",
            "Transfers the call.",
            None,
            |_args, _ctx| async move { Ok(json!({"transferred": true})) },
        ))
        .unwrap();
    dispatcher
}

fn phases() -> PhaseMachine {
    PhaseMachine::builder("greeting")
        .defaults(
            PhaseDefaults::default()
                .with_state(&["caller_name"])
                .navigation(),
        )
        .repair(RepairConfig::new(2, 4).escalate_to("close"))
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller.")
                .needs(&["caller_name"])
                .tools(["remember"])
                .transition_with(
                    "identify",
                    |s| s.contains("caller_name"),
                    "when the caller gives their name",
                ),
        )
        .phase(
            Phase::new("identify")
                .instruction("Ask for the organization.")
                .guard(|s| s.contains("caller_name"))
                .needs(&["caller_org"])
                .with_state(&["caller_org"])
                .tools(["remember"])
                .enter_prompt_fn(|state, turns| {
                    let name = state.get::<String>("caller_name").unwrap_or_default();
                    format!("{name} is on the line after {} turn(s).", turns.len())
                })
                .transition_with(
                    "close",
                    |s| s.contains("caller_org"),
                    "when the organization is known",
                ),
        )
        .phase(
            Phase::new("close")
                .instruction("Say goodbye.")
                .tools(["transfer"])
                .enter_prompt("Thanks for calling.")
                .terminal(),
        )
        .build()
        .unwrap()
}

fn builder(endpoint: ApiEndpoint, journal: &Arc<MemoryJournalSink>) -> LiveSessionBuilder {
    LiveSessionBuilder::new(
        SessionConfig::default().system_instruction("You screen calls."),
        endpoint,
    )
    .dispatcher(dispatcher())
    .phases(phases())
    .steering_mode(SteeringMode::ContextInjection)
    .context_delivery(ContextDelivery::Deferred)
    .journal_sink(journal.clone() as Arc<dyn JournalSink>)
}

fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

fn context(turns: &[&str], prompt: bool) -> Value {
    let turns: Vec<Value> = turns
        .iter()
        .map(|text| json!({"role": "model", "parts": [{"text": text}]}))
        .collect();
    json!({"clientContent": {"turns": turns, "turnComplete": prompt}})
}

fn user_text(text: &str) -> Value {
    json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": text}]}], "turnComplete": true}})
}

async fn turn(conn: &mut ServerConn) {
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&turn_complete()).await;
}

const NAV_GREETING: &str = "[Navigation]\nCurrent phase: greeting -- Greet the caller.\nStill needed: caller_name\nPossible next:\n  -> identify: when the caller gives their name";
const NAV_IDENTIFY: &str = "[Navigation]\nCurrent phase: identify -- Ask for the organization.\nPrevious: greeting (turn 0)\nStill needed: caller_org\nPossible next:\n  -> close: when the organization is known";
const NAV_CLOSE: &str =
    "[Navigation]\nCurrent phase: close -- Say goodbye.\nPrevious: identify (turn 4)";
const NUDGE: &str = "I still need to collect: caller_org.";

/// Records the call: the user speaks (the queued greeting context goes first), gives a
/// name through a tool, the phase moves (its enter prompt at once), four turns pass
/// without the organization (a nudge at once, a nudge held for the user's next send, then
/// the escalation to `close`), and `close`'s tool is called.
async fn record() -> (Vec<WireEntry>, Vec<StateMutation>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = builder(server.endpoint(), &journal)
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>);
    let (handle, mut conn) = connect(builder, &mut server, 0).await;
    tokio::time::advance(Duration::from_millis(100)).await;
    handle.send_text("Hello?").unwrap();
    assert_eq!(
        conn.recv_json().await,
        context(&["Greet the caller.", NAV_GREETING], false)
    );
    assert_eq!(conn.recv_json().await, user_text("Hello?"));
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "r1", "name": "remember", "args": {"key": "caller_name", "value": "Ada"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "r1", "name": "remember", "response": {"ok": true}}
        ]}})
    );
    // Turn 1: greeting → identify; the enter prompt goes at once.
    turn(&mut conn).await;
    assert_eq!(
        conn.recv_json().await,
        context(
            &[
                "[Context: caller_name=Ada]",
                "Ask for the organization.",
                NAV_IDENTIFY,
                "Ada is on the line after 1 turn(s)."
            ],
            true
        )
    );
    // `transfer` is not allowed in `identify`.
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "x1", "name": "transfer", "args": {}}
    ]}}))
    .await;
    let refused = conn.recv_json().await;
    assert_eq!(
        refused["toolResponse"]["functionResponses"][0]["id"],
        json!("x1")
    );
    assert!(refused["toolResponse"]["functionResponses"][0]["response"]["error"].is_string());
    // Turns 2, 3: one unmet turn, then the first nudge, at once.
    turn(&mut conn).await;
    turn(&mut conn).await;
    assert_eq!(conn.recv_json().await, context(&[NUDGE], true));
    // Turn 4: the second nudge waits for the user's next send (once the turn is handled).
    let mut events = handle.events();
    turn(&mut conn).await;
    while let Some(event) = events.recv().await {
        if matches!(
            event.event,
            LiveEvent::Session(SessionEvent::TurnComplete { .. })
        ) {
            break;
        }
    }
    tokio::time::advance(Duration::from_millis(100)).await;
    handle.send_text("Still there?").unwrap();
    assert_eq!(conn.recv_json().await, context(&[NUDGE], false));
    assert_eq!(conn.recv_json().await, user_text("Still there?"));
    // Turn 5: the escalation moves to `close`, whose enter prompt goes at once.
    turn(&mut conn).await;
    assert_eq!(
        conn.recv_json().await,
        context(
            &[
                "[Context: caller_name=Ada]",
                "Say goodbye.",
                NAV_CLOSE,
                "Thanks for calling."
            ],
            true
        )
    );
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "t1", "name": "transfer", "args": {}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "t1", "name": "transfer", "response": {"transferred": true}}
        ]}})
    );
    tokio::time::advance(Duration::from_millis(100)).await;
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    (recorder.entries(), journal.entries())
}

#[tokio::test(start_paused = true)]
async fn a_session_using_conversation_control_replays_clean_entry_by_entry() {
    let (entries, recorded_journal) = record().await;
    assert!(
        recorded_journal
            .iter()
            .any(|m| m.key == "repair:escalation" && m.new == json!(true)),
        "the escalation is journaled"
    );
    for pacing in [Pacing::Causal, Pacing::AsFastAsConsumed] {
        let journal = Arc::new(MemoryJournalSink::new());
        let options = ReplayOptions {
            pacing,
            ..ReplayOptions::default()
        };
        let replay = replay_session(
            builder(ApiEndpoint::offline(), &journal),
            Tape::from_entries(entries.clone()),
            options,
        )
        .await
        .unwrap();
        replay.release();
        replay.drained().await;
        replay.disconnect().await;
        assert_eq!(replay.divergences(), vec![], "{pacing:?}: no divergence");
        let runtime: Vec<bool> = replay
            .outbound_frames()
            .into_iter()
            .filter(|f| f.origin == Origin::Runtime)
            .map(|f| f.identical)
            .collect();
        // The setup, five context frames (two of them flushed by the application's
        // sends) and three tool responses.
        assert_eq!(runtime, [true; 9], "{pacing:?}");
        assert_eq!(journal.entries(), recorded_journal, "{pacing:?}");
    }
}
