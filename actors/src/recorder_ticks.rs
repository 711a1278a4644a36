//! [`RecorderTicks`]: one thread that ticks the Recorders of every recording session with
//! frames waiting to be flushed, instead of a timer for each session.
//!
//! A Recorder writes what waits at its [`FLUSH_INTERVAL`] tick (decision 0024's revision).
//! With a timer of its own each Recorder was a timer task woken twenty times a second, then
//! the Recorder's own task, whether its session had recorded anything or not: ten thousand
//! idle recording sessions were four hundred thousand wakes a second for nothing. Here a
//! queue that records an entry after its last tick enrols itself once; every
//! [`FLUSH_INTERVAL`] one thread takes the enrolled queues and sends each Recorder its
//! tick, the message its own timer sent. An idle session is not enrolled and costs no
//! wake; the Recorder does the same with the tick as before, so the bound on what a crash
//! loses (one interval, plus the disk threads' 5 ms) is unchanged.
//!
//! Only where the disk work runs on the process's shared threads (a multi-thread runtime,
//! `Disk::BlockingPool`): a paused clock (tests) and a simulator's disk keep each
//! Recorder's own timer on the session's clock.

use std::sync::atomic::Ordering;
use std::sync::{LazyLock, Mutex, Weak};
use std::time::Instant;

use crate::events::lock;
use crate::mailbox::RecorderTick;
use crate::recorder::{FLUSH_INTERVAL, RecordQueue};

/// The queues to tick at the next [`FLUSH_INTERVAL`], and whether the thread runs.
pub(crate) struct RecorderTicks {
    enrolled: Mutex<Vec<Weak<RecordQueue>>>,
    /// Whether the ticking thread was started (`false` if it could not be).
    started: LazyLock<bool>,
}

static TICKS: RecorderTicks = RecorderTicks {
    enrolled: Mutex::new(Vec::new()),
    started: LazyLock::new(start),
};

fn start() -> bool {
    let spawned = std::thread::Builder::new()
        .name("reel-ticks".to_owned())
        .spawn(|| {
            let mut next = Instant::now() + FLUSH_INTERVAL;
            loop {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                TICKS.tick();
                // After a late tick the next comes at least half an interval after it, not
                // at once.
                let now = Instant::now();
                next = (next + FLUSH_INTERVAL).max(now + FLUSH_INTERVAL / 2);
            }
        });
    match spawned {
        Ok(_) => true,
        Err(error) => {
            tracing::warn!(%error, "could not start the recorders' tick thread");
            false
        }
    }
}

impl RecorderTicks {
    /// The process's ticks.
    pub(crate) fn global() -> &'static RecorderTicks {
        &TICKS
    }

    /// Whether Recorders can be ticked from here (the thread runs). `false`: each keeps a
    /// timer of its own.
    pub(crate) fn available(&'static self) -> bool {
        *self.started
    }

    /// Enrols `queue` for the next tick, unless it is enrolled already.
    pub(crate) fn enrol(&self, queue: &RecordQueue, weak: &Weak<RecordQueue>) {
        if !queue.enrolled.swap(true, Ordering::AcqRel) {
            lock(&self.enrolled).push(Weak::clone(weak));
        }
    }

    /// One tick: every enrolled queue's Recorder gets its tick message. The queue leaves
    /// the list first, so an entry recorded from then on enrols it again, for the next
    /// tick; one recorded before is the Recorder's to write at this one. A queue without a
    /// live Recorder (one restarting, or the session over) leaves: a successor enrols it
    /// at its start if entries wait.
    fn tick(&self) {
        let enrolled = std::mem::take(&mut *lock(&self.enrolled));
        for weak in enrolled {
            if let Some(queue) = weak.upgrade() {
                queue.enrolled.store(false, Ordering::Release);
                queue.mailbox().actor.cast(RecorderTick::Flush);
            }
        }
    }

    /// Whether `queue` waits for the next tick.
    #[cfg(test)]
    pub(crate) fn is_enrolled(queue: &RecordQueue) -> bool {
        queue.enrolled.load(Ordering::Acquire)
    }
}
