//! The record & replay contract: a session recorded on a loopback WebSocket (tools, phases,
//! state writes, a reconnect) replays offline through the same tree with the same tools and
//! a fresh state, and every lane's events, the final state, the journal (entry by entry) and
//! the runtime's outbound frames (byte for byte) come out equal. Change a tool and the first
//! divergence names the frame and the JSON path.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use reel_replayer::{DivergenceKind, Pacing, PathDiff};
use reel_tools::{ToolDispatcher, TypedTool};
use replay_support::{Outcome, connect, drain, lane, replay_outcome, replay_paced};
use serde::Deserialize;
use serde_json::{Value, json};

const T0: u64 = 1_718_000_000_000;

#[derive(Deserialize, schemars::JsonSchema)]
struct WeatherArgs {
    /// City name.
    city: String,
}

fn dispatcher(temp_c: i64) -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(TypedTool::new::<WeatherArgs, _, _, _>(
            "get_weather",
            "Get the current weather for a city.",
            move |args: WeatherArgs, ctx| async move {
                ctx.state
                    .set("app:last_city", &args.city)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"city": args.city, "temp_c": temp_c}))
            },
        ))
        .unwrap();
    dispatcher
}

fn phases() -> PhaseMachine {
    PhaseMachine::builder("weather")
        .phase(
            Phase::new("weather")
                .instruction("Talk about the weather.")
                .transition_with(
                    "goodbye",
                    |s| s.contains("app:last_city"),
                    "a city is known",
                ),
        )
        .phase(Phase::new("goodbye").instruction("Say goodbye.").terminal())
        .build()
        .unwrap()
}

fn config() -> SessionConfig {
    SessionConfig::default().session_resume(true)
}

fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"text": t}]}}})
}

/// Records a whole session on loopback: a greeting, a tool call that writes state, a phase
/// change, a goAway and reconnect with the latest handle, another turn, a clean disconnect.
/// One stream sees every event from the start to the end.
async fn record() -> (Outcome, Vec<WireEntry>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = LiveSessionBuilder::new(config(), server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .dispatcher(dispatcher(21))
        .phases(phases())
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let (handle, mut conn) = connect(builder, &mut server, 40).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    tokio::time::advance(Duration::from_millis(300)).await;
    handle.send_text("What's the weather in Paris?").unwrap();
    conn.recv_json().await;
    tokio::time::advance(Duration::from_millis(150)).await;
    conn.send_json(&text("Let me check.")).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "get_weather", "args": {"city": "Paris"}}
    ]}}))
    .await;
    conn.recv_json().await;
    tokio::time::advance(Duration::from_millis(120)).await;
    conn.send_json(&text("It is 21 degrees in Paris.")).await;
    conn.send_json(&json!({"serverContent": {"outputTranscription": {"text": "It is 21"}}, "usageMetadata": {"totalTokenCount": 42}}))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    conn.recv_json().await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-2", "resumable": true}}))
        .await;
    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
    let mut conn2 = server.accept().await;
    conn2.recv_json().await;
    tokio::time::advance(Duration::from_millis(60)).await;
    conn2.send_json(&json!({"setupComplete": {}})).await;
    conn2.send_json(&text("Goodbye!")).await;
    conn2
        .send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let early = events
        .collect_until_idle(Duration::from_millis(200), Duration::from_secs(30))
        .await;
    let (end, _) = tokio::join!(handle.disconnect(), conn2.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let mut all = early;
    all.extend(drain(&mut events).await);
    (Outcome::of(all, &handle, &journal), recorder.entries())
}

async fn replay(entries: Vec<WireEntry>, temp_c: i64) -> (Outcome, reel_replayer::Replay) {
    let builder = LiveSessionBuilder::new(config(), ApiEndpoint::offline())
        .dispatcher(dispatcher(temp_c))
        .phases(phases());
    replay_outcome(builder, entries).await
}

#[tokio::test(start_paused = true)]
async fn a_recorded_session_replays_exactly() {
    let (live, entries) = record().await;
    // The recording shows the reconnect: a close marker, then the second connection.
    let marks: Vec<(Option<u32>, Option<String>, bool)> = entries
        .iter()
        .filter_map(|e| {
            e.close
                .as_ref()
                .map(|m| (e.conn, m.reason.clone(), m.client))
        })
        .collect();
    assert_eq!(
        marks,
        [
            (None, Some("go_away".to_owned()), true),
            (Some(2), Some("client disconnect".to_owned()), true)
        ]
    );

    let (replayed, replay) = replay(entries, 21).await;
    assert_eq!(replay.divergences(), vec![], "no divergence");
    for lane_kind in [Lane::Fast, Lane::Control, Lane::Supervisor] {
        assert_eq!(
            lane(&replayed.events, lane_kind),
            lane(&live.events, lane_kind),
            "{lane_kind:?} lane"
        );
    }
    assert!(lane(&live.events, Lane::Control).len() > 20);
    assert_eq!(replayed.state, live.state, "final state");
    assert_eq!(replayed.journal, live.journal, "journal, entry by entry");
    assert!(
        live.journal
            .iter()
            .any(|m| m.key == "app:last_city" && m.delta)
    );
    let runtime_frames: Vec<_> = replay
        .outbound_frames()
        .into_iter()
        .filter(|f| f.origin == reel_actors::writer::Origin::Runtime)
        .collect();
    // Two setups, the tool response, the phase instruction, and the phase instruction
    // again on the second connection (its setup carried the initial one; decision 0007),
    // all byte-identical.
    assert_eq!(runtime_frames.len(), 5);
    assert!(runtime_frames.iter().all(|f| f.identical));
}

/// "CLEAN at any speed": the same recording (tools, phases, a reconnect) replays with no
/// divergence at every pacing, and ends as it did.
#[tokio::test(start_paused = true)]
async fn a_recorded_session_replays_clean_at_every_pacing() {
    let (live, entries) = record().await;
    for pacing in [
        Pacing::AsFastAsConsumed,
        Pacing::Recorded { speed: 1.0 },
        Pacing::Recorded { speed: 4.0 },
    ] {
        let builder = LiveSessionBuilder::new(config(), ApiEndpoint::offline())
            .dispatcher(dispatcher(21))
            .phases(phases());
        let (replay, events, end) = replay_paced(builder, entries.clone(), pacing).await;
        assert_eq!(replay.divergences(), vec![], "{pacing:?}: no divergence");
        assert_eq!(
            end.reason, "closed with code 1000: client disconnect",
            "{pacing:?}"
        );
        assert_eq!(
            lane(&events, Lane::Fast),
            lane(&live.events, Lane::Fast),
            "{pacing:?}: the fast lane"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_changed_tool_is_reported_as_the_first_divergence() {
    let (_, entries) = record().await;
    let response_seq = entries
        .iter()
        .find(|e| e.payload.starts_with(b"{\"toolResponse\""))
        .unwrap()
        .seq;
    let (_, replay) = replay(entries, 25).await;
    let divergences = replay.divergences();
    let first = &divergences[0];
    assert_eq!(first.seq, response_seq);
    assert_eq!(
        first.kind,
        DivergenceKind::Differs {
            diffs: vec![PathDiff {
                path: "toolResponse.functionResponses[0].response.temp_c".into(),
                expected: Some(json!(21)),
                actual: Some(json!(25)),
            }]
        }
    );
    assert_eq!(divergences.len(), 1, "only the tool's response differs");
}

/// A session whose only oddity is a slow `on_turn_complete` (3 s against a 2 s callback
/// timeout), while the model goes on talking.
fn slow_callbacks() -> reel_actors::callbacks::ControlCallbacks {
    use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
    ControlCallbacks {
        on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, |()| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
        })),
        ..ControlCallbacks::default()
    }
}

fn slow_builder(endpoint: ApiEndpoint) -> LiveSessionBuilder {
    LiveSessionBuilder::new(SessionConfig::default(), endpoint)
        .control_callbacks(slow_callbacks())
        .callback_timeout(Duration::from_secs(2))
}

/// Issue 26, promise 4: the report of a callback that timed out lands at the same place of
/// the journal in the replay as in the recording (its `session:error_count` and
/// `session:last_error` writes included), however the frames around it are paced.
#[tokio::test(start_paused = true)]
async fn a_callback_timeout_replays_at_the_same_place_of_the_journal() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = slow_builder(server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let (handle, mut conn) = connect(builder, &mut server, 40).await;
    conn.send_json(&text("One.")).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    // The model talks on while the callback runs, past its timeout and after it.
    for (i, wait_ms) in [500u64, 1_000, 1_000, 1_000].into_iter().enumerate() {
        tokio::time::advance(Duration::from_millis(wait_ms)).await;
        conn.send_json(&text(&format!("more {i}"))).await;
    }
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let early = events
        .collect_until_idle(Duration::from_secs(5), Duration::from_secs(60))
        .await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let mut all = early;
    all.extend(drain(&mut events).await);
    let live = Outcome::of(all, &handle, &journal);
    assert_eq!(handle.telemetry().callback_timeouts, 2);
    let errors: Vec<_> = live
        .journal
        .iter()
        .filter(|m| m.key == "session:error_count")
        .map(|m| m.new.clone())
        .collect();
    assert_eq!(errors, [json!(1), json!(2)]);

    let builder = slow_builder(ApiEndpoint::offline());
    let (replayed, replay) = replay_outcome(builder, recorder.entries()).await;
    assert_eq!(replay.divergences(), vec![]);
    assert_eq!(replayed.journal, live.journal, "journal, entry by entry");
    assert_eq!(
        lane(&replayed.events, Lane::Control),
        lane(&live.events, Lane::Control)
    );
}
