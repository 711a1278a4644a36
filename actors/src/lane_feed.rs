//! Feeding a lane so that a restart loses nothing but the event whose handling failed.
//!
//! ractor drops a failed actor's mailbox. So the router keeps every batch it sent a lane
//! until the lane reports, through [`LaneProgress`], that it handled the batch's last event;
//! when the supervisor restarts the lane, the router sends the kept batches again. The new
//! instance skips what the old one finished and the one event it was handling when it failed
//! (`started > done`), which is reported instead of retried: a callback that panicked on it
//! would most likely panic again.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reel_protocol::SessionEvent;

use crate::slot::Slot;

/// Events of one frame for one lane, numbered in that lane's sequence.
#[derive(Debug)]
pub struct EventBatch {
    /// The lane sequence number of `events[0]`.
    pub first_seq: u64,
    /// Session time of the frame the events came from.
    pub ts_ms: u64,
    /// The events, in the order the lane must handle them.
    pub events: Vec<SessionEvent>,
}

impl EventBatch {
    /// The events with their lane sequence numbers.
    pub fn numbered(&self) -> impl Iterator<Item = (u64, &SessionEvent)> {
        (self.first_seq..).zip(self.events.iter())
    }

    fn last_seq(&self) -> u64 {
        self.first_seq + self.events.len() as u64 - 1
    }
}

/// How far a lane got: the event it started last, and the last one it finished. Shared by
/// the router and every instance of the lane.
#[derive(Debug, Default)]
pub struct LaneProgress {
    started: AtomicU64,
    done: AtomicU64,
    /// Woken whenever `done` moves (replay waits on it to pace frames by consumption).
    changed: tokio::sync::Notify,
}

impl LaneProgress {
    /// The lane starts handling event `seq`.
    pub fn begin(&self, seq: u64) {
        self.started.store(seq, Ordering::Release);
    }

    /// The lane finished event `seq`.
    pub fn end(&self, seq: u64) {
        self.done.store(seq, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Waits until the lane has finished event `seq`.
    pub async fn wait_done(&self, seq: u64) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.done() >= seq {
                return;
            }
            notified.await;
        }
    }

    /// The last event finished.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    /// The event being handled when the lane failed: started but not finished.
    pub fn failed(&self) -> Option<u64> {
        let started = self.started.load(Ordering::Acquire);
        (started > self.done()).then_some(started)
    }

    /// Whether `seq` should be handled by this instance (not finished by an earlier one, and
    /// not the one an earlier instance failed on). Marks a skipped failed event finished.
    pub fn should_handle(&self, seq: u64, failed: Option<u64>) -> bool {
        if seq <= self.done() {
            return false;
        }
        if failed == Some(seq) {
            self.end(seq);
            return false;
        }
        true
    }
}

/// The router's side of one lane: numbering, sending, and keeping what is not yet handled.
pub struct LaneFeed<M: LaneMessage> {
    next_seq: u64,
    pending: VecDeque<Arc<EventBatch>>,
    progress: Arc<LaneProgress>,
    target: Arc<Slot<M>>,
    wrap: fn(Arc<EventBatch>) -> M,
    /// Set once the session is ending: the lane gets `LaneMessage::shutdown` after its last
    /// batch (again after a restart).
    shutdown_sent: bool,
}

/// The messages a lane takes from its feed.
pub trait LaneMessage: Send + Sized + 'static {
    /// A batch of events.
    fn events(batch: Arc<EventBatch>) -> Self;
    /// No more events: drain and report to the supervisor.
    fn shutdown() -> Self;
}

impl<M: LaneMessage> LaneFeed<M> {
    /// A feed into the lane in `target`.
    pub fn new(target: Arc<Slot<M>>, progress: Arc<LaneProgress>) -> Self {
        LaneFeed {
            next_seq: progress.done() + 1,
            pending: VecDeque::new(),
            progress,
            target,
            wrap: M::events,
            shutdown_sent: false,
        }
    }

    /// Tells the lane no more events follow.
    pub fn send_shutdown(&mut self) {
        self.shutdown_sent = true;
        self.target.cast(M::shutdown());
    }

    /// Sends `events` (of a frame at `ts_ms`) as one batch.
    pub fn send(&mut self, ts_ms: u64, events: Vec<SessionEvent>) {
        if events.is_empty() {
            return;
        }
        let batch = Arc::new(EventBatch {
            first_seq: self.next_seq,
            ts_ms,
            events,
        });
        self.next_seq += batch.events.len() as u64;
        self.trim();
        self.pending.push_back(Arc::clone(&batch));
        // If the lane is down, the batch waits in `pending` for the restarted instance.
        self.target.cast((self.wrap)(batch));
    }

    /// Sends every batch not yet fully handled again, to a restarted lane. Returns the
    /// event the failed instance was handling, if any, for the report.
    pub fn resend(&mut self) -> Option<SessionEvent> {
        self.trim();
        let failed = self.progress.failed().and_then(|seq| {
            self.pending.iter().find_map(|batch| {
                batch
                    .numbered()
                    .find(|(s, _)| *s == seq)
                    .map(|(_, event)| event.clone())
            })
        });
        for batch in &self.pending {
            self.target.cast((self.wrap)(Arc::clone(batch)));
        }
        if self.shutdown_sent {
            self.target.cast(M::shutdown());
        }
        failed
    }

    /// Drops the batches the lane has finished.
    fn trim(&mut self) {
        let done = self.progress.done();
        while self.pending.front().is_some_and(|b| b.last_seq() <= done) {
            self.pending.pop_front();
        }
    }

    /// The sequence number of the last event sent.
    pub fn last_sent(&self) -> u64 {
        self.next_seq - 1
    }

    /// How many events are sent but not yet handled.
    pub fn backlog(&self) -> u64 {
        (self.next_seq - 1).saturating_sub(self.progress.done())
    }
}
