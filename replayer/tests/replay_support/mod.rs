//! Shared pieces of the tests that record a session on loopback and replay it offline
//! (determinism, reactive_replay, extraction_replay): reading a session's events lane by
//! lane, connecting to the scripted server, waiting for an event on the control lane,
//! replaying a recording to its end, and what a session produced that the contract compares.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{
    EventEnvelope, EventStream, Lane, LiveEvent, LiveHandle, LiveSessionBuilder, SessionEnd,
};
use reel_protocol::SessionEvent;
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::WireEntry;
use reel_replayer::{Pacing, Replay, ReplayOptions, Tape, replay_session};
use serde_json::{Value, json};

/// Connects `builder` to `server`, which answers the setup `setup_ms` after reading it:
/// the session's handle and the server's side of the connection.
pub async fn connect(
    builder: LiveSessionBuilder,
    server: &mut ScriptedServer,
    setup_ms: u64,
) -> (LiveHandle, ServerConn) {
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        tokio::time::advance(Duration::from_millis(setup_ms)).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, conn) = tokio::join!(builder.connect(), script);
    (handle.unwrap(), conn)
}

/// Everything `events` still yields, up to the end of the session.
pub async fn drain(events: &mut EventStream) -> Vec<EventEnvelope> {
    let mut all = Vec::new();
    while let Some(event) = events.recv().await {
        all.push(event);
    }
    all
}

/// The events published on `lane`, in order.
pub fn lane(events: &[EventEnvelope], lane: Lane) -> Vec<LiveEvent> {
    events
        .iter()
        .filter(|e| e.lane == lane)
        .map(|e| e.event.clone())
        .collect()
}

/// Waits until the control lane has published a session event matching `pred`: the frame
/// that carried it has been stamped, so moving time on now cannot change its time.
///
/// # Panics
///
/// If the session ends first.
pub async fn seen(sync: &mut EventStream, pred: impl Fn(&SessionEvent) -> bool) {
    while let Some(envelope) = sync.recv().await {
        if envelope.lane == Lane::Control
            && matches!(&envelope.event, LiveEvent::Session(e) if pred(e))
        {
            return;
        }
    }
    panic!("the session ended");
}

/// The end of a model turn, for [`seen`].
pub fn turn_complete(e: &SessionEvent) -> bool {
    matches!(e, SessionEvent::TurnComplete { .. })
}

/// Replays `entries` through `builder` with causal pacing to the end of the tape, then
/// disconnects: the replay, every event it published, and how the session ended.
pub async fn replay_to_end(
    builder: LiveSessionBuilder,
    entries: Vec<WireEntry>,
) -> (Replay, Vec<EventEnvelope>, SessionEnd) {
    replay_paced(builder, entries, Pacing::Causal).await
}

/// Like [`replay_to_end`], at `pacing`.
pub async fn replay_paced(
    builder: LiveSessionBuilder,
    entries: Vec<WireEntry>,
    pacing: Pacing,
) -> (Replay, Vec<EventEnvelope>, SessionEnd) {
    let options = ReplayOptions {
        pacing,
        ..ReplayOptions::default()
    };
    let mut replay = replay_session(builder, Tape::from_entries(entries), options)
        .await
        .unwrap();
    let mut events = replay.events();
    replay.release();
    replay.drained().await;
    let end = replay.disconnect().await;
    let events = drain(&mut events).await;
    (replay, events, end)
}

/// Everything a session produced that the record & replay contract compares.
pub struct Outcome {
    /// Every event the session published, from the start to the end.
    pub events: Vec<EventEnvelope>,
    /// The final state, as JSON.
    pub state: Value,
    /// The journal, entry by entry.
    pub journal: Vec<StateMutation>,
}

impl Outcome {
    /// What the session behind `handle` produced: `events`, its final state, and what
    /// `journal` holds.
    pub fn of(
        events: Vec<EventEnvelope>,
        handle: &LiveHandle,
        journal: &MemoryJournalSink,
    ) -> Self {
        Outcome {
            events,
            state: handle.state().snapshot().to_json(),
            journal: journal.entries(),
        }
    }
}

/// Replays `entries` through `builder` with a fresh journal (see [`replay_to_end`]), checks
/// the session ended with the client's disconnect, and returns what it produced and the
/// replay.
pub async fn replay_outcome(
    builder: LiveSessionBuilder,
    entries: Vec<WireEntry>,
) -> (Outcome, Replay) {
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = builder.journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let (replay, events, end) = replay_to_end(builder, entries).await;
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let outcome = Outcome::of(events, replay.handle(), &journal);
    (outcome, replay)
}
