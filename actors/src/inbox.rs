//! [`Inbox`]: a queue that outlives the actor that drains it.
//!
//! A failed instance's own messages go with it, so anything that must survive a restart
//! cannot wait there. Every restartable consumer in the tree (the lanes, telemetry, the state
//! store, the recorder) therefore reads from an `Inbox` it shares with its producers and
//! with its own successors; its instance hears only a doorbell (a flag and a wake-up that
//! say "items are waiting": `crate::mailbox::Instance`).
//!
//! # The one ordering guarantee
//!
//! Items are numbered as they are pushed (1, 2, 3, …) and taken strictly in that order, one
//! at a time, by one consumer. A consumer that fails while handling item `n` leaves `n`
//! marked *in flight*; its successor calls [`Inbox::recover`] when it starts, which hands
//! it what it needs to report `n` (the label taken when `n` was taken) and marks `n`
//! finished. Every item after `n` — whether it was pushed before the failure, during the
//! respawn, or right after — is still in the queue, so it is delivered exactly once, in
//! order, to the successor. There is no re-sending and so no window in which a newer item
//! can overtake an older one.
//!
//! # The doorbell
//!
//! A push rings the doorbell only when no wake is already on its way (`armed`). A consumer
//! drains until [`Inbox::take`] finds the queue empty, which disarms the doorbell under the
//! same lock, so an item pushed after that rings again. A consumer that stops early (it
//! takes at most a chunk per wake, so its other messages are not starved) wakes itself. A
//! new consumer starts armed and wakes itself once: whatever was pushed while no consumer
//! was in place is drained then.
//!
//! A producer may instead claim the drain while the consumer is idle (disarmed: nothing
//! waits, nothing is handled, no wake is on its way) and handle its items on its own task
//! ([`Inbox::claim`], [`Inbox::handle_claim`]; decisions 0086 and 0096). The same numbering,
//! in-flight marks and fault hook apply; the consumer takes nothing while the claim holds,
//! and a successor started meanwhile recovers nothing of the producer's.
//!
//! # Bounds
//!
//! Every inbox declares a capacity and what happens past it ([`Overflow`]): producers that
//! can wait use [`Inbox::push_wait`], which waits for room (backpressure); items that must
//! never be dropped and whose producer cannot wait (reports, control steps) use
//! [`Inbox::push`], which accepts them past the capacity and counts the overshoot; an
//! inbox of droppable items ([`Overflow::DropOldest`]) drops its oldest waiting item and
//! counts it. [`Inbox::stats`] reports the high-water mark, so a test can check that
//! memory stays flat under overload.

use std::any::Any;
use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use std::sync::{Arc, OnceLock};

use tokio::sync::Notify;

use crate::child::Child;
use crate::events::lock;
use crate::fault::FaultHook;

/// What an inbox does with an item pushed when it is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// [`Inbox::push_wait`] waits for room; [`Inbox::push`] accepts the item anyway and
    /// counts it as overshoot. Nothing is ever dropped.
    Wait,
    /// The oldest waiting item is dropped to make room, and counted.
    DropOldest,
}

/// An inbox's declared bound: how many items may wait, and what happens past that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Items that may wait (not counting the one being handled).
    pub capacity: usize,
    /// What a push past `capacity` does.
    pub overflow: Overflow,
}

impl Bound {
    /// A bound of `capacity` items whose producers wait for room.
    pub const fn wait(capacity: usize) -> Self {
        Bound {
            capacity,
            overflow: Overflow::Wait,
        }
    }

    /// A bound of `capacity` items that drops the oldest waiting item when full.
    pub const fn drop_oldest(capacity: usize) -> Self {
        Bound {
            capacity,
            overflow: Overflow::DropOldest,
        }
    }
}

/// Figures of an inbox since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InboxStats {
    /// Items pushed.
    pub pushed: u64,
    /// Items finished by a consumer (handled, or skipped as the failed one).
    pub finished: u64,
    /// Items waiting now.
    pub waiting: usize,
    /// The most items that ever waited at once.
    pub high_water: usize,
    /// Items dropped to make room ([`Overflow::DropOldest`]).
    pub dropped: u64,
    /// Items accepted past the capacity by [`Inbox::push`] ([`Overflow::Wait`]).
    pub overshoot: u64,
    /// Items whose consumer failed while handling them.
    pub failed: u64,
    /// Producers waiting for room now ([`Inbox::push_wait`], [`Inbox::room_for`]): the
    /// backpressure reaching them (for the router's inbox, the socket's reader has stopped).
    pub producers_waiting: usize,
    /// Times its consumer was woken to drain it ([`Inbox::count_wake`]): items finished
    /// per wake is how well the consumer batches (each wake is a trip through its task).
    pub wakes: u64,
    /// Times a producer handled its items in place, the consumer idle
    /// ([`Inbox::claim`]): trips through the consumer's task saved.
    pub in_place: u64,
}

/// The drain of an idle consumer's inbox, claimed for a number of items the claimant holds
/// ([`Inbox::claim`]); spent by [`Inbox::handle_claim`].
#[must_use = "a claim holds the consumer off until it is handled"]
pub struct Claim<T, L> {
    /// The number reserved for the first item.
    first: u64,
    /// How many items it was claimed for.
    count: usize,
    /// The inbox's label function, read under the claim's lock.
    label: fn(&T) -> L,
}

impl<T, L> std::fmt::Debug for Claim<T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("first", &self.first)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// An item taken from an inbox, with its number; hand the number back to
/// [`Inbox::done`] once the item is handled.
#[derive(Debug)]
pub struct Taken<T> {
    /// The item's number (1-based, in push order).
    pub seq: u64,
    /// The item.
    pub item: T,
}

/// The item a failed consumer was handling, as its successor learns it from
/// [`Inbox::recover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed<L> {
    /// The item's number.
    pub seq: u64,
    /// What the inbox's label function said of it when it was taken.
    pub label: L,
}

/// Rings the consumer's doorbell; `false` if no consumer is in place to hear it.
pub type Doorbell = Box<dyn Fn() -> bool + Send + Sync>;

/// `repr(C)`, in this order: what every take, push, claim and reservation reads and writes
/// first (the flags, the low half of the claims' count, the numbers), in the line the
/// [`Inbox`]'s own hot fields start; the queue's own fields, the counts bumped with them,
/// the label of the item in flight and the rare counts after (see [`Inbox`]).
#[repr(C)]
struct Queue<T, L> {
    /// A wake is on its way to the consumer, or a producer drains in place.
    armed: bool,
    /// A producer drains the inbox on its own task ([`Inbox::claim`]): the consumer
    /// takes nothing until it is done.
    claimed: bool,
    /// The consumer looked for items while a producer drained in place: the producer rings
    /// it when it is done.
    deferred: bool,
    /// Pushes are refused: the consumer is gone for good.
    closed: bool,
    /// Claims and reservations granted ([`InboxStats::in_place`]): the low 32 bits, here
    /// beside the flags a claim reads anyway; the high ones in `in_place_high`.
    in_place_low: u32,
    /// The number of `items[0]` (of the next item pushed, when empty).
    head_seq: u64,
    /// The number of the last item taken.
    taken: u64,
    items: VecDeque<T>,
    /// What the inbox's label function says of an item (see [`Inbox::new`]): read with the
    /// items, under the lock, so that a claimant's first item reads the line its last one
    /// reads anyway.
    label: fn(&T) -> L,
    /// The high 32 bits of the claims' count.
    in_place_high: u32,
    /// Producers waiting for room ([`Inbox::room_for`]).
    room_waiters: usize,
    /// What the waiting items weigh ([`Inbox::weighed`]; 0 when not weighed).
    bytes: usize,
    high_water: usize,
    /// The label of the last item taken, until it is finished. Written by a take, and by a
    /// claimant only when it fails (a claim's items are finished when it ends, so nothing
    /// reads a label left from before).
    taken_label: Option<L>,
    dropped: u64,
    overshoot: u64,
    failed: u64,
}

impl<T, L> Queue<T, L> {
    /// Counts a claim or a reservation granted.
    fn count_in_place(&mut self) {
        self.in_place_low = self.in_place_low.wrapping_add(1);
        if self.in_place_low == 0 {
            self.in_place_high += 1;
        }
    }

    /// Claims and reservations granted so far.
    fn in_place(&self) -> u64 {
        (u64::from(self.in_place_high) << 32) | u64::from(self.in_place_low)
    }
}

/// A queue outside the actor that drains it: see the module documentation.
///
/// `repr(C)`, in this order: what numbering an item in place and finishing it touches (the
/// finished count, the count of those waiting for progress, the fault hook, then the
/// queue's lock, flags and numbers) in the inbox's first cache line, the rest after. At
/// thousands of sessions each line an item touches is a cache miss; laid out by the
/// compiler, a claim touched five of an inbox's six (decision 0096); in two lines, a frame
/// the reader routed in place still touched both of the router's. Aligned to a line, so
/// that the first is one line wherever the allocator puts the inbox. A test holds the
/// layout.
#[repr(C, align(64))]
pub struct Inbox<T, L = ()> {
    /// The number of the last item finished. Only the consumer writes it.
    finished: AtomicU64,
    progress_waiters: AtomicUsize,
    /// A fault injector and the child it speaks for, if one is installed. Boxed: a pointer
    /// keeps the line's other fields in it.
    fault: OnceLock<Box<(Child, Arc<dyn FaultHook>)>>,
    queue: Mutex<Queue<T, L>>,
    bound: Bound,
    /// A bound in bytes besides the bound in items, and what an item weighs
    /// ([`Inbox::weighed`]).
    weight: Option<(usize, Weigh<T>)>,
    doorbell: Doorbell,
    /// Wakes of its consumer ([`Inbox::count_wake`]).
    wakes: AtomicU64,
    name: &'static str,
    /// Woken when the queue falls below its capacity.
    room: Notify,
    /// Woken when an item is finished, while someone waits for that.
    progress: Notify,
}

/// What an item weighs, in bytes ([`Inbox::weighed`]).
pub type Weigh<T> = fn(&T) -> usize;

impl<T, L> std::fmt::Debug for Inbox<T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("name", &self.name)
            .field("bound", &self.bound)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// A push refused because the inbox is closed (its consumer is gone for good); the item
/// comes back so the producer can handle it another way.
#[derive(Debug, PartialEq, Eq)]
pub struct Closed<T>(pub T);

impl<T, L> Inbox<T, L> {
    /// An empty inbox called `name` (used in logs), bounded by `bound`, whose consumer is
    /// woken by `doorbell`. `label` describes a taken item, for the report if its consumer
    /// fails while handling it; it runs on every take, so keep it cheap.
    pub fn new(name: &'static str, bound: Bound, label: fn(&T) -> L, doorbell: Doorbell) -> Self {
        Inbox {
            name,
            bound,
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                label,
                head_seq: 1,
                taken: 0,
                taken_label: None,
                // The first consumer wakes itself when it starts.
                armed: true,
                claimed: false,
                in_place_low: 0,
                in_place_high: 0,
                deferred: false,
                room_waiters: 0,
                closed: false,
                high_water: 0,
                dropped: 0,
                overshoot: 0,
                failed: 0,
                bytes: 0,
            }),
            finished: AtomicU64::new(0),
            doorbell,
            room: Notify::new(),
            progress: Notify::new(),
            progress_waiters: AtomicUsize::new(0),
            wakes: AtomicU64::new(0),
            fault: OnceLock::new(),
            weight: None,
        }
    }

    /// The same inbox, also bounded by what its waiting items weigh: full once they weigh
    /// `max_bytes` or more (as it is at its capacity in items), `weigh` telling an item's
    /// weight. For an inbox whose items differ in size by orders of magnitude (text frames
    /// and audio chunks): small items batch deep, large ones do not pile up.
    pub fn weighed(mut self, max_bytes: usize, weigh: Weigh<T>) -> Self {
        self.weight = Some((max_bytes, weigh));
        self
    }

    /// What `item` weighs (0 for an inbox bounded in items only).
    fn weigh(&self, item: &T) -> usize {
        self.weight.map_or(0, |(_, weigh)| weigh(item))
    }

    /// Whether `queue` is at its bound, in items or in bytes.
    fn is_full(&self, queue: &Queue<T, L>) -> bool {
        queue.items.len() >= self.bound.capacity
            || self.weight.is_some_and(|(max, _)| queue.bytes >= max)
    }

    /// Whether `queue` has drained to half its bound, in items and in bytes: where waiting
    /// producers are woken.
    fn is_at_low_water(&self, queue: &Queue<T, L>) -> bool {
        queue.items.len() * 2 <= self.bound.capacity
            && self
                .weight
                .is_none_or(|(max, _)| queue.bytes.saturating_mul(2) <= max)
    }

    /// Installs a fault injector, called for `child` on every take (see
    /// [`crate::fault`]). Only the first one installed counts.
    pub fn set_fault_hook(&self, child: Child, hook: Arc<dyn FaultHook>) {
        let _ = self.fault.set(Box::new((child, hook)));
    }

    /// Pushes `item` now, whatever the fill: see [`Overflow`] for what happens when the
    /// inbox is full. Returns the item's number, or the item back if the inbox is closed.
    pub fn push(&self, item: T) -> Result<u64, Closed<T>> {
        let (seq, ring) = {
            let mut queue = lock(&self.queue);
            if queue.closed {
                return Err(Closed(item));
            }
            let seq = self.enqueue(&mut queue, item);
            (seq, !std::mem::replace(&mut queue.armed, true))
        };
        if ring {
            (self.doorbell)();
        }
        Ok(seq)
    }

    /// Pushes `items` in order, under one lock and with at most one ring, whatever the fill
    /// (as [`Inbox::push`]). Returns the number of the last one (or of the last item pushed
    /// before, if `items` is empty); the items back if the inbox is closed.
    pub fn push_all(&self, items: impl IntoIterator<Item = T>) -> Result<u64, Closed<Vec<T>>> {
        let (seq, ring) = {
            let mut queue = lock(&self.queue);
            if queue.closed {
                return Err(Closed(items.into_iter().collect()));
            }
            let mut seq = queue.head_seq + queue.items.len() as u64 - 1;
            let mut pushed_any = false;
            for item in items {
                seq = self.enqueue(&mut queue, item);
                pushed_any = true;
            }
            (
                seq,
                pushed_any && !std::mem::replace(&mut queue.armed, true),
            )
        };
        if ring {
            (self.doorbell)();
        }
        Ok(seq)
    }

    /// Pushes `item` once the inbox has room (at once if it has): the way a producer that
    /// can wait applies backpressure. For an inbox that drops its oldest, the same as
    /// [`Inbox::push`].
    pub async fn push_wait(&self, item: T) -> Result<u64, Closed<T>> {
        if self.bound.overflow == Overflow::Wait {
            // The common case takes the lock once: room is checked where the item goes in.
            let item = match self.push_if_room(item) {
                Ok(pushed) => return pushed,
                Err(item) => item,
            };
            // Producers that find room at the same moment may overshoot by one each:
            // counted, never dropped.
            self.room().await;
            return self.push(item);
        }
        self.push(item)
    }

    /// Pushes `item` if the inbox has room for it (or is closed, which refuses it); hands it
    /// back untouched if it is full.
    fn push_if_room(&self, item: T) -> Result<Result<u64, Closed<T>>, T> {
        let (seq, ring) = {
            let mut queue = lock(&self.queue);
            if queue.closed {
                return Ok(Err(Closed(item)));
            }
            if self.is_full(&queue) {
                return Err(item);
            }
            let seq = self.enqueue(&mut queue, item);
            (seq, !std::mem::replace(&mut queue.armed, true))
        };
        if ring {
            (self.doorbell)();
        }
        Ok(Ok(seq))
    }

    /// Waits until the inbox has room for one more item (at once if it has, or if it is
    /// closed). For producers whose push itself cannot wait.
    pub async fn room(&self) {
        self.room_for(1).await;
    }

    /// Waits until the inbox has room for `n` more items, or is empty (so a batch larger
    /// than the capacity still goes, into an empty inbox), or is closed. For a producer
    /// that pushes a batch with [`Inbox::push_all`].
    ///
    /// A producer that had to wait is woken once the consumer has drained the inbox to half
    /// its capacity, not at every item taken: under sustained backpressure producers and
    /// consumer then hand over in batches instead of one item at a time.
    pub async fn room_for(&self, n: usize) {
        // The common case costs one lock: no waiter is registered while there is room.
        if self.has_room_for(n) {
            return;
        }
        let _waiting = RoomWaiter::register(self);
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if self.has_room_for(n) {
                return;
            }
            room.await;
        }
    }

    /// Whether `n` more items fit now (or the inbox is empty, or closed): what
    /// [`Inbox::room_for`] waits for, asked without waiting.
    pub fn has_room_for(&self, n: usize) -> bool {
        let queue = lock(&self.queue);
        queue.closed
            || queue.items.is_empty()
            || (queue.items.len() + n <= self.bound.capacity
                && self.weight.is_none_or(|(max, _)| queue.bytes < max))
    }

    /// Appends `item`, applying the overflow policy if the queue is full.
    fn enqueue(&self, queue: &mut Queue<T, L>, item: T) -> u64 {
        if self.is_full(queue) {
            match self.bound.overflow {
                Overflow::Wait => queue.overshoot += 1,
                Overflow::DropOldest => {
                    if let Some(dropped) = queue.items.pop_front() {
                        queue.bytes -= self.weigh(&dropped);
                        queue.head_seq += 1;
                        queue.dropped += 1;
                    }
                }
            }
        }
        let seq = queue.head_seq + queue.items.len() as u64;
        queue.bytes += self.weigh(&item);
        queue.items.push_back(item);
        queue.high_water = queue.high_water.max(queue.items.len());
        seq
    }

    /// Takes the next item for the consumer, marking it in flight; `None` when the queue is
    /// empty (which disarms the doorbell: the next push rings), or while a producer drains
    /// in place (which rings the consumer once it is done). The previous item taken must
    /// have been handed to [`Inbox::done`].
    pub fn take(&self) -> Option<Taken<T>> {
        let mut queue = lock(&self.queue);
        if queue.claimed {
            queue.deferred = true;
            return None;
        }
        let Some(item) = queue.items.pop_front() else {
            queue.armed = false;
            return None;
        };
        Some(self.taken(queue, item))
    }

    /// Marks `item`, just popped from `queue`, in flight and runs the fault hook for it.
    fn taken(&self, mut queue: MutexGuard<'_, Queue<T, L>>, item: T) -> Taken<T> {
        queue.bytes -= self.weigh(&item);
        let seq = queue.head_seq;
        queue.head_seq += 1;
        queue.taken = seq;
        queue.taken_label = Some((queue.label)(&item));
        // Producers waiting for room are woken at the low-water mark (half the capacity).
        let wake_producers = queue.room_waiters > 0 && self.is_at_low_water(&queue);
        drop(queue);
        if wake_producers {
            self.room.notify_waiters();
        }
        if let Some((child, hook)) = self.fault.get().map(|fault| &**fault) {
            // Marked in flight already: a panic here fails the consumer on this item.
            hook.before(*child, seq);
        }
        Taken { seq, item }
    }

    /// Claims the drain for `count` items the caller holds, if the consumer is idle: no
    /// wake on its way, so the inbox is empty and nobody handles an item of it (and it is
    /// not closed). The items are numbered as if pushed now, ahead of anything pushed while
    /// the claim holds, but never queued: the caller hands them and the claim to
    /// [`Inbox::handle_claim`], which handles them on its own task exactly as the consumer
    /// would. `None` (and nothing changed) if the consumer is not idle or `count` is 0.
    ///
    /// While the claim holds, pushes ring nobody and the consumer takes nothing; a
    /// successor started meanwhile recovers nothing of the claimant's (decision 0096).
    pub fn claim(&self, count: usize) -> Option<Claim<T, L>> {
        let mut queue = lock(&self.queue);
        if queue.armed || queue.claimed || queue.closed || count == 0 {
            return None;
        }
        // Disarmed means empty (a take disarms only on finding nothing; a push arms), so
        // the numbers reserved here are the next ones and come before any pushed later.
        let first = queue.head_seq;
        queue.head_seq += count as u64;
        queue.taken = queue.head_seq - 1;
        queue.armed = true;
        queue.claimed = true;
        queue.count_in_place();
        Some(Claim {
            first,
            count,
            label: queue.label,
        })
    }

    /// Handles the items of `claim` (from [`Inbox::claim`], exactly `claim`'s count of
    /// them, in order) with `handle`, then every item pushed while the claim held; the
    /// claim ends once nothing waits (the consumer is rung if it looked meanwhile). Each
    /// item gets the fault hook, its in-flight mark and its finish, as the consumer's own
    /// take would give it.
    ///
    /// A panic while handling one (the fault hook's or `handle`'s) ends the claim with that
    /// item in flight, the caller's items after it queued again ahead of the rest, and the
    /// doorbell left armed so nothing rings the failing instance: fail the consumer's
    /// instance with the returned panic, and its successor recovers the item
    /// ([`Inbox::recover`]) and takes what follows.
    pub fn handle_claim<I>(
        &self,
        claim: Claim<T, L>,
        items: I,
        mut handle: impl FnMut(T),
    ) -> Result<(), Box<dyn Any + Send>>
    where
        I: DoubleEndedIterator<Item = T> + ExactSizeIterator,
    {
        debug_assert_eq!(items.len(), claim.count, "a claim's items, all of them");
        let mut items = items;
        let mut seq = claim.first;
        let mut in_hand: Option<L> = None;
        let held = catch_unwind(AssertUnwindSafe(|| {
            for item in items.by_ref() {
                in_hand = Some((claim.label)(&item));
                self.before_handling(seq);
                handle(item);
                self.done(seq);
                seq += 1;
            }
        }));
        if let Err(panic) = held {
            self.release_failed_at(seq, in_hand, items);
            return Err(panic);
        }
        catch_unwind(AssertUnwindSafe(|| {
            while let Some(taken) = self.take_claimed() {
                handle(taken.item);
                self.done(taken.seq);
            }
        }))
        .inspect_err(|_| self.release_failed())
    }

    /// Ends a claim whose claimant failed on its own item `seq` (labelled `label`): the
    /// item is left in flight for the successor, and `rest` (the claimant's items after it)
    /// goes back to the queue's front under the numbers reserved for it. A closed inbox
    /// gets no successor: the item and the rest are counted finished instead.
    fn release_failed_at(
        &self,
        seq: u64,
        label: Option<L>,
        rest: impl DoubleEndedIterator<Item = T>,
    ) {
        let mut queue = lock(&self.queue);
        queue.claimed = false;
        queue.deferred = false;
        if queue.closed {
            drop(queue);
            self.done(seq + rest.count() as u64);
            return;
        }
        queue.taken = seq;
        queue.taken_label = label;
        for item in rest.rev() {
            queue.bytes += self.weigh(&item);
            queue.items.push_front(item);
            queue.head_seq -= 1;
        }
        queue.high_water = queue.high_water.max(queue.items.len());
    }

    /// For the claimant ([`Inbox::claim`]): the next item pushed while the claim held,
    /// marked in flight as [`Inbox::take`] marks it. `None` once the queue is empty, which
    /// ends the claim: the doorbell is disarmed, or rung if the consumer looked for items
    /// meanwhile.
    fn take_claimed(&self) -> Option<Taken<T>> {
        let mut queue = lock(&self.queue);
        if let Some(item) = queue.items.pop_front() {
            return Some(self.taken(queue, item));
        }
        let ring = std::mem::take(&mut queue.deferred);
        queue.claimed = false;
        queue.armed = ring;
        drop(queue);
        if ring {
            (self.doorbell)();
        }
        None
    }

    /// Numbers one item the caller handles itself, if the consumer is idle (as for
    /// [`Inbox::claim`]: nothing waits, nothing is handled, no wake on its way): `None`
    /// otherwise (push it then). For a consumer whose state the caller holds locked while
    /// it handles the item, so that the consumer takes nothing meanwhile (the router: the
    /// reader routes a frame with the router's state held, decision 0096): nobody is held
    /// off, and an item pushed meanwhile rings the consumer as ever and comes after it. The
    /// caller runs [`Inbox::before_handling`] with the number, handles the item and hands
    /// the number to [`Inbox::done`]; if handling it fails, [`Inbox::hold_failed`].
    pub fn reserve(&self) -> Option<u64> {
        let mut queue = lock(&self.queue);
        if queue.armed || queue.claimed || queue.closed {
            return None;
        }
        let seq = queue.head_seq;
        queue.head_seq += 1;
        queue.taken = seq;
        queue.count_in_place();
        Some(seq)
    }

    /// For a producer whose work in place failed (after [`Inbox::reserve`]): arms the
    /// doorbell, so no producer works in place any more and pushes ring nobody, as for a
    /// consumer that failed on its own task; its successor, if it gets one, recovers the
    /// item in flight and wakes itself.
    pub fn hold_failed(&self) {
        let mut queue = lock(&self.queue);
        queue.armed = true;
        // A reserved item has no label: the one left from an earlier take is not its.
        queue.taken_label = None;
    }

    /// For the claimant: handling the queued item in flight failed. Ends the claim and
    /// leaves the doorbell armed, so nothing rings the failing instance; its successor
    /// recovers the item ([`Inbox::recover`]) and wakes itself for the rest.
    fn release_failed(&self) {
        let mut queue = lock(&self.queue);
        queue.claimed = false;
        queue.deferred = false;
    }

    /// Takes up to `max` items at once, in order, under one lock, appending them to `out`;
    /// returns their numbers, or `None` when the queue is empty (which disarms the
    /// doorbell, as [`Inbox::take`] does). Call [`Inbox::before_handling`] with each number
    /// before handling its item, and hand the last to [`Inbox::done`] once all are handled.
    ///
    /// Only for a consumer that is never restarted (the router: its failure ends the
    /// session). Items taken together are not recovered one by one: a successor would not
    /// learn which of them its predecessor failed on, and would not get the others again.
    pub fn take_batch(&self, max: usize, out: &mut Vec<T>) -> Option<RangeInclusive<u64>> {
        let mut queue = lock(&self.queue);
        let count = max.min(queue.items.len());
        if count == 0 {
            queue.armed = false;
            return None;
        }
        let first = queue.head_seq;
        let before = out.len();
        out.extend(queue.items.drain(..count));
        if self.weight.is_some() {
            let taken: usize = out[before..].iter().map(|item| self.weigh(item)).sum();
            queue.bytes -= taken;
        }
        queue.head_seq += count as u64;
        let last = queue.head_seq - 1;
        queue.taken = last;
        queue.taken_label = None;
        let wake_producers = queue.room_waiters > 0 && self.is_at_low_water(&queue);
        drop(queue);
        if wake_producers {
            self.room.notify_waiters();
        }
        Some(first..=last)
    }

    /// Runs the fault hook, if one is installed, for item `seq` of a batch from
    /// [`Inbox::take_batch`], right before it is handled ([`Inbox::take`] runs it itself):
    /// an injected failure then strikes with the items before it handled, as it would had
    /// they been taken one at a time.
    pub fn before_handling(&self, seq: u64) {
        if let Some((child, hook)) = self.fault.get().map(|fault| &**fault) {
            hook.before(*child, seq);
        }
    }

    /// The consumer finished item `seq` (handled it, whatever the outcome).
    pub fn done(&self, seq: u64) {
        // SeqCst here and in `wait_finished`: a waiter that registers after this load
        // reads the new `finished` after registering, so no wake-up is lost. The largest
        // wins: a claimant may finish its item on another task after `close` counted
        // everything finished.
        self.finished.fetch_max(seq, Ordering::SeqCst);
        if self.progress_waiters.load(Ordering::SeqCst) > 0 {
            self.progress.notify_waiters();
        }
    }

    /// For a consumer starting: the item its predecessor failed on, if it failed while
    /// handling one (marked finished now: it is reported, not retried). The new consumer
    /// owns a wake from now on and must wake itself once it can take messages.
    pub fn recover(&self) -> Option<Failed<L>> {
        let mut queue = lock(&self.queue);
        queue.armed = true;
        if queue.claimed {
            // The item in flight is a producer's, draining in place: not failed. The new
            // consumer is rung once the producer is done.
            queue.deferred = true;
            return None;
        }
        let label = queue.taken_label.take();
        let finished = self.finished.load(Ordering::Acquire);
        if queue.taken <= finished {
            return None;
        }
        let seq = queue.taken;
        queue.failed += 1;
        drop(queue);
        self.done(seq);
        label.map(|label| Failed { seq, label })
    }

    /// Refuses every push from now on and returns what was still waiting, in order, counted
    /// as finished (for a consumer that stops for good and handles the rest another way).
    pub fn close(&self) -> Vec<T> {
        let mut queue = lock(&self.queue);
        queue.closed = true;
        let rest: Vec<T> = queue.items.drain(..).collect();
        queue.bytes = 0;
        queue.head_seq += rest.len() as u64;
        let last = queue.head_seq - 1;
        drop(queue);
        self.room.notify_waiters();
        // Handed over: nobody waiting for them to be finished waits any longer.
        if !rest.is_empty() {
            self.done(last.max(self.finished()));
        }
        rest
    }

    /// The number of the last item pushed (0 before any).
    pub fn last_pushed(&self) -> u64 {
        let queue = lock(&self.queue);
        queue.head_seq + queue.items.len() as u64 - 1
    }

    /// The number of the last item finished.
    pub fn finished(&self) -> u64 {
        self.finished.load(Ordering::Acquire)
    }

    /// Waits until item `seq` is finished (at once if it is).
    pub async fn wait_finished(&self, seq: u64) {
        if self.finished() >= seq {
            return;
        }
        // Counted while it waits, however the wait ends: returned, or its future dropped
        // (a timeout, a `select!` that took another branch).
        let _waiting = ProgressWaiter::register(&self.progress_waiters);
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.finished.load(Ordering::SeqCst) >= seq {
                break;
            }
            notified.await;
        }
    }

    /// Items waiting now.
    pub fn len(&self) -> usize {
        lock(&self.queue).items.len()
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The inbox's figures.
    pub fn stats(&self) -> InboxStats {
        let queue = lock(&self.queue);
        InboxStats {
            pushed: queue.head_seq + queue.items.len() as u64 - 1,
            finished: self.finished(),
            waiting: queue.items.len(),
            high_water: queue.high_water,
            dropped: queue.dropped,
            overshoot: queue.overshoot,
            failed: queue.failed,
            producers_waiting: queue.room_waiters,
            wakes: self.wakes.load(Ordering::Relaxed),
            in_place: queue.in_place(),
        }
    }

    /// Counts one wake of the consumer (its runner calls it for each doorbell it
    /// handles): reported in [`InboxStats::wakes`].
    pub fn count_wake(&self) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a producer waiting for room while it waits (so takes know to wake it), and
/// stops counting it when it stops waiting, however it stops.
struct RoomWaiter<'a, T, L> {
    inbox: &'a Inbox<T, L>,
}

impl<'a, T, L> RoomWaiter<'a, T, L> {
    fn register(inbox: &'a Inbox<T, L>) -> Self {
        lock(&inbox.queue).room_waiters += 1;
        RoomWaiter { inbox }
    }
}

impl<T, L> Drop for RoomWaiter<'_, T, L> {
    fn drop(&mut self) {
        let mut queue = lock(&self.inbox.queue);
        queue.room_waiters = queue.room_waiters.saturating_sub(1);
    }
}

/// Counts a task waiting for progress ([`Inbox::wait_finished`]) while it waits, so
/// [`Inbox::done`] knows to notify, and stops counting it when it stops waiting, however it
/// stops.
struct ProgressWaiter<'a> {
    count: &'a AtomicUsize,
}

impl<'a> ProgressWaiter<'a> {
    fn register(count: &'a AtomicUsize) -> Self {
        // SeqCst, paired with `done`: see there.
        count.fetch_add(1, Ordering::SeqCst);
        ProgressWaiter { count }
    }
}

impl Drop for ProgressWaiter<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;

    use super::*;

    /// An inbox of numbers labelled by their value, whose doorbell counts its rings.
    pub(crate) fn inbox(bound: Bound) -> (Inbox<u32, u32>, Arc<AtomicU32>) {
        let rings = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&rings);
        let doorbell: Doorbell = Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            true
        });
        (Inbox::new("test", bound, |n| *n, doorbell), rings)
    }

    /// Takes and finishes everything waiting; returns the items.
    pub(crate) fn drain(inbox: &Inbox<u32, u32>) -> Vec<u32> {
        let mut seen = Vec::new();
        while let Some(taken) = inbox.take() {
            seen.push(taken.item);
            inbox.done(taken.seq);
        }
        seen
    }

    /// An inbox of numbers, each weighing its value in bytes, full at `max_bytes`.
    fn weighed(bound: Bound, max_bytes: usize) -> Inbox<u32, u32> {
        inbox(bound).0.weighed(max_bytes, |n| *n as usize)
    }

    #[test]
    fn a_weighed_inbox_is_full_at_its_bytes_before_its_items() {
        let inbox = weighed(Bound::wait(100), 10);
        // 4 + 5 = 9 bytes: room. 9 + 3 = 12: full, with 3 items of a possible 100.
        assert!(matches!(inbox.push_if_room(4), Ok(Ok(1))));
        assert!(matches!(inbox.push_if_room(5), Ok(Ok(2))));
        assert!(inbox.has_room_for(1));
        assert!(matches!(inbox.push_if_room(3), Ok(Ok(3))));
        assert!(!inbox.has_room_for(1));
        assert_eq!(inbox.push_if_room(1), Err(1));
        // Taking frees the bytes: one take (4) leaves 8 bytes, room again.
        let taken = inbox.take().unwrap();
        inbox.done(taken.seq);
        assert!(inbox.has_room_for(1));
        // A batch take frees what the batch weighs.
        let mut out = Vec::new();
        assert_eq!(inbox.take_batch(8, &mut out), Some(2..=3));
        assert_eq!(out, [5, 3]);
        assert_eq!(lock(&inbox.queue).bytes, 0);
        // An item heavier than the whole bound still goes into an empty inbox.
        assert!(inbox.has_room_for(1));
        assert!(matches!(inbox.push_if_room(50), Ok(Ok(4))));
        assert_eq!(lock(&inbox.queue).bytes, 50);
        inbox.close();
        assert_eq!(lock(&inbox.queue).bytes, 0);
    }

    #[test]
    fn a_weighed_inbox_that_drops_its_oldest_drops_by_bytes_too() {
        let inbox = weighed(Bound::drop_oldest(100), 10);
        inbox.push_all([6, 3, 2]).unwrap();
        // 11 bytes waiting, at the bound: the next push drops the oldest (6).
        inbox.push(1).unwrap();
        assert_eq!(lock(&inbox.queue).bytes, 6);
        assert_eq!(inbox.stats().dropped, 1);
        assert_eq!(drain(&inbox), [3, 2, 1]);
        assert_eq!(lock(&inbox.queue).bytes, 0);
    }

    #[tokio::test]
    async fn a_producer_waiting_on_bytes_is_woken_at_half_of_them() {
        let inbox = Arc::new(weighed(Bound::wait(100), 10));
        inbox.push_all([4, 4, 4]).unwrap();
        let producer = {
            let inbox = Arc::clone(&inbox);
            tokio::spawn(async move { inbox.push_wait(1).await })
        };
        tokio::task::yield_now().await;
        assert!(!producer.is_finished(), "12 bytes of 10: full");
        // 8 bytes: below the bound but above half of it, no wake yet.
        let taken = inbox.take().unwrap();
        inbox.done(taken.seq);
        tokio::task::yield_now().await;
        assert!(!producer.is_finished(), "8 bytes is above half of 10");
        // 4 bytes: at most half, the producer goes.
        let taken = inbox.take().unwrap();
        inbox.done(taken.seq);
        assert_eq!(producer.await.unwrap(), Ok(4));
    }

    #[test]
    fn a_failed_item_is_reported_once_and_everything_after_it_is_delivered_in_order() {
        let (inbox, _) = inbox(Bound::wait(100));
        inbox.push_all([1, 2, 3]).unwrap();
        // The first consumer handles 1, then fails while handling 2.
        let first = inbox.take().unwrap();
        inbox.done(first.seq);
        let failing = inbox.take().unwrap();
        assert_eq!((failing.seq, failing.item), (2, 2));
        // The consumer dies here: `failing` is never handed to `done`.
        // Items arrive while no consumer is in place, and right after the successor starts.
        inbox.push(4).unwrap();
        assert_eq!(inbox.recover(), Some(Failed { seq: 2, label: 2 }));
        inbox.push_all([5, 6]).unwrap();
        assert_eq!(drain(&inbox), [3, 4, 5, 6]);
        // A later successor finds nothing to report.
        assert_eq!(inbox.recover(), None);
        let stats = inbox.stats();
        assert_eq!(
            (stats.pushed, stats.finished, stats.failed, stats.waiting),
            (6, 6, 1, 0)
        );
    }

    #[test]
    fn the_doorbell_rings_once_per_drain() {
        let (inbox, rings) = inbox(Bound::wait(100));
        // A new inbox is armed: its first consumer wakes itself.
        inbox.push(1).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        assert_eq!(drain(&inbox), [1]);
        // Drained to empty: the next push rings, the ones after it do not.
        inbox.push(2).unwrap();
        inbox.push_all([3, 4]).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 1);
        assert_eq!(drain(&inbox), [2, 3, 4]);
        // An empty push_all does not ring.
        inbox.push_all([]).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 1);
        // A successor owns a wake: pushes before it drains do not ring.
        inbox.push(5).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 2);
        assert_eq!(inbox.recover(), None);
        inbox.push(6).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 2);
        assert_eq!(drain(&inbox), [5, 6]);
    }

    #[test]
    fn drop_oldest_keeps_the_newest_and_counts_the_dropped() {
        let (inbox, _) = inbox(Bound::drop_oldest(3));
        inbox.push_all(1..=5).unwrap();
        assert_eq!(drain(&inbox), [3, 4, 5]);
        let stats = inbox.stats();
        assert_eq!((stats.pushed, stats.dropped, stats.high_water), (5, 2, 3));
    }

    #[test]
    fn wait_accepts_past_the_capacity_only_through_push() {
        let (inbox, _) = inbox(Bound::wait(2));
        inbox.push_all([1, 2, 3]).unwrap();
        let stats = inbox.stats();
        assert_eq!((stats.overshoot, stats.high_water), (1, 3));
        assert_eq!(drain(&inbox), [1, 2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn push_wait_waits_for_room() {
        let (inbox, _) = inbox(Bound::wait(2));
        let inbox = Arc::new(inbox);
        inbox.push_all([1, 2]).unwrap();
        let producer = {
            let inbox = Arc::clone(&inbox);
            tokio::spawn(async move { inbox.push_wait(3).await })
        };
        tokio::task::yield_now().await;
        assert!(
            !producer.is_finished(),
            "the producer waits while the inbox is full"
        );
        assert_eq!(inbox.len(), 2);
        assert_eq!(inbox.stats().producers_waiting, 1);
        let taken = inbox.take().unwrap();
        inbox.done(taken.seq);
        assert_eq!(producer.await.unwrap(), Ok(3));
        assert_eq!(inbox.stats().producers_waiting, 0);
        assert_eq!(drain(&inbox), [2, 3]);
        assert_eq!(inbox.stats().overshoot, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_waits_for_room_for_all_of_it_and_wakes_at_half_the_capacity() {
        let (inbox, _) = inbox(Bound::wait(8));
        let inbox = Arc::new(inbox);
        inbox.push_all(1..=7).unwrap();
        let producer = {
            let inbox = Arc::clone(&inbox);
            tokio::spawn(async move {
                inbox.room_for(3).await;
                inbox.push_all([8, 9, 10])
            })
        };
        let mut taken = Vec::new();
        for expected_waiting in [6, 5] {
            tokio::task::yield_now().await;
            assert!(
                !producer.is_finished(),
                "no room for 3 with {} waiting",
                inbox.len()
            );
            let item = inbox.take().unwrap();
            inbox.done(item.seq);
            taken.push(item.item);
            assert_eq!(inbox.len(), expected_waiting);
        }
        // 5 waiting: room for 3, but the producer is woken at the low-water mark (4).
        tokio::task::yield_now().await;
        assert!(!producer.is_finished());
        let item = inbox.take().unwrap();
        inbox.done(item.seq);
        taken.push(item.item);
        assert_eq!(producer.await.unwrap(), Ok(10));
        taken.extend(drain(&inbox));
        assert_eq!(taken, (1..=10).collect::<Vec<_>>());
        let stats = inbox.stats();
        assert_eq!((stats.overshoot, stats.high_water), (0, 7));
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_larger_than_the_capacity_goes_into_an_empty_inbox() {
        let (inbox, _) = inbox(Bound::wait(2));
        inbox.room_for(5).await;
        inbox.push_all(1..=5).unwrap();
        assert_eq!(drain(&inbox), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_batch_is_taken_in_order_up_to_its_size_and_an_empty_take_disarms() {
        let (inbox, rings) = inbox(Bound::wait(10));
        inbox.push_all(1..=5).unwrap();
        let mut out = Vec::new();
        assert_eq!(inbox.take_batch(3, &mut out), Some(1..=3));
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(inbox.take_batch(3, &mut out), Some(4..=5));
        assert_eq!(out, [1, 2, 3, 4, 5]);
        inbox.done(5);
        assert_eq!(inbox.take_batch(3, &mut out), None);
        assert_eq!(inbox.finished(), 5);
        let before = rings.load(Ordering::SeqCst);
        inbox.push(6).unwrap();
        assert_eq!(
            rings.load(Ordering::SeqCst),
            before + 1,
            "the empty take disarmed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn push_wait_with_room_pushes_at_once_and_closed_refuses() {
        let (inbox, _) = inbox(Bound::wait(2));
        assert_eq!(inbox.push_wait(1).await, Ok(1));
        assert_eq!(inbox.push_wait(2).await, Ok(2));
        inbox.close();
        assert_eq!(inbox.push_wait(3).await, Err(Closed(3)));
    }

    #[tokio::test(start_paused = true)]
    async fn wait_finished_returns_once_the_item_is_done() {
        let (inbox, _) = inbox(Bound::wait(10));
        let inbox = Arc::new(inbox);
        let last = inbox.push_all([1, 2]).unwrap();
        let waiter = {
            let inbox = Arc::clone(&inbox);
            tokio::spawn(async move { inbox.wait_finished(last).await })
        };
        let first = inbox.take().unwrap();
        inbox.done(first.seq);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        let second = inbox.take().unwrap();
        inbox.done(second.seq);
        waiter.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_wait_finished_stops_counting_its_waiter() {
        let (inbox, _) = inbox(Bound::wait(10));
        let last = inbox.push_all([1, 2]).unwrap();
        // Given up on (virtual time runs out) while the item is not finished: the future
        // is dropped mid-wait.
        let waited = tokio::time::timeout(Duration::from_millis(10), inbox.wait_finished(last));
        assert!(waited.await.is_err(), "nothing finished item {last}");
        assert_eq!(inbox.progress_waiters.load(Ordering::SeqCst), 0);
        // And a wait that returns leaves none behind either.
        drain(&inbox);
        inbox.wait_finished(last).await;
        assert_eq!(inbox.progress_waiters.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_closed_inbox_refuses_pushes_and_hands_back_what_waited() {
        let (inbox, _) = inbox(Bound::wait(10));
        inbox.push_all([1, 2]).unwrap();
        assert_eq!(inbox.close(), [1, 2]);
        assert_eq!(inbox.push(3), Err(Closed(3)));
        assert_eq!(inbox.push_all([4]), Err(Closed(vec![4])));
        assert_eq!(inbox.finished(), 2);
    }

    /// Numbering an item in place and finishing it reads one line of the inbox: the
    /// finished count, the waiters' count, the fault hook and the queue's lock, flags and
    /// numbers all lie in its first; a claim reads one more, the items' and the label
    /// function's. Fails if a field or the lock grows.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn an_item_numbered_in_place_reads_one_line() {
        use std::mem::{offset_of, size_of};
        type Router = Inbox<u32, u32>;
        assert_eq!(std::mem::align_of::<Router>(), 64);
        assert_eq!(offset_of!(Router, finished), 0);
        let queue = offset_of!(Router, queue);
        let lock_fields = size_of::<Mutex<Queue<u32, u32>>>() - size_of::<Queue<u32, u32>>();
        let last_hot = queue + lock_fields + offset_of!(Queue<u32, u32>, taken) + 7;
        assert!(last_hot < 64, "the hot fields end at byte {last_hot}");
        // A claim reads the label function with the lock, and its end finds the items
        // empty: one more line, the same one.
        let items = queue + lock_fields + offset_of!(Queue<u32, u32>, items);
        let label_end = queue + lock_fields + offset_of!(Queue<u32, u32>, label) + 7;
        assert_eq!((items / 64, label_end / 64), (1, 1));
    }

    /// The count of claims and reservations is exact past 32 bits.
    #[test]
    fn the_in_place_count_carries_into_its_high_half() {
        let (inbox, _) = inbox(Bound::wait(2));
        assert!(
            inbox.take().is_none(),
            "an empty take disarms: the consumer is idle"
        );
        {
            let mut queue = lock(&inbox.queue);
            queue.in_place_low = u32::MAX - 1;
            queue.count_in_place();
            assert_eq!(queue.in_place(), u64::from(u32::MAX));
        }
        let seq = inbox.reserve().expect("idle");
        inbox.done(seq);
        assert_eq!(inbox.stats().in_place, 1 << 32);
    }
}
