//! What a session tells the application: [`LiveEvent`]s, published by the lane that handled
//! them, to every [`EventStream`] subscribed at the time.
//!
//! Each lane numbers its own events, so a subscriber can check the per-lane order that
//! replay guarantees ("each lane's event sequence equal"); the interleaving of lanes is up
//! to the scheduler, in production as in replay.
//!
//! Streams are unbounded: a subscriber that subscribes before events flow loses nothing. A
//! subscriber that stops reading holds the events it has not read; drop the stream to stop.

use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use reel_protocol::SessionEvent;
use serde_json::Value;
use tokio::sync::mpsc;

/// Which part of the tree an event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    /// The fast lane: audio, text, transcripts, voice activity, phase.
    Fast,
    /// The control lane: tools, turns, conversation phases, lifecycle.
    Control,
    /// The supervisor: restarts, reconnects, the end of the session.
    Supervisor,
}

impl Lane {
    /// The lane's name: `fast`, `control`, `supervisor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Fast => "fast",
            Lane::Control => "control",
            Lane::Supervisor => "supervisor",
        }
    }
}

/// Something that happened in a live session.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LiveEvent {
    /// A protocol event, as the lane handled it.
    Session(SessionEvent),
    /// A tool call was dispatched.
    ToolStarted {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// A tool call's response was sent to the model.
    ToolFinished {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// The response the model got.
        response: Value,
        /// Whether the tool succeeded.
        ok: bool,
    },
    /// A tool call was cancelled by the server; no response is sent for it.
    ToolCancelled {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// The conversation moved to another phase.
    PhaseTransition {
        /// The phase left.
        from: String,
        /// The phase entered.
        to: String,
        /// Why (the transition's description, or the guard that fired).
        reason: String,
    },
    /// An extractor produced a value (written to the state just before).
    Extraction {
        /// The extractor.
        name: String,
        /// What it extracted.
        value: Value,
    },
    /// An extractor failed; nothing was written for it.
    ExtractionError {
        /// The extractor.
        name: String,
        /// Why (the error's message).
        error: String,
    },
    /// The session was restored from a persisted snapshot (published once, when it is
    /// live, before `on_resumed` runs).
    Resumed {
        /// The phase it resumed in ("" without phases).
        phase: String,
        /// The turns completed before.
        turn_count: u32,
    },
    /// The connection is being re-established.
    Reconnecting {
        /// 1 for the first attempt.
        attempt: u32,
        /// Why: `go_away`, or what broke the connection.
        reason: String,
    },
    /// The connection is back.
    Reconnected {
        /// Whether the server resumed the session from a handle.
        resumed: bool,
    },
    /// A lane (or the telemetry, state or recorder actor) failed and was restarted.
    Restarted {
        /// Which one.
        actor: crate::child::Child,
        /// Restarts of this actor so far.
        restarts: u32,
        /// Why it failed (the panic message).
        reason: String,
    },
    /// The session is over; no event follows.
    SessionEnded {
        /// Why: a clean disconnect, the server's close, or a failure past the restart limit.
        reason: String,
    },
}

impl LiveEvent {
    /// A short, stable name of the event kind (the protocol event's kind for `Session`).
    pub fn kind(&self) -> &'static str {
        match self {
            LiveEvent::Session(event) => event.kind(),
            LiveEvent::ToolStarted { .. } => "tool_started",
            LiveEvent::ToolFinished { .. } => "tool_finished",
            LiveEvent::ToolCancelled { .. } => "tool_cancelled",
            LiveEvent::PhaseTransition { .. } => "phase_transition",
            LiveEvent::Extraction { .. } => "extraction",
            LiveEvent::ExtractionError { .. } => "extraction_error",
            LiveEvent::Resumed { .. } => "resumed",
            LiveEvent::Reconnecting { .. } => "reconnecting",
            LiveEvent::Reconnected { .. } => "reconnected",
            LiveEvent::Restarted { .. } => "restarted",
            LiveEvent::SessionEnded { .. } => "session_ended",
        }
    }
}

/// An event with where it came from and its place in that lane's sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct EventEnvelope {
    /// The lane that published it.
    pub lane: Lane,
    /// 1-based position in that lane's sequence.
    pub seq: u64,
    /// The event.
    pub event: LiveEvent,
}

/// Fans events out to subscribers. Shared by the lanes of one session.
#[derive(Debug, Default)]
pub struct EventHub {
    subscribers: Mutex<Vec<mpsc::UnboundedSender<EventEnvelope>>>,
    /// Cheap check on the hot path: publishing with no subscriber costs one load.
    subscriber_count: AtomicUsize,
    fast_seq: AtomicU64,
    control_seq: AtomicU64,
    supervisor_seq: AtomicU64,
    closed: std::sync::atomic::AtomicBool,
}

impl EventHub {
    /// A hub with no subscribers.
    pub fn new() -> Self {
        EventHub::default()
    }

    /// A stream of every event published from now on.
    pub fn subscribe(&self) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut subscribers = lock(&self.subscribers);
        if !self.closed.load(Ordering::Acquire) {
            subscribers.push(tx);
            self.subscriber_count
                .store(subscribers.len(), Ordering::Release);
        }
        EventStream { rx }
    }

    /// Publishes `event` from `lane`, numbering it in that lane's sequence.
    pub fn publish(&self, lane: Lane, event: LiveEvent) {
        self.publish_with(lane, || event);
    }

    /// Like [`EventHub::publish`], but makes the event only if someone is listening: the
    /// lane's sequence advances either way.
    pub fn publish_with(&self, lane: Lane, make: impl FnOnce() -> LiveEvent) {
        let counter = match lane {
            Lane::Fast => &self.fast_seq,
            Lane::Control => &self.control_seq,
            Lane::Supervisor => &self.supervisor_seq,
        };
        let seq = counter.fetch_add(1, Ordering::AcqRel) + 1;
        if self.subscriber_count.load(Ordering::Acquire) == 0 {
            return;
        }
        let envelope = EventEnvelope {
            lane,
            seq,
            event: make(),
        };
        let mut subscribers = lock(&self.subscribers);
        // A send fails only when the stream was dropped: forget that subscriber.
        subscribers.retain(|tx| tx.send(envelope.clone()).is_ok());
        self.subscriber_count
            .store(subscribers.len(), Ordering::Release);
    }

    /// How many events `lane` has published.
    pub fn published(&self, lane: Lane) -> u64 {
        match lane {
            Lane::Fast => self.fast_seq.load(Ordering::Acquire),
            Lane::Control => self.control_seq.load(Ordering::Acquire),
            Lane::Supervisor => self.supervisor_seq.load(Ordering::Acquire),
        }
    }

    /// Ends every stream (after the events already published) and refuses new subscribers.
    pub fn close(&self) {
        let mut subscribers = lock(&self.subscribers);
        self.closed.store(true, Ordering::Release);
        subscribers.clear();
        self.subscriber_count.store(0, Ordering::Release);
    }
}

/// Locks a mutex, recovering the data if a panicking holder poisoned it (the lists guarded
/// here stay consistent whatever a panic interrupted).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The events of a session, in publication order; ends when the session ends.
#[derive(Debug)]
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<EventEnvelope>,
}

impl EventStream {
    /// The next event, or `None` once the session has ended and every event was read.
    pub async fn recv(&mut self) -> Option<EventEnvelope> {
        self.rx.recv().await
    }

    /// The next event if one is ready now.
    pub fn try_recv(&mut self) -> Option<EventEnvelope> {
        self.rx.try_recv().ok()
    }

    /// Events until none arrives for `idle` (or `max` has passed, or the stream ends).
    /// Meant for tests and replay: with paused time, `idle` passes only once the whole
    /// tree is quiet.
    pub async fn collect_until_idle(
        &mut self,
        idle: Duration,
        max: Duration,
    ) -> Vec<EventEnvelope> {
        let deadline = tokio::time::Instant::now() + max;
        let mut events = Vec::new();
        loop {
            let wait = idle.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
            match tokio::time::timeout(wait, self.rx.recv()).await {
                Ok(Some(event)) => events.push(event),
                Ok(None) | Err(_) => return events,
            }
        }
    }
}

impl futures_util::Stream for EventStream {
    type Item = EventEnvelope;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<EventEnvelope>> {
        self.rx.poll_recv(cx)
    }
}
