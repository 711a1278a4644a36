//! Shared by the session tests: the model's frames, waiting for a turn, and a chain set up
//! to record into memory on a clock anchored at [`T0`].

#![allow(dead_code)] // each test file uses its own subset

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::{ClientFrame, ScriptedServer, ServerConn};
use reel_actors::{EventEnvelope, EventStream, Lane, LiveEvent, LiveHandle};
use reel_fluent::LiveBuilder;
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::{MemoryWireRecorder, WireRecorder};
use serde_json::{Value, json};

/// The recordings' start: 2024-06-10T06:13:20Z.
pub const T0: u64 = 1_718_000_000_000;

/// A model text frame.
pub fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": t}]}}})
}

/// The end of the model's turn.
pub fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

/// Events up to and including the control lane's next turn complete (the turn pipeline is
/// done by then).
pub async fn until_turn_complete(events: &mut EventStream) -> Vec<EventEnvelope> {
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        let done = event.lane == Lane::Control && event.event.kind() == "turn_complete";
        seen.push(event);
        if done {
            return seen;
        }
    }
    panic!("the session ended before the turn completed: {seen:?}");
}

/// The events of one lane, in that lane's order.
pub fn lane(events: &[EventEnvelope], lane: Lane) -> Vec<LiveEvent> {
    events
        .iter()
        .filter(|e| e.lane == lane)
        .map(|e| e.event.clone())
        .collect()
}

/// Every event left on `events`, until the session ends.
pub async fn drain(events: &mut EventStream) -> Vec<EventEnvelope> {
    let mut all = Vec::new();
    while let Some(event) = events.recv().await {
        all.push(event);
    }
    all
}

/// Connects `builder` to `server`, whose side reads the setup frame, lets `delay` of
/// session time pass and accepts it: the live session, the server's connection and the
/// setup frame as sent.
pub async fn accepted(
    builder: LiveBuilder,
    server: &mut ScriptedServer,
    delay: Duration,
) -> (LiveHandle, ServerConn, ClientFrame) {
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv().await.unwrap();
        tokio::time::advance(delay).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (conn, setup)) = tokio::join!(builder.connect(endpoint), script);
    (handle.unwrap(), conn, setup)
}

/// Where a [`recording`] chain records.
pub struct Memory {
    /// The wire log.
    pub wire: Arc<MemoryWireRecorder>,
    /// The journal.
    pub journal: Arc<MemoryJournalSink>,
}

/// `builder` recording its wire log and journal into memory, its clock at [`T0`].
pub fn recording(builder: LiveBuilder) -> (LiveBuilder, Memory) {
    let memory = Memory {
        wire: Arc::new(MemoryWireRecorder::new()),
        journal: Arc::new(MemoryJournalSink::new()),
    };
    let builder = builder
        .record_wire_to(memory.wire.clone() as Arc<dyn WireRecorder>)
        .journal_to(memory.journal.clone() as Arc<dyn JournalSink>)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(T0))));
    (builder, memory)
}

/// A fresh folder in the temporary directory, removed when dropped.
pub struct TempFolder(pub std::path::PathBuf);

impl TempFolder {
    /// `reel-fluent-<name>-<pid>`, created empty.
    pub fn new(name: &str) -> TempFolder {
        let dir = std::env::temp_dir().join(format!("reel-fluent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempFolder(dir)
    }

    /// A path inside it.
    pub fn join(&self, file: &str) -> std::path::PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
