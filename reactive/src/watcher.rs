//! [`Watcher`]s: an async action run when a state key changes in a given way, and the
//! [`WatcherRegistry`] that holds them in order.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::predicate::Predicate;
use reel_actors::callback_guard::CallbackGuard;
use reel_actors::callbacks::CallbackMode;
use reel_actors::state::Changes;
use reel_actors::state::State;

/// A watcher's action: the key's old and new value (see [`Predicate`]) and the state.
pub type WatchAction = Arc<dyn Fn(Value, Value, State) -> BoxFuture<'static, ()> + Send + Sync>;

/// Watches one state key: when a mutation cycle changes it in a way its [`Predicate`]
/// accepts, its action runs with the key's value before the cycle's first change and after
/// its last.
///
/// Actions are spawned by default ([`CallbackMode::Concurrent`]): the control lane moves on
/// at once. [`WatchBuilder::blocking`] makes the lane await the action before it goes on,
/// so its writes land at a fixed place in the journal (and a replay puts them there too);
/// like every awaited callback, a blocking action still running at the session's callback
/// timeout is dropped and reported (`SessionError::CallbackTimeout` for `watch action`, the
/// key named in the log), and the lane goes on.
///
/// ```
/// use reel_reactive::Watcher;
///
/// let alert = Watcher::on("app:risk_score")
///     .crossed_above(0.8)
///     .blocking()
///     .then(|_old, new, state| async move {
///         let _ = state.set("app:alert", format!("risk is {new}")).await;
///     });
/// assert_eq!(alert.key(), "app:risk_score");
/// ```
#[derive(Clone)]
pub struct Watcher {
    key: String,
    predicate: Predicate,
    mode: CallbackMode,
    action: WatchAction,
}

impl Watcher {
    /// Starts a watcher of `key` (the full key, as the journal names it: `derived:risk` for
    /// a computed value). It fires on any change unless a predicate is chosen.
    pub fn on(key: impl Into<String>) -> WatchBuilder {
        WatchBuilder {
            key: key.into(),
            predicate: Predicate::Changed,
            mode: CallbackMode::Concurrent,
        }
    }

    /// The key watched.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// When it fires.
    pub fn predicate(&self) -> &Predicate {
        &self.predicate
    }

    /// Whether the control lane awaits its action or spawns it.
    pub fn mode(&self) -> CallbackMode {
        self.mode
    }
}

impl fmt::Debug for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher")
            .field("key", &self.key)
            .field("predicate", &self.predicate)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// A [`Watcher`] without its action yet: choose a predicate and a mode, then
/// [`then`](WatchBuilder::then).
#[derive(Debug, Clone)]
pub struct WatchBuilder {
    key: String,
    predicate: Predicate,
    mode: CallbackMode,
}

impl WatchBuilder {
    /// Fires when the value rises to `threshold` or above from below it, or first appears
    /// there (from absent); see [`Predicate`] for absence and non-numbers.
    pub fn crossed_above(self, threshold: f64) -> Self {
        self.when(Predicate::CrossedAbove(threshold))
    }

    /// Fires when the value falls below `threshold` from it or above, or first appears
    /// below it (from absent); see [`Predicate`] for absence and non-numbers.
    pub fn crossed_below(self, threshold: f64) -> Self {
        self.when(Predicate::CrossedBelow(threshold))
    }

    /// Fires when the value becomes `true` (from absent, too).
    pub fn became_true(self) -> Self {
        self.when(Predicate::BecameTrue)
    }

    /// Fires when the value stops being `true` (removal too).
    pub fn became_false(self) -> Self {
        self.when(Predicate::BecameFalse)
    }

    /// Fires on any change (the default).
    pub fn changed(self) -> Self {
        self.when(Predicate::Changed)
    }

    /// Fires when the value becomes `value` (`null`: when the key is removed).
    pub fn changed_to(self, value: impl Into<Value>) -> Self {
        self.when(Predicate::ChangedTo(value.into()))
    }

    /// Fires when `predicate` accepts the change.
    pub fn when(mut self, predicate: Predicate) -> Self {
        self.predicate = predicate;
        self
    }

    /// The control lane awaits the action, in registration order, before going on.
    pub fn blocking(mut self) -> Self {
        self.mode = CallbackMode::Blocking;
        self
    }

    /// The watcher, running `action` with the key's old value, new value and the state.
    pub fn then<F, Fut>(self, action: F) -> Watcher
    where
        F: Fn(Value, Value, State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Watcher {
            key: self.key,
            predicate: self.predicate,
            mode: self.mode,
            action: Arc::new(move |old, new, state| Box::pin(action(old, new, state))),
        }
    }
}

/// Watchers, in the order they fire.
///
/// ```
/// use reel_reactive::{Watcher, WatcherRegistry};
///
/// let watchers = WatcherRegistry::new()
///     .watch(Watcher::on("app:tier").changed_to("gold").then(|_, _, _| async {}))
///     .watch(Watcher::on("turn:done").became_true().then(|_, _, _| async {}));
/// assert_eq!(watchers.len(), 2);
/// ```
#[derive(Clone, Default, Debug)]
pub struct WatcherRegistry {
    watchers: Vec<Watcher>,
}

impl WatcherRegistry {
    /// No watchers.
    pub fn new() -> Self {
        WatcherRegistry::default()
    }

    /// Adds `watcher` after the others.
    pub fn watch(mut self, watcher: Watcher) -> Self {
        self.add(watcher);
        self
    }

    /// Adds `watcher` after the others.
    pub fn add(&mut self, watcher: Watcher) {
        self.watchers.push(watcher);
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.watchers.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.watchers.is_empty()
    }

    /// The watchers, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Watcher> {
        self.watchers.iter()
    }

    /// Runs, in registration order, every watcher whose key `changes` holds with a change
    /// its predicate accepts: blocking ones awaited (for at most the callback timeout, by
    /// `guard`), concurrent ones spawned. Returns how many fired.
    pub(crate) async fn fire(
        &self,
        changes: &Changes,
        state: &State,
        guard: &CallbackGuard,
    ) -> usize {
        let mut fired = 0;
        for watcher in &self.watchers {
            let Some(change) = changes.get(&watcher.key) else {
                continue;
            };
            if !watcher.predicate.matches(&change.old, &change.new) {
                continue;
            }
            fired += 1;
            let action = (watcher.action)(change.old.clone(), change.new.clone(), state.clone());
            match watcher.mode {
                CallbackMode::Blocking => {
                    guard.within("watch action", &watcher.key, action).await;
                }
                CallbackMode::Concurrent => {
                    tokio::spawn(action);
                }
            }
        }
        fired
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use reel_actors::state::StateMutation;
    use serde_json::json;

    use super::*;

    type Log = Arc<Mutex<Vec<(&'static str, Value, Value)>>>;

    fn logged(builder: WatchBuilder, label: &'static str, log: &Log) -> Watcher {
        let log = Arc::clone(log);
        builder.blocking().then(move |old, new, _state| {
            let log = Arc::clone(&log);
            async move { log.lock().unwrap().push((label, old, new)) }
        })
    }

    fn change(key: &str, old: Value, new: Value) -> StateMutation {
        StateMutation {
            sequence: 1,
            key: key.to_owned(),
            old,
            new,
            origin: "set".to_owned(),
            timestamp_ms: 0,
            delta: false,
        }
    }

    #[tokio::test]
    async fn watchers_fire_in_registration_order_on_net_changes() {
        let log: Log = Arc::default();
        let watchers = WatcherRegistry::new()
            .watch(logged(Watcher::on("app:score"), "any", &log))
            .watch(logged(
                Watcher::on("app:score").crossed_above(10.0),
                "above",
                &log,
            ))
            .watch(logged(
                Watcher::on("app:tier").changed_to("gold"),
                "tier",
                &log,
            ));
        let changes = Changes::from_journal(&[
            change("app:score", json!(3), json!(7)),
            change("app:tier", json!("gold"), json!("silver")),
            change("app:score", json!(7), json!(11)),
            change("app:tier", json!("silver"), json!("gold")),
        ]);
        let guard = CallbackGuard::detached(std::time::Duration::from_secs(10));
        let fired = watchers.fire(&changes, &State::new(), &guard).await;
        assert_eq!(fired, 2);
        assert_eq!(
            *log.lock().unwrap(),
            vec![("any", json!(3), json!(11)), ("above", json!(3), json!(11)),]
        );
    }
}
