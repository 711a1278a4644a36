//! The session clock: the one source of time inside a session tree.
//!
//! Nothing in the tree reads the wall clock directly. The supervisor hands every actor the
//! session's [`Clock`]: live, a [`TokioClock`] anchored at the wall-clock time the session
//! started and advanced by tokio's monotonic time (so a test with paused time is exact);
//! in replay, a [`ManualClock`] set to each recorded frame's timestamp.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of session time, in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + 'static {
    /// The current session time.
    fn now_ms(&self) -> u64;

    /// This clock as a value that reads the same time without going through the shared
    /// pointer, when its reading depends only on what was fixed when it was made (a
    /// [`TokioClock`]); `None` for a clock whose time is set from outside. A reader on a
    /// hot path keeps the copy beside its own state: with thousands of sessions, a clock
    /// read through its own allocation is a cache miss a frame.
    fn detached(&self) -> Option<TokioClock> {
        None
    }
}

/// A clock shared by the actors of a session.
pub type SharedClock = Arc<dyn Clock>;

/// Live time: a wall-clock anchor plus tokio's monotonic time since the anchor.
#[derive(Debug, Clone)]
pub struct TokioClock {
    anchor_ms: u64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// A clock that reads `anchor_ms` now and advances with tokio time.
    pub fn anchored_at(anchor_ms: u64) -> Self {
        TokioClock {
            anchor_ms,
            start: tokio::time::Instant::now(),
        }
    }

    /// A clock anchored at the current wall-clock time.
    pub fn from_wall_clock() -> Self {
        TokioClock::anchored_at(wall_clock_ms())
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.start);
        self.anchor_ms
            .saturating_add(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
    }

    fn detached(&self) -> Option<TokioClock> {
        Some(self.clone())
    }
}

/// A clock that reads whatever it was last set to: replay sets it to each recorded frame's
/// timestamp, tests set it by hand. It never goes backwards.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicU64,
}

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        ManualClock {
            now_ms: AtomicU64::new(now_ms),
        }
    }

    /// Moves the clock to `now_ms` (ignored if that is in the past).
    pub fn set(&self, now_ms: u64) {
        self.now_ms.fetch_max(now_ms, Ordering::AcqRel);
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.now_ms.fetch_add(by, Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
}

/// Event time: the session time of the last event the control lane handled.
///
/// This is the clock state mutations are stamped with. Every event carries the time of the
/// frame it came from (stamped by the transport, or read from the tape in a replay), and the
/// control lane — the single writer of event-derived state — moves this clock to each
/// event's time before handling it. So the journal's timestamps depend only on the frames
/// and their times, and a replay reproduces them exactly.
#[derive(Debug, Default)]
pub struct EventClock {
    now_ms: AtomicU64,
}

impl EventClock {
    /// A clock reading `start_ms` until the first event.
    pub fn new(start_ms: u64) -> Self {
        EventClock {
            now_ms: AtomicU64::new(start_ms),
        }
    }

    /// Moves the clock to `ts_ms` (never backwards).
    pub fn advance_to(&self, ts_ms: u64) {
        self.now_ms.fetch_max(ts_ms, Ordering::AcqRel);
    }
}

impl Clock for EventClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
}

/// The wall clock in epoch milliseconds; used once, to anchor a live session's clock.
pub fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time_exactly() {
        let clock = TokioClock::anchored_at(1_718_000_000_000);
        assert_eq!(clock.now_ms(), 1_718_000_000_000);
        tokio::time::advance(Duration::from_millis(1234)).await;
        assert_eq!(clock.now_ms(), 1_718_000_001_234);
    }

    #[test]
    fn manual_clock_never_goes_backwards() {
        let clock = ManualClock::new(100);
        clock.set(50);
        assert_eq!(clock.now_ms(), 100);
        clock.set(150);
        clock.advance(Duration::from_millis(5));
        assert_eq!(clock.now_ms(), 155);
    }
}
