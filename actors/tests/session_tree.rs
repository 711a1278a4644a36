//! The whole session tree against a scripted Live server on a real loopback WebSocket,
//! under paused tokio time: exact frames on the wire, exact event sequences per lane.

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventEnvelope, EventStream, Lane, LiveEvent, LiveHandle, LiveSessionBuilder};
use reel_protocol::{SessionConfig, SessionEvent, SessionPhase};
use serde_json::{Value, json};

const T0: u64 = 1_718_000_000_000;

/// Starts a session built by `build` against `server`, answers its setup, and returns the
/// handle, the server side of the connection, the setup frame it sent and an event stream
/// subscribed before anything flowed.
async fn start(
    server: &mut ScriptedServer,
    build: impl FnOnce(LiveSessionBuilder) -> LiveSessionBuilder,
    config: SessionConfig,
) -> (LiveHandle, ServerConn, Value, EventStream) {
    let builder = build(
        LiveSessionBuilder::new(config, server.endpoint())
            .clock(Arc::new(TokioClock::anchored_at(T0))),
    );
    let events = builder.subscribe();
    let connecting = tokio::spawn(builder.connect());
    let mut conn = server.accept().await;
    let setup = conn.recv_json().await;
    conn.send_json(&json!({"setupComplete": {}})).await;
    let handle = connecting.await.unwrap().unwrap();
    (handle, conn, setup, events)
}

/// Every event until the tree is quiet. Under paused time, the idle wait ends only when
/// no task can make progress: every frame sent has been handled by every lane.
async fn settle(events: &mut EventStream) -> Vec<EventEnvelope> {
    events
        .collect_until_idle(Duration::from_millis(500), Duration::from_secs(60))
        .await
}

fn kinds(events: &[EventEnvelope], lane: Lane) -> Vec<&'static str> {
    events
        .iter()
        .filter(|e| e.lane == lane)
        .map(|e| e.event.kind())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn setup_handshake_and_a_text_turn() {
    let mut server = ScriptedServer::bind().await;
    let config = SessionConfig::new("gemini-live-2.5-flash-native-audio")
        .text_only()
        .system_instruction("You are terse.");
    let (handle, mut conn, setup, mut events) = start(&mut server, |b| b, config).await;

    assert_eq!(
        setup,
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-native-audio",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "systemInstruction": {"parts": [{"text": "You are terse."}]}
        }})
    );
    assert_eq!(conn.query_param("key"), Some(reel_actors::testing::SCRIPTED_API_KEY));
    assert_eq!(handle.phase(), SessionPhase::Active);

    handle.send_text("Hello").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Hello"}]}], "turnComplete": true}})
    );
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "Hi"}]}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": " there."}]}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 9}}))
        .await;

    let seen = settle(&mut events).await;
    assert_eq!(
        kinds(&seen, Lane::Fast),
        [
            "phase_changed", // Disconnected -> Connecting
            "phase_changed", // -> SetupSent
            "phase_changed", // -> Active
            "text",
            "phase_changed", // -> ModelSpeaking
            "text",
            "text_complete",
            "phase_changed", // -> Active
        ]
    );
    assert_eq!(
        kinds(&seen, Lane::Control),
        [
            "phase_changed",
            "phase_changed",
            "connected",
            "phase_changed",
            "phase_changed",
            "text_complete",
            "turn_complete",
            "phase_changed",
            "usage",
        ]
    );
    let texts: Vec<&str> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::Session(SessionEvent::TextDelta(t) | SessionEvent::TextComplete(t))
                if e.lane == Lane::Fast =>
            {
                Some(t.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Hi", " there.", "Hi there."]);

    let (end, closed) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(closed, Some((1000, "client disconnect".to_owned())));
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert!(!end.failed);
    assert_eq!(handle.telemetry().turns, 1);
    assert_eq!(handle.telemetry().tokens.total, 9);
}
