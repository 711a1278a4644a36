//! Reactive state in the chain: watchers on state keys, computed values and temporal
//! patterns, run by the control lane on event time so a replay fires them at the same
//! points ([`reel_reactive`]).
//!
//! The chain collects them into one [`ReactiveConfig`]; [`LiveBuilder::plan`] checks it
//! (the rules' own checks — cycles, names used twice, zero counts — and the chain's:
//! every `derived:` key read names a computed value or a field a typed extractor writes,
//! every threshold is a number) into a [`Reactive`], which the plan hands to the runtime as
//! the session's reactor.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use reel_actors::state::{State, prefix};
use reel_actors::writer::SessionWriter;
use reel_protocol::SessionEvent;
use reel_reactive::{Predicate, Reactive, ReactiveConfig, TemporalRegistry, Watcher};
use serde_json::Value;

use crate::builder::LiveBuilder;
use crate::error::BuildError;
use crate::extraction::ExtractedFields;
use crate::watch::LiveWatch;

/// A computed value as the chain declared it, for the checks.
#[derive(Debug, Clone)]
struct Declared {
    name: String,
    deps: Vec<String>,
}

/// The reactive part of a [`LiveBuilder`].
#[derive(Clone, Default)]
pub(crate) struct ReactivePart {
    config: ReactiveConfig,
    computed: Vec<Declared>,
}

impl fmt::Debug for ReactivePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reactive")
            .field("watchers", &self.config.watchers.len())
            .field("computed", &self.config.computed)
            .field("temporal", &self.config.temporal)
            .finish()
    }
}

impl ReactivePart {
    /// The rules the session runs, checked, `None` when the chain has none; `extracted`
    /// is the `derived:` fields the chain's extractors write.
    pub(crate) fn checked(
        &self,
        extracted: &ExtractedFields,
    ) -> Result<Option<Reactive>, BuildError> {
        let empty = self.config.watchers.is_empty()
            && self.config.computed.is_empty()
            && self.config.temporal.is_empty();
        if empty {
            return Ok(None);
        }
        let reactive = self.config.clone().build()?;
        self.check_derived_reads(extracted)?;
        self.check_thresholds()?;
        Ok(Some(reactive))
    }

    /// The names of the computed values, in the order they were declared.
    fn computed_names(&self) -> Vec<String> {
        self.computed.iter().map(|c| c.name.clone()).collect()
    }

    /// Every `derived:` key a watcher or a computed value reads is written by a computed
    /// value or an extractor of the chain (any, when an extractor's fields are not known).
    fn check_derived_reads(&self, extracted: &ExtractedFields) -> Result<(), BuildError> {
        let known = |key: &str| match key.strip_prefix(prefix::DERIVED) {
            Some(name) => self.computed.iter().any(|c| c.name == name) || extracted.covers(name),
            None => true,
        };
        for computed in &self.computed {
            if let Some(dep) = computed.deps.iter().find(|dep| !known(dep)) {
                return Err(BuildError::DependsOnUnknownComputed {
                    computed: computed.name.clone(),
                    key: dep.clone(),
                    defined: self.computed_names(),
                    extracted: extracted.listed(),
                });
            }
        }
        if let Some(watcher) = self.config.watchers.iter().find(|w| !known(w.key())) {
            return Err(BuildError::WatchesUnknownComputed {
                key: watcher.key().to_owned(),
                defined: self.computed_names(),
                extracted: extracted.listed(),
            });
        }
        Ok(())
    }

    /// A threshold that is not a finite number would never be crossed.
    fn check_thresholds(&self) -> Result<(), BuildError> {
        for watcher in self.config.watchers.iter() {
            if let Predicate::CrossedAbove(threshold) | Predicate::CrossedBelow(threshold) =
                watcher.predicate()
                && !threshold.is_finite()
            {
                return Err(BuildError::InvalidThreshold {
                    key: watcher.key().to_owned(),
                    threshold: *threshold,
                });
            }
        }
        Ok(())
    }

    fn temporal(&mut self, add: impl FnOnce(TemporalRegistry) -> TemporalRegistry) {
        self.config.temporal = add(std::mem::take(&mut self.config.temporal));
    }
}

impl LiveBuilder {
    /// Starts a watcher on state key `key` — the full key, as the journal names it
    /// (`app:score`, `session:active_phase`, `derived:total` for a computed value,
    /// `derived:mood` for a field a typed extractor writes): choose
    /// a predicate, then give the action with [`LiveWatch::then`], which returns the
    /// builder. Watchers fire in the order they were added.
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .watch("app:party_size")
    ///     .crossed_above(8.0)
    ///     .blocking()
    ///     .then(|_old, _new, state| async move {
    ///         let _ = state.set("app:needs_manager", true).await;
    ///     })
    ///     .watch("app:needs_manager")
    ///     .became_true()
    ///     .then(|_, _, _| async { println!("a manager will call back") });
    /// assert!(builder.validate().is_ok());
    /// ```
    ///
    /// A watcher on a computed value that the chain does not define is refused:
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let error = Live::builder().watch("derived:total").then(|_, _, _| async {}).validate().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "a watcher watches `derived:total`, but no computed value `total` is defined; \
    ///      defined computed values: []; add `.computed(\"total\", ..)` or watch another key"
    /// );
    /// ```
    pub fn watch(self, key: impl Into<String>) -> LiveWatch {
        LiveWatch::new(self, key.into())
    }

    /// Adds a watcher built on the runtime's API ([`Watcher::on`]), after the others.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_reactive::Watcher;
    ///
    /// let watcher = Watcher::on("app:tier").changed_to("gold").then(|_, _, _| async {});
    /// let builder = Live::builder().watcher(watcher);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn watcher(mut self, watcher: Watcher) -> Self {
        self.reactive.config.watchers.add(watcher);
        self
    }

    /// A computed value, written to `derived:{name}` at every commit point: after a tool's
    /// writes are committed, and at every turn complete (before the phase transitions are
    /// evaluated, so guards see it); at both, before the watchers look, so a watcher of
    /// `derived:{name}` fires in the same cycle as the writes it derives from. `compute`
    /// returns the value
    /// (`Some(null)` removes it) or `None` to leave it as it is. `deps` are the full keys it
    /// reads; a dependency on another computed value's `derived:` key puts it after that
    /// one, whatever the order they were added in. A value unchanged writes nothing.
    ///
    /// Values depending on each other in a cycle, a name used twice, or a dependency on a
    /// `derived:` key no computed value writes are refused before the session starts.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use serde_json::json;
    ///
    /// let builder = Live::builder()
    ///     .computed("with_tax", &["derived:total"], |s| {
    ///         Some(json!(s.get::<f64>("derived:total")? * 1.2))
    ///     })
    ///     .computed("total", &["app:price", "app:quantity"], |s| {
    ///         Some(json!(s.get::<f64>("app:price")? * s.get::<f64>("app:quantity")?))
    ///     })
    ///     .watch("derived:with_tax")
    ///     .crossed_above(100.0)
    ///     .then(|_, _, _| async {});
    /// assert!(builder.validate().is_ok());
    ///
    /// let cycle = Live::builder()
    ///     .computed("a", &["derived:b"], |_| None)
    ///     .computed("b", &["derived:a"], |_| None);
    /// assert_eq!(
    ///     cycle.validate().unwrap_err().to_string(),
    ///     "invalid reactive rules: computed values depend on each other in a cycle: \
    ///      a -> b -> a (each depends on the next)"
    /// );
    /// ```
    pub fn computed<F>(mut self, name: impl Into<String>, deps: &[&str], compute: F) -> Self
    where
        F: Fn(&State) -> Option<Value> + Send + Sync + 'static,
    {
        let name = name.into();
        self.reactive.computed.push(Declared {
            name: name.clone(),
            deps: deps.iter().map(|dep| (*dep).to_owned()).collect(),
        });
        self.reactive.config = self.reactive.config.computed(name, deps, compute);
        self
    }

    /// Runs `action` once `condition` has held for `duration` of session time (checked
    /// whenever the control lane handles events, commits tool writes or completes a turn;
    /// no wall timer, so a replay fires it at the same point). It fires once, then again
    /// only after the condition was found false. `name` must be unique among the temporal
    /// patterns.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder().when_sustained(
    ///     "on_hold_a_while",
    ///     |s| s.get::<bool>("app:on_hold") == Some(true),
    ///     Duration::from_secs(30),
    ///     |_state, writer| async move {
    ///         let _ = writer.send_text("Still there? I'm checking for you.");
    ///     },
    /// );
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn when_sustained<C, F, Fut>(
        mut self,
        name: impl Into<String>,
        condition: C,
        duration: Duration,
        action: F,
    ) -> Self
    where
        C: Fn(&State) -> bool + Send + Sync + 'static,
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.reactive
            .temporal(|t| t.when_sustained(name, condition, duration, action));
        self
    }

    /// Runs `action` when `count` events matching `matches` happen within `window` of
    /// session time (a sliding window; firing starts it over). It sees the events the
    /// control lane handles: tool calls, turn and generation completes, interruptions,
    /// voice activity, final transcriptions, phase changes, usage, connects, errors — not
    /// audio or text deltas.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_fluent::Live;
    /// use reel_protocol::SessionEvent;
    ///
    /// let builder = Live::builder().when_rate(
    ///     "barge_ins",
    ///     |event| matches!(event, SessionEvent::Interrupted),
    ///     3,
    ///     Duration::from_secs(30),
    ///     |state, _writer| async move {
    ///         let _ = state.set("app:keep_it_short", true).await;
    ///     },
    /// );
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn when_rate<M, F, Fut>(
        mut self,
        name: impl Into<String>,
        matches: M,
        count: u32,
        window: Duration,
        action: F,
    ) -> Self
    where
        M: Fn(&SessionEvent) -> bool + Send + Sync + 'static,
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.reactive
            .temporal(|t| t.when_rate(name, matches, count, window, action));
        self
    }

    /// Runs `action` when `condition` has held at `turns` consecutive turn completes;
    /// once per streak (a turn where it does not hold starts a new one).
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder().when_turns(
    ///     "no_city_yet",
    ///     |s| !s.contains("app:city"),
    ///     3,
    ///     |_state, writer| async move {
    ///         let _ = writer.send_text("Which city are you in?");
    ///     },
    /// );
    /// assert!(builder.validate().is_ok());
    ///
    /// let never = Live::builder().when_turns("never", |_| true, 0, |_, _| async {});
    /// assert_eq!(
    ///     never.validate().unwrap_err().to_string(),
    ///     "invalid reactive rules: temporal pattern `never` has a count of 0; it needs at least 1"
    /// );
    /// ```
    pub fn when_turns<C, F, Fut>(
        mut self,
        name: impl Into<String>,
        condition: C,
        turns: u32,
        action: F,
    ) -> Self
    where
        C: Fn(&State) -> bool + Send + Sync + 'static,
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.reactive
            .temporal(|t| t.when_turns(name, condition, turns, action));
        self
    }
}
