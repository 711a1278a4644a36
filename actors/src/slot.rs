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
        self.cast_through(self.route.get(), message)
    }

    /// [`Slot::cast`] for a sender that keeps the slot's route in `cache` once it is set: a
    /// message the route takes then reads nothing of the slot (at thousands of sessions,
    /// a cache miss a message; decision 0093).
    pub fn cast_cached(&self, cache: &RouteCache<M>, message: M) -> bool {
        let route = match cache.0.get() {
            Some(route) => Some(route),
            None => self
                .route
                .get()
                .map(|route| cache.0.get_or_init(|| route.clone())),
        };
        self.cast_through(route, message)
    }

    fn cast_through(&self, route: Option<&Weak<dyn Route<M>>>, message: M) -> bool {
        let message = match route.and_then(Weak::upgrade) {
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

/// A sender's copy of a [`Slot`]'s route, taken at its first message after the route was
/// set ([`Slot::cast_cached`]). A slot's route is set once, so the copy never goes stale.
pub struct RouteCache<M>(OnceLock<Weak<dyn Route<M>>>);

impl<M> Default for RouteCache<M> {
    fn default() -> Self {
        RouteCache(OnceLock::new())
    }
}

impl<M> Clone for RouteCache<M> {
    fn clone(&self) -> Self {
        RouteCache(self.0.clone())
    }
}

impl<M> std::fmt::Debug for RouteCache<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteCache")
            .field("set", &self.0.get().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ractor::{Actor, ActorProcessingErr};
    use tokio::sync::mpsc;

    use super::*;

    /// Takes the even numbers, hands the odd ones back.
    #[derive(Default)]
    struct Evens(Mutex<Vec<u32>>);

    impl Route<u32> for Evens {
        fn take(&self, message: u32) -> Option<u32> {
            if message.is_multiple_of(2) {
                self.0.lock().unwrap().push(message);
                None
            } else {
                Some(message)
            }
        }
    }

    /// Forwards what it receives.
    struct Forward;

    impl Actor for Forward {
        type Msg = u32;
        type State = mpsc::UnboundedSender<u32>;
        type Arguments = mpsc::UnboundedSender<u32>;

        async fn pre_start(
            &self,
            _myself: ActorRef<u32>,
            out: Self::Arguments,
        ) -> Result<Self::State, ActorProcessingErr> {
            Ok(out)
        }

        async fn handle(
            &self,
            _myself: ActorRef<u32>,
            message: u32,
            out: &mut Self::State,
        ) -> Result<(), ActorProcessingErr> {
            let _ = out.send(message);
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_cached_route_takes_what_the_slots_route_takes_and_the_rest_reaches_the_actor() {
        let slot = Slot::<u32>::default();
        let cache = RouteCache::default();
        // Nothing to send to yet: refused, and nothing cached.
        assert!(!slot.cast_cached(&cache, 2));
        assert!(cache.0.get().is_none());

        let (out, mut received) = mpsc::unbounded_channel();
        let (actor, handle) = Actor::spawn(None, Forward, out).await.unwrap();
        slot.set(actor.clone());
        let evens = Arc::new(Evens::default());
        let route: Arc<dyn Route<u32>> = evens.clone();
        assert!(slot.route_through(&route));

        // The first message after the route is set caches it; both kinds go their way.
        assert!(slot.cast_cached(&cache, 4));
        assert!(cache.0.get().is_some());
        assert!(slot.cast_cached(&cache, 7));
        assert!(slot.cast(6));
        assert_eq!(received.recv().await, Some(7));
        assert_eq!(*evens.0.lock().unwrap(), [4, 6]);

        // A clone keeps the copy; once the route is gone, everything reaches the actor.
        let copied = cache.clone();
        drop((route, evens));
        assert!(slot.cast_cached(&copied, 8));
        assert_eq!(received.recv().await, Some(8));

        slot.clear();
        assert!(!slot.cast_cached(&copied, 10));
        actor.stop(None);
        handle.await.unwrap();
    }
}
