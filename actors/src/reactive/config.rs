//! [`ReactiveConfig`]: a session's watchers, computed values and temporal patterns, and
//! [`Reactive`], the checked set the control lane runs.

use serde_json::Value;

use super::computed::{ComputedRegistry, ComputedValues};
use super::error::ReactiveError;
use super::temporal::TemporalRegistry;
use super::watcher::{Watcher, WatcherRegistry};
use crate::state::State;

/// A session's reactive rules, given to
/// [`LiveSessionBuilder::reactive`](crate::LiveSessionBuilder::reactive). Checked when the
/// session starts ([`ReactiveConfig::build`]): a cycle among computed values or a temporal
/// pattern name used twice is a [`ReactiveError`].
///
/// ```
/// use std::time::Duration;
/// use reel_actors::reactive::{ReactiveConfig, TemporalRegistry, Watcher};
/// use serde_json::json;
///
/// let reactive = ReactiveConfig::new()
///     .computed("risk", &["app:failed_logins"], |s| {
///         Some(json!(s.get::<u32>("app:failed_logins")? as f64 / 5.0))
///     })
///     .watch(Watcher::on("derived:risk").crossed_above(0.8).blocking().then(
///         |_old, _new, state| async move {
///             let _ = state.set("app:locked", true).await;
///         },
///     ))
///     .temporal(TemporalRegistry::new().when_sustained(
///         "locked_a_while",
///         |s| s.get::<bool>("app:locked") == Some(true),
///         Duration::from_secs(60),
///         |_state, writer| async move {
///             let _ = writer.send_text("The account is still locked.");
///         },
///     ));
/// assert!(reactive.build().is_ok());
/// ```
#[derive(Clone, Default, Debug)]
pub struct ReactiveConfig {
    /// Watchers, in firing order.
    pub watchers: WatcherRegistry,
    /// Computed values.
    pub computed: ComputedRegistry,
    /// Temporal patterns.
    pub temporal: TemporalRegistry,
}

impl ReactiveConfig {
    /// No rules.
    pub fn new() -> Self {
        ReactiveConfig::default()
    }

    /// Adds a watcher after the others.
    pub fn watch(mut self, watcher: Watcher) -> Self {
        self.watchers.add(watcher);
        self
    }

    /// Adds a computed value (see [`ComputedRegistry::computed`]).
    pub fn computed<F>(mut self, name: impl Into<String>, deps: &[&str], compute: F) -> Self
    where
        F: Fn(&State) -> Option<Value> + Send + Sync + 'static,
    {
        self.computed = self.computed.computed(name, deps, compute);
        self
    }

    /// Sets the temporal patterns.
    pub fn temporal(mut self, temporal: TemporalRegistry) -> Self {
        self.temporal = temporal;
        self
    }

    /// Checks the rules and sorts the computed values into dependency order.
    pub fn build(self) -> Result<Reactive, ReactiveError> {
        let computed = self.computed.build()?;
        self.temporal.check()?;
        Ok(Reactive {
            watchers: self.watchers,
            computed,
            temporal: self.temporal,
        })
    }
}

/// A checked [`ReactiveConfig`], as the control lane runs it. The default has no rules.
#[derive(Clone, Default, Debug)]
pub struct Reactive {
    pub(crate) watchers: WatcherRegistry,
    pub(crate) computed: ComputedValues,
    pub(crate) temporal: TemporalRegistry,
}

impl Reactive {
    /// Whether there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.watchers.is_empty() && self.computed.is_empty() && self.temporal.is_empty()
    }
}
