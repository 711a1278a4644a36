//! [`Instance`]: one running instance of an inbox consumer on its own task — what its
//! doorbell rings, where its own messages wait, its timers — and [`InstanceSlot`], the
//! current instance of a child, which the supervisor points at each new one.
//!
//! The doorbell is an atomic flag and a [`Bell`] (one waiter, no lock): a ring allocates
//! nothing and sends no message (the inbox itself already rings at most once until its
//! consumer finds it empty).
//! Own messages (a timer's tick) are rare; they wait in a small queue beside the flag.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use tokio::task::AbortHandle;

use crate::bell::Bell;
use crate::events::lock;

/// The instance takes rings and messages.
const RUNNING: u8 = 0;
/// Asked to stop: it finishes what it handles, runs `stopped`, and ends.
const STOPPING: u8 = 1;
/// Its task ended (stopped, failed, or aborted): rings and messages are refused.
const ENDED: u8 = 2;

/// Numbers instances, process-wide, so each has an id no other had.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One running instance of a consumer whose own messages are `M`: a cheap handle (an
/// `Arc`), given to the consumer at its start, kept in its child's [`InstanceSlot`].
pub struct Instance<M: Send + 'static> {
    shared: Arc<Shared<M>>,
}

struct Shared<M> {
    id: u64,
    state: AtomicU8,
    /// Items wait in the inbox: the doorbell rang.
    rung: AtomicBool,
    /// Wakes the instance's task: a ring, an own message, a stop.
    bell: Bell,
    /// Its own messages, in the order they were sent.
    own: Mutex<VecDeque<M>>,
    /// Its timers' tasks, aborted when it ends.
    timers: Mutex<Vec<AbortHandle>>,
    /// Why it must fail, told from outside ([`InstanceSlot::fail`]): a producer that
    /// handled its items in place failed on one.
    failure: Mutex<Option<String>>,
    /// `failure` holds a reason (read without its lock on every wake).
    failing: AtomicBool,
}

impl<M: Send + 'static> Clone for Instance<M> {
    fn clone(&self) -> Self {
        Instance {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<M: Send + 'static> std::fmt::Debug for Instance<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("id", &self.shared.id)
            .field("state", &self.shared.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<M: Send + 'static> Instance<M> {
    /// A new instance, running, with an id of its own.
    pub(crate) fn new() -> Self {
        Instance {
            shared: Arc::new(Shared {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                state: AtomicU8::new(RUNNING),
                rung: AtomicBool::new(false),
                bell: Bell::default(),
                own: Mutex::new(VecDeque::new()),
                timers: Mutex::new(Vec::new()),
                failure: Mutex::new(None),
                failing: AtomicBool::new(false),
            }),
        }
    }

    /// Its id: no other instance in the process has had it.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// Whether its task still runs (it may be stopping).
    pub fn is_running(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) != ENDED
    }

    /// Rings its doorbell: items wait in its inbox. `false` if it ended.
    pub fn ring(&self) -> bool {
        self.shared.ring()
    }

    /// Sends it one of its own messages. `false` if it no longer takes messages (it is
    /// stopping, or ended).
    pub fn cast(&self, message: M) -> bool {
        self.shared.cast(message)
    }

    /// Sends it `message()` after `after`, unless it ended by then (the timer ends with it).
    pub fn send_after<F>(&self, after: Duration, message: F)
    where
        F: FnOnce() -> M + Send + 'static,
    {
        let weak = Arc::downgrade(&self.shared);
        self.timer(async move {
            tokio::time::sleep(after).await;
            if let Some(instance) = upgrade(&weak) {
                instance.cast(message());
            }
        });
    }

    /// Sends it `message()` every `every`, the first after `every`, until it ends.
    pub fn send_interval<F>(&self, every: Duration, message: F)
    where
        F: Fn() -> M + Send + 'static,
    {
        let weak = Arc::downgrade(&self.shared);
        self.timer(async move {
            loop {
                tokio::time::sleep(every).await;
                match upgrade(&weak) {
                    Some(instance) if instance.cast(message()) => {}
                    _ => break,
                }
            }
        });
    }

    /// Runs `timer` on a task of its own, aborted when the instance ends.
    fn timer(&self, timer: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut timers = lock(&self.shared.timers);
        if !self.is_running() {
            return;
        }
        timers.retain(|timer| !timer.is_finished());
        timers.push(tokio::spawn(timer).abort_handle());
    }

    /// How many of its timers run.
    #[cfg(test)]
    pub(crate) fn timers(&self) -> usize {
        lock(&self.shared.timers)
            .iter()
            .filter(|timer| !timer.is_finished())
            .count()
    }

    /// Asks it to stop: it finishes what it is handling, runs `stopped`, and ends.
    pub fn stop(&self) {
        InstanceControl::stop(&*self.shared);
    }

    /// Whether it was asked to stop (or ended).
    pub(crate) fn stopping(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) != RUNNING
    }

    /// Takes the doorbell's ring, if it rang since the last take.
    pub(crate) fn take_ring(&self) -> bool {
        self.shared.rung.swap(false, Ordering::AcqRel)
    }

    /// Leaves the doorbell rung: the instance goes on draining without waiting.
    pub(crate) fn ring_again(&self) {
        self.shared.rung.store(true, Ordering::Release);
    }

    /// Takes why it must fail, if it was told ([`InstanceSlot::fail`]).
    pub(crate) fn take_failure(&self) -> Option<String> {
        if !self.shared.failing.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.shared.failure).take()
    }

    /// Takes its oldest own message.
    pub(crate) fn take_message(&self) -> Option<M> {
        lock(&self.shared.own).pop_front()
    }

    /// Waits for a ring, a message or a stop (at once if one came since the last wait).
    pub(crate) async fn wait(&self) {
        self.shared.bell.wait().await;
    }

    /// Its task ended: refuses rings and messages from now on, drops what waited, ends its
    /// timers.
    pub(crate) fn end(&self) {
        self.shared.state.store(ENDED, Ordering::Release);
        lock(&self.shared.own).clear();
        for timer in lock(&self.shared.timers).drain(..) {
            timer.abort();
        }
    }

    /// What the supervisor holds of it, whatever its messages.
    pub(crate) fn control(&self) -> Arc<dyn InstanceControl> {
        Arc::clone(&self.shared) as Arc<dyn InstanceControl>
    }
}

impl<M> Shared<M> {
    /// See [`Instance::ring`].
    fn ring(&self) -> bool {
        if self.state.load(Ordering::Acquire) == ENDED {
            return false;
        }
        self.rung.store(true, Ordering::Release);
        self.bell.ring();
        true
    }

    /// See [`Instance::cast`].
    fn cast(&self, message: M) -> bool {
        if self.state.load(Ordering::Acquire) != RUNNING {
            return false;
        }
        lock(&self.own).push_back(message);
        self.bell.ring();
        true
    }
}

fn upgrade<M: Send + 'static>(weak: &Weak<Shared<M>>) -> Option<Instance<M>> {
    weak.upgrade().map(|shared| Instance { shared })
}

/// What the supervisor does to an instance without knowing its messages.
pub(crate) trait InstanceControl: Send + Sync {
    /// Its id.
    fn id(&self) -> u64;
    /// Asks it to stop ([`Instance::stop`]).
    fn stop(&self);
}

impl<M: Send + 'static> InstanceControl for Shared<M> {
    fn id(&self) -> u64 {
        self.id
    }

    fn stop(&self) {
        let _ = self
            .state
            .compare_exchange(RUNNING, STOPPING, Ordering::AcqRel, Ordering::Acquire);
        self.bell.ring();
    }
}

/// The current instance of a consumer child: the supervisor's runner points it at each new
/// instance (before its first drain), the doorbell rings whatever it holds.
pub struct InstanceSlot<M: Send + 'static> {
    current: ArcSwapOption<Shared<M>>,
}

impl<M: Send + 'static> Default for InstanceSlot<M> {
    fn default() -> Self {
        InstanceSlot {
            current: ArcSwapOption::empty(),
        }
    }
}

impl<M: Send + 'static> std::fmt::Debug for InstanceSlot<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.current.load().as_ref() {
            Some(instance) => write!(f, "InstanceSlot({})", instance.id),
            None => f.write_str("InstanceSlot(empty)"),
        }
    }
}

impl<M: Send + 'static> InstanceSlot<M> {
    /// Points the slot at `instance`.
    pub fn set(&self, instance: Instance<M>) {
        self.current.store(Some(instance.shared));
    }

    /// Empties the slot (the instance stopped or failed).
    pub fn clear(&self) {
        self.current.store(None);
    }

    /// The current instance.
    pub fn get(&self) -> Option<Instance<M>> {
        self.current.load_full().map(|shared| Instance { shared })
    }

    /// Sends `message` to the current instance. `false` if there is none or it no longer
    /// takes messages.
    pub fn cast(&self, message: M) -> bool {
        self.current
            .load()
            .as_ref()
            .is_some_and(|shared| shared.cast(message))
    }

    /// Fails the current instance with `reason`, as if handling an item had failed with it:
    /// its task ends with that failure (its supervisor restarts it) before it takes anything
    /// more. `false` if there is none or it ended.
    pub fn fail(&self, reason: String) -> bool {
        self.current.load().as_ref().is_some_and(|shared| {
            if shared.state.load(Ordering::Acquire) == ENDED {
                return false;
            }
            *lock(&shared.failure) = Some(reason);
            shared.failing.store(true, Ordering::Release);
            shared.bell.ring();
            true
        })
    }

    /// Rings the current instance's doorbell. `false` if there is none or it ended.
    pub fn ring(&self) -> bool {
        self.current
            .load()
            .as_ref()
            .is_some_and(|shared| shared.ring())
    }
}
