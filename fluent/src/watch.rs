//! [`LiveWatch`]: a watcher on one state key, configured in the chain
//! (`.watch("app:score").crossed_above(10.0).then(..)`), which hands the builder back.

use std::fmt;
use std::future::Future;

use reel_actors::state::State;
use reel_reactive::{Predicate, WatchBuilder, Watcher};
use serde_json::Value;

use crate::builder::LiveBuilder;

/// A watcher on one state key, started by [`LiveBuilder::watch`]: choose when it fires
/// (a predicate; by default any change) and whether the control lane waits for it, then
/// give its action with [`then`](LiveWatch::then), which returns the builder.
///
/// Watchers are evaluated when a mutation cycle ends — after a tool's writes are
/// committed (after the computed values), and at each turn complete (after the computed
/// values and the phase transitions) — over every change since the previous evaluation. The action gets the
/// key's value before the cycle's first change and after its last (`null` for absent),
/// and the state. See [`reel_reactive`] for the exact rules.
///
/// ```
/// use reel_fluent::Live;
///
/// let builder = Live::builder()
///     .watch("app:basket_total")
///     .crossed_above(100.0)
///     .blocking()
///     .then(|_old, new, state| async move {
///         let _ = state.set("app:free_shipping", true).await;
///         println!("free shipping from {new}");
///     });
/// assert!(builder.validate().is_ok());
/// ```
#[must_use = "a watch does nothing until `.then(..)` gives it an action"]
pub struct LiveWatch {
    builder: LiveBuilder,
    watch: WatchBuilder,
}

impl fmt::Debug for LiveWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveWatch")
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

impl LiveWatch {
    pub(crate) fn new(builder: LiveBuilder, key: String) -> Self {
        LiveWatch {
            builder,
            watch: Watcher::on(key),
        }
    }

    fn map(mut self, f: impl FnOnce(WatchBuilder) -> WatchBuilder) -> Self {
        self.watch = f(self.watch);
        self
    }

    /// Fires when the value rises to `threshold` or above from below it, or first appears
    /// at or above it (a key absent before is on neither side, so its first value crosses
    /// into the side it lands on; a removal crosses nothing; a value that is not a number
    /// never crosses). The threshold must be a finite number. See
    /// [`Predicate`](reel_reactive::Predicate) for the exact rules.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:score").crossed_above(10.0).then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn crossed_above(self, threshold: f64) -> Self {
        self.map(|watch| watch.crossed_above(threshold))
    }

    /// Fires when the value falls below `threshold` from it or above, or first appears
    /// below it (from absent; a removal crosses nothing).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:balance").crossed_below(0.0).then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn crossed_below(self, threshold: f64) -> Self {
        self.map(|watch| watch.crossed_below(threshold))
    }

    /// Fires when the value becomes `true` (from absent too).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:confirmed").became_true().then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn became_true(self) -> Self {
        self.map(WatchBuilder::became_true)
    }

    /// Fires when the value stops being `true` (removed, too).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:on_hold").became_false().then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn became_false(self) -> Self {
        self.map(WatchBuilder::became_false)
    }

    /// Fires on any change (the default).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("session:active_phase").changed().then(|old, new, _| async move {
    ///     println!("phase {old} -> {new}");
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn changed(self) -> Self {
        self.map(WatchBuilder::changed)
    }

    /// Fires when the value becomes `value` (`null`: when the key is removed). Equality is
    /// JSON equality: `1` and `1.0` differ.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:tier").changed_to("gold").then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn changed_to(self, value: impl Into<Value>) -> Self {
        self.map(|watch| watch.changed_to(value))
    }

    /// Fires when `predicate` accepts the change.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_reactive::Predicate;
    /// let builder = Live::builder()
    ///     .watch("app:score")
    ///     .when(Predicate::CrossedAbove(3.0))
    ///     .then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn when(self, predicate: Predicate) -> Self {
        self.map(|watch| watch.when(predicate))
    }

    /// The control lane awaits the action before it goes on, so what the action writes
    /// lands at a fixed place in the journal and a replay puts it there too. Without this
    /// the action is spawned (concurrent): the lane moves on at once, and the place of its
    /// writes depends on timing.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().watch("app:score").blocking().then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn blocking(self) -> Self {
        self.map(WatchBuilder::blocking)
    }

    /// The action — run with the key's old value, its new value and the state — and the
    /// builder back, to go on with the chain.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .watch("app:city")
    ///     .then(|_old, new, _state| async move { println!("city: {new}") })
    ///     .text_only();
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn then<F, Fut>(self, action: F) -> LiveBuilder
    where
        F: Fn(Value, Value, State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.builder.watcher(self.watch.then(action))
    }
}
