//! [`Slot`]: the current instance of a ractor child (the transport) or of the supervisor.
//!
//! Actors and tasks never keep another actor's `ActorRef` across a restart: they keep the
//! slot. The inbox-driven children, on tasks of their own, have an
//! [`crate::mailbox::InstanceSlot`] instead, which each new instance is put in, so a tool
//! task that finishes after the control lane restarted still reaches the control lane.

use std::sync::{Arc, OnceLock, Weak};

use arc_swap::ArcSwapOption;
use ractor::ActorRef;

/// What takes some of a slot's messages before they become ractor messages (the live
/// transport's outbox takes its commands: decision 0083).
pub trait Route<M>: Send + Sync {
    /// `None` once it took `message`, or the message back for the actor.
    fn take(&self, message: M) -> Option<M>;
}

/// Holds the `ActorRef` of an actor's current instance, if it is running.
pub struct Slot<M: Send + 'static> {
    current: ArcSwapOption<ActorRef<M>>,
    /// Set once by an actor that takes some messages another way (the live transport's
    /// commands go to its outbox: decision 0083). Weak: the route's owner keeps it, and a
    /// route may hold what holds the slot (the transport's writer holds the session's
    /// peers); once it is gone, messages go to the actor, which is gone with it.
    route: OnceLock<Weak<dyn Route<M>>>,
}

impl<M: Send + 'static> Default for Slot<M> {
    fn default() -> Self {
        Slot {
            current: ArcSwapOption::empty(),
            route: OnceLock::new(),
        }
    }
}

impl<M: Send + 'static> std::fmt::Debug for Slot<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.current.load().as_ref() {
            Some(actor) => write!(f, "Slot({})", actor.get_id()),
            None => f.write_str("Slot(empty)"),
        }
    }
}

impl<M: Send + 'static> Slot<M> {
    /// Points the slot at `actor`.
    pub fn set(&self, actor: ActorRef<M>) {
        self.current.store(Some(Arc::new(actor)));
    }

    /// Empties the slot (the actor stopped or failed).
    pub fn clear(&self) {
        self.current.store(None);
    }

    /// The current instance.
    pub fn get(&self) -> Option<ActorRef<M>> {
        self.current.load().as_deref().cloned()
    }

    /// Sends every message `route` takes through it from now on, and the rest to the
    /// actor. Set once: `false` (and `route` unused) if a route is already set.
    pub fn route_through(&self, route: &Arc<dyn Route<M>>) -> bool {
        self.route.set(Arc::downgrade(route)).is_ok()
    }

    /// Sends `message` to the current instance (or hands it to the slot's route, if it
    /// takes it). `false` if there is none or it no longer takes messages (it is stopping,
    /// or failed and awaits its restart).
    pub fn cast(&self, message: M) -> bool {
        let message = match self.route.get().and_then(Weak::upgrade) {
            Some(route) => match route.take(message) {
                None => return true,
                Some(message) => message,
            },
            None => message,
        };
        match self.current.load().as_deref() {
            Some(actor) => actor.cast(message).is_ok(),
            None => false,
        }
    }
}
