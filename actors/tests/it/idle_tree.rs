//! Issue 32 item 1, an idle session's memory (decision 0075): which actors a session runs.
//! A session without an `on_usage` callback has no Telemetry actor — the router counts
//! telemetry's events as it routes them — and still counts exactly what telemetry counted,
//! and ends cleanly without waiting for a telemetry lane to drain. With an `on_usage`
//! callback the Telemetry actor runs, as before.

use crate::support;

use std::sync::{Arc, Mutex};

use reel_actors::callbacks::TelemetryCallbacks;
use reel_actors::child::Child;
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_protocol::SessionConfig;
use serde_json::json;
use support::{kinds, settle, start};

/// A turn with everything telemetry counts: a tool call of two calls, an interruption,
/// token usage, the turn's end.
async fn play_a_counted_turn(conn: &mut reel_actors::testing::ServerConn) {
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c1", "name": "nowhere", "args": {}},
        {"id": "c2", "name": "nowhere", "args": {}}
    ]}}))
    .await;
    conn.send_json(&json!({"serverContent": {"interrupted": true}}))
        .await;
    conn.send_json(&json!({
        "serverContent": {"turnComplete": true},
        "usageMetadata": {"promptTokenCount": 5, "responseTokenCount": 4, "totalTokenCount": 9}
    }))
    .await;
}

/// What telemetry counted of the turn: tool calls, interruptions, turns, total tokens.
fn counted(handle: &reel_actors::LiveHandle) -> (u64, u64, u64, u64, u64) {
    let t = handle.telemetry();
    (
        t.tool_calls,
        t.interruptions,
        t.turns,
        t.tokens.prompt,
        t.tokens.total,
    )
}

#[tokio::test(start_paused = true)]
async fn without_on_usage_an_idle_session_runs_five_actors_and_the_router_counts() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _, mut events) =
        start(&mut server, |b| b, SessionConfig::default()).await;
    settle(&mut events).await;
    assert_eq!(
        handle.actors(),
        [
            Child::StateStore,
            Child::FastLane,
            Child::ControlLane,
            Child::Router,
            Child::Transport
        ]
    );

    play_a_counted_turn(&mut conn).await;
    let seen = settle(&mut events).await;
    assert_eq!(
        kinds(&seen, Lane::Control)
            .into_iter()
            .filter(|k| *k != "phase_changed")
            .collect::<Vec<_>>(),
        ["tool_call", "interrupted", "usage", "turn_complete"]
    );
    assert_eq!(counted(&handle), (2, 1, 1, 5, 9));
    // Nothing waits in the telemetry lane: its inbox is closed, nothing was pushed.
    assert_eq!(handle.buffers().telemetry.pushed, 0);

    // The end does not wait for a telemetry lane to drain.
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(
        (end.reason.as_str(), end.failed),
        ("closed with code 1000: client disconnect", false)
    );
    assert_eq!(counted(&handle), (2, 1, 1, 5, 9));
}

#[tokio::test(start_paused = true)]
async fn with_on_usage_the_telemetry_actor_runs_and_counts() {
    let mut server = ScriptedServer::bind().await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&calls);
    let callbacks = TelemetryCallbacks {
        on_usage: Some(Arc::new(move |usage| {
            sink.lock()
                .unwrap()
                .push(usage.total_token_count.unwrap_or_default());
        })),
    };
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.telemetry_callbacks(callbacks),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    assert_eq!(
        handle.actors(),
        [
            Child::StateStore,
            Child::Telemetry,
            Child::FastLane,
            Child::ControlLane,
            Child::Router,
            Child::Transport
        ]
    );

    play_a_counted_turn(&mut conn).await;
    let seen = settle(&mut events).await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e.event, LiveEvent::Restarted { .. })),
        "{seen:?}"
    );
    assert_eq!(*calls.lock().unwrap(), [9]);
    assert_eq!(counted(&handle), (2, 1, 1, 5, 9));

    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(
        (end.reason.as_str(), end.failed),
        ("closed with code 1000: client disconnect", false)
    );
    // Telemetry's lane got its events and the end, and drained them.
    let telemetry = handle.buffers().telemetry;
    assert_eq!(telemetry.pushed, telemetry.finished);
    assert!(telemetry.pushed > 0, "{telemetry:?}");
}
