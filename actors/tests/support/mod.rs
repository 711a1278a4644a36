//! Shared by the session tests: start a session against a scripted server, read events
//! until the tree is quiet, build frames.

#![allow(dead_code)] // each test file uses its own subset

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventEnvelope, EventStream, Lane, LiveHandle, LiveSessionBuilder};
use reel_protocol::SessionConfig;
use serde_json::{Value, json};

pub const T0: u64 = 1_718_000_000_000;

/// Starts a session built by `build` against `server`, answers its setup, and returns the
/// handle, the server side of the connection, the setup frame it sent and an event stream
/// subscribed before anything flowed.
pub async fn start(
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
pub async fn settle(events: &mut EventStream) -> Vec<EventEnvelope> {
    events
        .collect_until_idle(Duration::from_millis(500), Duration::from_secs(60))
        .await
}

/// Each restart among `events`: which child, and its restart count then.
pub fn restarts(events: &[EventEnvelope]) -> Vec<(&'static str, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            reel_actors::LiveEvent::Restarted {
                actor, restarts, ..
            } => Some((actor.as_str(), *restarts)),
            _ => None,
        })
        .collect()
}

pub fn kinds(events: &[EventEnvelope], lane: Lane) -> Vec<&'static str> {
    events
        .iter()
        .filter(|e| e.lane == lane)
        .map(|e| e.event.kind())
        .collect()
}

/// A server frame carrying `bytes` of model audio.
pub fn audio_frame(bytes: &[u8]) -> Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": reel_protocol::Base64Data(bytes::Bytes::copy_from_slice(bytes)).encode()}}]}}})
}
