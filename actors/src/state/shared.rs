//! [`StateShared`]: what every clone of a `State`, every delta view and every StateStore
//! instance of one session share.
//!
//! The data lives here, in an `ArcSwap`, not in the actor: readers load it without a lock,
//! and a restarted StateStore continues from exactly where the failed one stopped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::{ArcSwap, ArcSwapOption, Guard};
use reel_recorder::journal::JournalSink;
use serde_json::Value;

use super::data::{StateData, StateOp};
use super::store::StoreInbox;
use crate::clock::{SharedClock, TokioClock};
use crate::disk::Disk;

/// The shared core of a session's state.
pub(crate) struct StateShared {
    data: ArcSwap<StateData>,
    clock: ArcSwap<SharedClock>,
    sink: ArcSwapOption<Arc<dyn JournalSink>>,
    /// Where the sink's flushes run (see [`Disk`]).
    disk: ArcSwap<Disk>,
    /// Where writes queue for the store, while one is attached.
    store: ArcSwapOption<StoreInbox>,
    /// Serializes writers. Normally only the actor writes, but a write applied directly (no
    /// actor attached, or the attached one gone) may overlap with an actor starting up; the
    /// lock keeps one order either way. Uncontended, it costs a few nanoseconds.
    write_lock: Mutex<()>,
    /// Where the session's control lane is in its stream of events (see
    /// [`State::lane_mark`](super::State::lane_mark)).
    lane_mark: AtomicU64,
}

impl StateShared {
    /// Empty data, the wall clock, no sink, no store.
    pub(crate) fn new() -> Self {
        let clock: SharedClock = Arc::new(TokioClock::from_wall_clock());
        StateShared {
            data: ArcSwap::from_pointee(StateData::default()),
            clock: ArcSwap::from_pointee(clock),
            sink: ArcSwapOption::empty(),
            disk: ArcSwap::from_pointee(Disk::default()),
            store: ArcSwapOption::empty(),
            write_lock: Mutex::new(()),
            lane_mark: AtomicU64::new(0),
        }
    }

    /// The control lane's mark (see [`State::lane_mark`](super::State::lane_mark)).
    pub(crate) fn lane_mark(&self) -> u64 {
        self.lane_mark.load(Ordering::Acquire)
    }

    /// The control lane starts handling an event: the mark turns odd (it stays odd when
    /// a failed predecessor never finished its event).
    pub(crate) fn lane_event_started(&self) {
        let _ = self
            .lane_mark
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |mark| Some(mark | 1));
    }

    /// The control lane finished handling an event: the mark turns even, one past it.
    pub(crate) fn lane_event_finished(&self) {
        let _ = self
            .lane_mark
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |mark| {
                Some(if mark % 2 == 1 { mark + 1 } else { mark })
            });
    }

    /// The current data, without a lock or a copy.
    pub(crate) fn load(&self) -> Guard<Arc<StateData>> {
        self.data.load()
    }

    /// The current data, as an owned `Arc`.
    pub(crate) fn load_full(&self) -> Arc<StateData> {
        self.data.load_full()
    }

    /// The one write path: compute the batch with the pure [`StateData::apply`], hand each
    /// mutation to the sink in order, publish the new data, return the old values.
    ///
    /// A panic in a `Modify` closure unwinds out of here before anything is published or
    /// journaled: the data is untouched.
    pub(crate) fn apply(&self, ops: Vec<StateOp>, delta: bool) -> Vec<Value> {
        // A panic while holding the lock (a Modify closure) leaves nothing half-done, so a
        // poisoned lock is safe to take.
        let _writer = self
            .write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let timestamp_ms = self.clock.load().now_ms();
        let applied = self.data.load().apply(ops, delta, timestamp_ms);
        if !applied.mutations.is_empty() {
            if let Some(sink) = self.sink.load().as_deref() {
                for mutation in &applied.mutations {
                    sink.record(mutation);
                }
            }
            self.data.store(Arc::new(applied.data));
        }
        applied.olds
    }

    /// Sets the session clock.
    pub(crate) fn set_clock(&self, clock: SharedClock) {
        self.clock.store(Arc::new(clock));
    }

    /// The session clock.
    pub(crate) fn clock(&self) -> SharedClock {
        Arc::clone(&self.clock.load())
    }

    /// Sets (or, with `None`, removes) the journal sink.
    pub(crate) fn set_sink(&self, sink: Option<Arc<dyn JournalSink>>) {
        self.sink.store(sink.map(Arc::new));
    }

    /// Sets where the sink's flushes run.
    pub(crate) fn set_disk(&self, disk: Disk) {
        self.disk.store(Arc::new(disk));
    }

    /// Where the sink's flushes run.
    pub(crate) fn disk(&self) -> Disk {
        Disk::clone(&self.disk.load())
    }

    /// The journal sink, if any.
    pub(crate) fn sink(&self) -> Option<Arc<dyn JournalSink>> {
        self.sink.load().as_deref().cloned()
    }

    /// The attached store's inbox, if any.
    pub(crate) fn store(&self) -> Option<Arc<StoreInbox>> {
        self.store.load_full()
    }

    /// Routes writes to the store draining `inbox` from now on.
    pub(crate) fn attach(&self, inbox: Arc<StoreInbox>) {
        self.store.store(Some(inbox));
    }

    /// Applies writes directly from now on.
    pub(crate) fn detach(&self) {
        self.store.store(None);
    }

    /// Detaches the store only if `inbox` is still the one attached (a replacement that was
    /// attached meanwhile stays).
    pub(crate) fn detach_if(&self, inbox: &Arc<StoreInbox>) {
        let current = self.store.load_full();
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, inbox)) {
            self.store.compare_and_swap(&current, None);
        }
    }
}
