//! What a session tells the application: [`LiveEvent`]s, published by the lane that handled
//! them, to every [`EventStream`] subscribed at the time.
//!
//! Each lane numbers its own events, so a subscriber can check the per-lane order that
//! replay guarantees ("each lane's event sequence equal"); the interleaving of lanes is up
//! to the scheduler, in production as in replay.
//!
//! Streams are bounded ([`SUBSCRIBER_CAPACITY`] events by default): a subscriber that
//! subscribes before events flow and keeps up loses nothing. One that falls behind by more
//! than its capacity does not hold the session's memory hostage: the events that do not fit
//! are dropped for it alone, and where they are missing its stream carries one
//! [`LiveEvent::Lagged`] saying how many. The lanes never wait for a subscriber.
//!
//! A stream always ends the same way, however far behind it is when the session ends: the
//! events it holds, then a `Lagged` notice for those that did not fit (if any), then
//! [`LiveEvent::SessionEnded`]. The two markers wait beside the full stream, not in it. A
//! stream subscribed after the end yields the end alone.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
        /// The tool's name.
        name: String,
        /// Its arguments (`null` if the model sent none), as the frame carried them.
        args: reel_protocol::Args,
    },
    /// A tool call's response was sent to the model.
    ToolFinished {
        /// The call id.
        call_id: String,
        /// The tool's name.
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
        /// The tool's name.
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
        /// The extractor's name.
        name: String,
        /// What it extracted.
        value: Value,
    },
    /// An extractor failed; nothing was written for it.
    ExtractionError {
        /// The extractor's name.
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
    /// This subscriber fell behind: `missed` events that did not fit in its stream were
    /// dropped for it, here (its other subscribers, and the session, are not affected). Not
    /// numbered in any lane's sequence (its `seq` is 0).
    Lagged {
        /// How many events this stream missed.
        missed: u64,
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
            LiveEvent::Lagged { .. } => "lagged",
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

/// How many events a stream holds before the ones that do not fit are dropped for it.
pub const SUBSCRIBER_CAPACITY: usize = 4096;

/// What a stream reads after its channel has ended: the markers that did not fit in it when
/// the session ended.
type Tail = Arc<Mutex<VecDeque<EventEnvelope>>>;

/// One subscriber: where its events go, how many it missed since its last delivered one,
/// and the end of the session if it did not fit.
#[derive(Debug)]
struct Subscriber {
    tx: mpsc::Sender<EventEnvelope>,
    missed: u64,
    /// `SessionEnded`, kept when the stream was full: it is never dropped.
    held_end: Option<EventEnvelope>,
    tail: Tail,
}

/// What a send to one subscriber did.
enum Delivery {
    Sent,
    Full,
    /// Full, and the event is the end of the session, kept for the stream's tail.
    Held,
    Gone,
}

impl Subscriber {
    fn send(&mut self, envelope: &EventEnvelope) -> Delivery {
        if self.held_end.is_some() {
            // Nothing follows the end (the hub closes right after it), but if something
            // did, it must not overtake the held end.
            self.missed += 1;
            return Delivery::Full;
        }
        if self.missed > 0 {
            let lagged = EventEnvelope {
                lane: Lane::Supervisor,
                seq: 0,
                event: LiveEvent::Lagged {
                    missed: self.missed,
                },
            };
            match self.tx.try_send(lagged) {
                Ok(()) => self.missed = 0,
                Err(mpsc::error::TrySendError::Full(_)) => return self.not_sent(envelope),
                Err(mpsc::error::TrySendError::Closed(_)) => return Delivery::Gone,
            }
        }
        match self.tx.try_send(envelope.clone()) {
            Ok(()) => Delivery::Sent,
            Err(mpsc::error::TrySendError::Full(_)) => self.not_sent(envelope),
            Err(mpsc::error::TrySendError::Closed(_)) => Delivery::Gone,
        }
    }

    /// `envelope` did not fit: the end of the session is kept, anything else is missed.
    fn not_sent(&mut self, envelope: &EventEnvelope) -> Delivery {
        if matches!(envelope.event, LiveEvent::SessionEnded { .. }) {
            self.held_end = Some(envelope.clone());
            Delivery::Held
        } else {
            self.missed += 1;
            Delivery::Full
        }
    }

    /// The hub closed: what did not fit goes to the stream's tail — a `Lagged` notice for
    /// the events missed since the last one delivered, then the held end — and the channel
    /// ends (the sender is dropped after the tail is written, so a reader that sees the
    /// channel end finds the tail complete).
    fn finish(self) {
        let mut tail = lock(&self.tail);
        if self.missed > 0 {
            tail.push_back(EventEnvelope {
                lane: Lane::Supervisor,
                seq: 0,
                event: LiveEvent::Lagged {
                    missed: self.missed,
                },
            });
        }
        tail.extend(self.held_end);
        drop(tail);
        drop(self.tx);
    }
}

/// Fans events out to subscribers. Shared by the lanes of one session.
///
/// `repr(C)`, in this order: what publishing an event with no subscriber reads (the
/// subscribers' count and the fast lane's number) in its first 16 bytes, which never
/// straddle two cache lines; laid out by the compiler, they could, and a frame at thousands
/// of sessions paid a miss for each (decision 0098).
#[derive(Debug, Default)]
#[repr(C)]
pub struct EventHub {
    /// Cheap check on the hot path: publishing with no subscriber costs one load.
    subscriber_count: AtomicUsize,
    fast_seq: AtomicU64,
    control_seq: AtomicU64,
    supervisor_seq: AtomicU64,
    /// Events dropped for lagging subscribers, in all.
    lagged: AtomicU64,
    closed: std::sync::atomic::AtomicBool,
    subscribers: Mutex<Vec<Subscriber>>,
    /// The end of the session once published, for the streams subscribed after it.
    end: Mutex<Option<EventEnvelope>>,
}

impl EventHub {
    /// A hub with no subscribers.
    pub fn new() -> Self {
        EventHub::default()
    }

    /// A stream of every event published from now on, holding up to
    /// [`SUBSCRIBER_CAPACITY`] unread events.
    pub fn subscribe(&self) -> EventStream {
        self.subscribe_with_capacity(SUBSCRIBER_CAPACITY)
    }

    /// A stream of every event published from now on, holding up to `capacity` unread
    /// events (at least 2: one event and the `Lagged` marker before it). Subscribed after
    /// the session ended, it yields the end (`SessionEnded`) alone.
    pub fn subscribe_with_capacity(&self, capacity: usize) -> EventStream {
        let (tx, rx) = mpsc::channel(capacity.max(2));
        let tail = Tail::default();
        let mut subscribers = lock(&self.subscribers);
        if self.closed.load(Ordering::Acquire) {
            // Too late for any event but the end, which every stream gets.
            lock(&tail).extend(lock(&self.end).clone());
        } else {
            subscribers.push(Subscriber {
                tx,
                missed: 0,
                held_end: None,
                tail: Arc::clone(&tail),
            });
            self.subscriber_count
                .store(subscribers.len(), Ordering::Release);
        }
        EventStream { rx, tail }
    }

    /// Publishes `event` from `lane`, numbering it in that lane's sequence.
    pub fn publish(&self, lane: Lane, event: LiveEvent) {
        let end = matches!(event, LiveEvent::SessionEnded { .. }).then(|| event.clone());
        let seq = self.publish_numbered(lane, || event);
        if let Some(event) = end {
            *lock(&self.end) = Some(EventEnvelope { lane, seq, event });
        }
    }

    /// Like [`EventHub::publish`], but makes the event only if someone is listening: the
    /// lane's sequence advances either way.
    pub fn publish_with(&self, lane: Lane, make: impl FnOnce() -> LiveEvent) {
        self.publish_numbered(lane, make);
    }

    /// Reads what publishing an event with no subscriber reads (see
    /// [`crate::router::InPlaceRouter::warm`]); the value means nothing.
    pub(crate) fn warm(&self) -> u64 {
        self.fast_seq.load(Ordering::Relaxed) ^ self.subscriber_count.load(Ordering::Relaxed) as u64
    }

    /// [`EventHub::publish_with`], returning the event's number in its lane.
    fn publish_numbered(&self, lane: Lane, make: impl FnOnce() -> LiveEvent) -> u64 {
        let counter = match lane {
            Lane::Fast => &self.fast_seq,
            Lane::Control => &self.control_seq,
            Lane::Supervisor => &self.supervisor_seq,
        };
        let seq = counter.fetch_add(1, Ordering::AcqRel) + 1;
        if self.subscriber_count.load(Ordering::Acquire) == 0 {
            return seq;
        }
        let envelope = EventEnvelope {
            lane,
            seq,
            event: make(),
        };
        let mut subscribers = lock(&self.subscribers);
        let mut dropped = 0;
        // A stream that was dropped is forgotten; a full one misses this event.
        subscribers.retain_mut(|subscriber| match subscriber.send(&envelope) {
            Delivery::Sent => true,
            Delivery::Full => {
                dropped += 1;
                true
            }
            Delivery::Held => true,
            Delivery::Gone => false,
        });
        self.subscriber_count
            .store(subscribers.len(), Ordering::Release);
        drop(subscribers);
        if dropped > 0 {
            self.lagged.fetch_add(dropped, Ordering::Relaxed);
        }
        seq
    }

    /// Events dropped for lagging subscribers so far, over all of them.
    pub fn lagged(&self) -> u64 {
        self.lagged.load(Ordering::Relaxed)
    }

    /// How many events `lane` has published.
    pub fn published(&self, lane: Lane) -> u64 {
        match lane {
            Lane::Fast => self.fast_seq.load(Ordering::Acquire),
            Lane::Control => self.control_seq.load(Ordering::Acquire),
            Lane::Supervisor => self.supervisor_seq.load(Ordering::Acquire),
        }
    }

    /// Ends every stream (after the events already published, and the `Lagged` notice and
    /// end of the session that did not fit in it) and refuses new subscribers.
    pub fn close(&self) {
        let mut subscribers = lock(&self.subscribers);
        self.closed.store(true, Ordering::Release);
        for subscriber in subscribers.drain(..) {
            subscriber.finish();
        }
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
    rx: mpsc::Receiver<EventEnvelope>,
    /// Read once `rx` has ended: the markers that did not fit in it.
    tail: Tail,
}

impl EventStream {
    /// The next event, or `None` once the session has ended and every event was read.
    pub async fn recv(&mut self) -> Option<EventEnvelope> {
        match self.rx.recv().await {
            Some(event) => Some(event),
            None => self.next_of_tail(),
        }
    }

    /// The next event if one is ready now.
    pub fn try_recv(&mut self) -> Option<EventEnvelope> {
        match self.rx.try_recv() {
            Ok(event) => Some(event),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => self.next_of_tail(),
        }
    }

    fn next_of_tail(&self) -> Option<EventEnvelope> {
        lock(&self.tail).pop_front()
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
            match tokio::time::timeout(wait, self.recv()).await {
                Ok(Some(event)) => events.push(event),
                Ok(None) | Err(_) => return events,
            }
        }
    }
}

impl futures_util::Stream for EventStream {
    type Item = EventEnvelope;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<EventEnvelope>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(None) => Poll::Ready(self.next_of_tail()),
            other => other,
        }
    }
}
