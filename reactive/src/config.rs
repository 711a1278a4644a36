//! [`ReactiveConfig`]: a session's watchers, computed values and temporal patterns, and
//! [`Reactive`], the checked set the control lane runs (as the session's
//! [`StateReactor`](reel_actors::reactor::StateReactor)).

use serde_json::Value;

use crate::computed::{ComputedRegistry, ComputedValues};
use crate::error::ReactiveError;
use crate::temporal::{TemporalData, TemporalRegistry};
use crate::watcher::{Watcher, WatcherRegistry};
use reel_actors::state::State;

/// A session's reactive rules. Checked by [`ReactiveConfig::build`] — a cycle among
/// computed values or a temporal pattern name used twice is a [`ReactiveError`] — into a
/// [`Reactive`], which a session runs as its reactor
/// ([`LiveSessionBuilder::reactor`](reel_actors::LiveSessionBuilder::reactor)).
///
/// ```
/// use std::time::Duration;
/// use reel_reactive::{ReactiveConfig, TemporalRegistry, Watcher};
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
            progress: TemporalData::default(),
        })
    }
}

/// A checked [`ReactiveConfig`], as the control lane runs it: the session's
/// [`StateReactor`](reel_actors::reactor::StateReactor) (see the [crate documentation](crate)
/// for when each rule runs). It holds the rules and their progress (sustained start times,
/// rate windows, turn streaks), which the control lane keeps across its restarts. The
/// default has no rules.
///
/// ```
/// use reel_actors::LiveSessionBuilder;
/// use reel_protocol::{ApiEndpoint, SessionConfig};
/// use reel_reactive::{ReactiveConfig, Watcher};
///
/// let reactive = ReactiveConfig::new()
///     .watch(Watcher::on("app:tier").changed_to("gold").then(|_, _, _| async {}))
///     .build()
///     .unwrap();
/// let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
///     .reactor(Box::new(reactive));
/// # let _ = builder;
/// ```
#[derive(Clone, Default, Debug)]
pub struct Reactive {
    pub(crate) watchers: WatcherRegistry,
    pub(crate) computed: ComputedValues,
    pub(crate) temporal: TemporalRegistry,
    /// The temporal patterns' progress.
    pub(crate) progress: TemporalData,
}

impl Reactive {
    /// Whether there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.watchers.is_empty() && self.computed.is_empty() && self.temporal.is_empty()
    }
}
