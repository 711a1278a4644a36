//! Temporal patterns: actions that fire when something lasts, repeats or persists — judged
//! on the session's event time, never a wall timer, so a replay fires them at the same
//! points.

mod trackers;

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_protocol::SessionEvent;

use crate::error::ReactiveError;
use reel_actors::callback_guard::CallbackGuard;
use reel_actors::state::State;
use reel_actors::writer::SessionWriter;

pub(crate) use trackers::TemporalData;

/// A temporal pattern's action: the state and a writer to the session.
pub type TemporalAction = Arc<dyn Fn(State, SessionWriter) -> BoxFuture<'static, ()> + Send + Sync>;
/// A condition on the state.
pub type StateCondition = Arc<dyn Fn(&State) -> bool + Send + Sync>;
/// A condition on an event.
pub type EventCondition = Arc<dyn Fn(&SessionEvent) -> bool + Send + Sync>;

#[derive(Clone)]
enum Kind {
    Sustained {
        condition: StateCondition,
        duration_ms: u64,
    },
    Rate {
        matches: EventCondition,
        count: u32,
        window_ms: u64,
    },
    Turns {
        condition: StateCondition,
        n: u32,
    },
}

#[derive(Clone)]
struct Pattern {
    name: String,
    kind: Kind,
    action: TemporalAction,
}

/// Temporal patterns, checked by the control lane in registration order.
///
/// - [`when_sustained`](Self::when_sustained): the condition has held for a duration.
///   Checked after every event batch the control lane handles (at the batch's time), after
///   tool writes are committed and at turn complete (at the time of the event being
///   handled). "Held for" means: true at every check from one at least `duration` ago until
///   now. It fires once, at the first check that finds the duration reached — there is no
///   timer, so with no control-lane event it waits for the next one — and again only after
///   a check has found it false.
/// - [`when_rate`](Self::when_rate): `count` matching events within `window` (the first and
///   the last at most `window` apart), a sliding window. It sees the events the control
///   lane handles (tool calls, turn and generation complete, interruptions, voice
///   activity, final transcriptions, phase changes, usage, connects, errors — not audio or
///   text deltas). Firing starts the window over.
/// - [`when_turns`](Self::when_turns): the condition held at `n` consecutive turn
///   completes; fires once per streak; a turn complete where it does not hold resets it.
///
/// Actions are awaited by the control lane (like a blocking callback), so what they write
/// lands at a fixed place in the journal; one that must not hold the lane up spawns its own
/// task. Like every awaited callback, an action still running at the session's callback
/// timeout is dropped and reported (`SessionError::CallbackTimeout` for `temporal action`,
/// the pattern named in the log).
///
/// ```
/// use std::time::Duration;
/// use reel_reactive::TemporalRegistry;
/// use reel_protocol::SessionEvent;
///
/// let temporal = TemporalRegistry::new()
///     .when_sustained(
///         "long_silence",
///         |s| s.get::<u64>("session:silence_ms").is_some_and(|ms| ms > 0),
///         Duration::from_secs(10),
///         |_state, writer| async move {
///             let _ = writer.send_text("Are you still there?");
///         },
///     )
///     .when_rate(
///         "barge_ins",
///         |e| matches!(e, SessionEvent::Interrupted),
///         3,
///         Duration::from_secs(30),
///         |state, _writer| async move {
///             let _ = state.set("app:keep_it_short", true).await;
///         },
///     )
///     .when_turns("stuck", |s| !s.contains("app:city"), 3, |_state, writer| async move {
///         let _ = writer.send_text("Which city are you in?");
///     });
/// assert_eq!(temporal.len(), 3);
/// ```
#[derive(Clone, Default)]
pub struct TemporalRegistry {
    patterns: Vec<Pattern>,
}

impl TemporalRegistry {
    /// No patterns.
    pub fn new() -> Self {
        TemporalRegistry::default()
    }

    /// Runs `action` once `condition` has held for `duration` of event time.
    pub fn when_sustained<C, F, Fut>(
        self,
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
        let kind = Kind::Sustained {
            condition: Arc::new(condition),
            duration_ms: millis(duration),
        };
        self.with(name.into(), kind, action)
    }

    /// Runs `action` when `count` events matching `matches` occur within `window` of event
    /// time.
    pub fn when_rate<M, F, Fut>(
        self,
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
        let kind = Kind::Rate {
            matches: Arc::new(matches),
            count,
            window_ms: millis(window),
        };
        self.with(name.into(), kind, action)
    }

    /// Runs `action` when `condition` has held at `n` consecutive turn completes.
    pub fn when_turns<C, F, Fut>(
        self,
        name: impl Into<String>,
        condition: C,
        n: u32,
        action: F,
    ) -> Self
    where
        C: Fn(&State) -> bool + Send + Sync + 'static,
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let kind = Kind::Turns {
            condition: Arc::new(condition),
            n,
        };
        self.with(name.into(), kind, action)
    }

    fn with<F, Fut>(mut self, name: String, kind: Kind, action: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.patterns.push(Pattern {
            name,
            kind,
            action: Arc::new(move |state, writer| Box::pin(action(state, writer))),
        });
        self
    }

    /// How many patterns there are.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The pattern names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|p| p.name.as_str())
    }

    /// Refuses a name used twice and a count of 0.
    pub fn check(&self) -> Result<(), ReactiveError> {
        let mut names = BTreeSet::new();
        for pattern in &self.patterns {
            if !names.insert(pattern.name.as_str()) {
                return Err(ReactiveError::DuplicateTemporal {
                    name: pattern.name.clone(),
                });
            }
            if let Kind::Rate { count: 0, .. } | Kind::Turns { n: 0, .. } = pattern.kind {
                return Err(ReactiveError::ZeroCount {
                    name: pattern.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// After an event was handled at `now_ms`: feeds it to the rate patterns.
    pub(crate) async fn on_event(
        &self,
        data: &mut TemporalData,
        event: &SessionEvent,
        now_ms: u64,
        ctx: &Ctx<'_>,
    ) {
        for pattern in &self.patterns {
            let Kind::Rate {
                matches,
                count,
                window_ms,
            } = &pattern.kind
            else {
                continue;
            };
            if !matches(event) {
                continue;
            }
            let window = data.rates.entry(pattern.name.clone()).or_default();
            if window.observe(now_ms, *count, *window_ms) {
                ctx.fire(pattern).await;
            }
        }
    }

    /// Whenever the state may have changed (an event batch, tool commits): checks the
    /// sustained patterns at `now_ms`.
    pub(crate) async fn check_sustained(
        &self,
        data: &mut TemporalData,
        now_ms: u64,
        ctx: &Ctx<'_>,
    ) {
        for pattern in &self.patterns {
            self.sustained(pattern, data, now_ms, ctx).await;
        }
    }

    /// At turn complete: checks the sustained patterns at `now_ms` and counts the turn for
    /// the turn patterns, in registration order.
    pub(crate) async fn on_turn(&self, data: &mut TemporalData, now_ms: u64, ctx: &Ctx<'_>) {
        for pattern in &self.patterns {
            if let Kind::Turns { condition, n } = &pattern.kind {
                let holds = condition(ctx.state);
                let streak = data.streaks.entry(pattern.name.clone()).or_default();
                if streak.observe(holds, *n) {
                    ctx.fire(pattern).await;
                }
            } else {
                self.sustained(pattern, data, now_ms, ctx).await;
            }
        }
    }

    async fn sustained(
        &self,
        pattern: &Pattern,
        data: &mut TemporalData,
        now_ms: u64,
        ctx: &Ctx<'_>,
    ) {
        let Kind::Sustained {
            condition,
            duration_ms,
        } = &pattern.kind
        else {
            return;
        };
        let holds = condition(ctx.state);
        let tracker = data.sustained.entry(pattern.name.clone()).or_default();
        if tracker.check(holds, now_ms, *duration_ms) {
            ctx.fire(pattern).await;
        }
    }
}

impl fmt::Debug for TemporalRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// What a firing action gets.
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a State,
    pub(crate) writer: &'a SessionWriter,
    /// Cuts a hung action off at the callback timeout.
    pub(crate) guard: &'a CallbackGuard,
}

impl Ctx<'_> {
    async fn fire(&self, pattern: &Pattern) {
        tracing::debug!(pattern = pattern.name, "temporal pattern fired");
        let action = (pattern.action)(self.state.clone(), self.writer.clone());
        self.guard
            .within("temporal action", &pattern.name, action)
            .await;
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
