//! The seed's pattern helpers, built from the operators.

use crate::{AgentBuilder, Composable, S, until_state};

/// `worker`, then `reviewer`, repeated until the state's `key` is the string `target` (at
/// most `max` rounds): `(worker >> reviewer) * until_state(S::eq(key, target)).max(max)`. Unless
/// the reviewer already declares `key`, its answer is written there (`.output_key(key)`).
///
/// ```
/// use reel_compose::{AgentBuilder, review_loop};
///
/// let reviewed = review_loop(
///     AgentBuilder::new("writer").instruction("Write a report"),
///     AgentBuilder::new("reviewer").instruction("Rate quality as 'good' or 'needs_work'"),
///     "quality", "good", 3,
/// );
/// assert_eq!(reviewed.label(), "(writer >> reviewer) * until(S::eq(quality, good), max 3)");
/// ```
pub fn review_loop(
    worker: AgentBuilder,
    reviewer: AgentBuilder,
    key: &str,
    target: &str,
    max: usize,
) -> Composable {
    let reviewer = if reviewer.declared_writes().iter().any(|k| k == key) {
        reviewer
    } else {
        reviewer.output_key(key)
    };
    (worker >> reviewer) * until_state(S::eq(key, target)).max(max)
}

/// Each agent in turn until one succeeds: `a / b / c`.
///
/// ```
/// use reel_compose::{AgentBuilder, cascade};
///
/// let robust = cascade(vec![AgentBuilder::new("primary").into(), AgentBuilder::new("backup").into()]);
/// assert_eq!(robust.label(), "primary / backup");
/// ```
pub fn cascade(agents: Vec<Composable>) -> Composable {
    Composable::Fallback(crate::composable::Fallback {
        alternatives: agents,
    })
}

/// Every agent at once, their outputs merged (joined with newlines, in the order given,
/// whatever order they finish in): `a | b | c`.
///
/// ```
/// use reel_compose::{AgentBuilder, fan_out_merge};
///
/// let multi = fan_out_merge(vec![AgentBuilder::new("tech").into(), AgentBuilder::new("legal").into()]);
/// assert_eq!(multi.label(), "tech | legal");
/// ```
pub fn fan_out_merge(agents: Vec<Composable>) -> Composable {
    Composable::FanOut(crate::composable::FanOut { branches: agents })
}

/// `worker`, then `supervisor`, repeated until the state's `key` is `true` (at most `max`
/// rounds): `(worker >> supervisor) * until_state(S::is_true(key)).max(max)`. Unless the
/// supervisor already declares `key`, its answer is written there (`.output_key(key)`), so
/// an answer `true` approves.
///
/// ```
/// use reel_compose::{AgentBuilder, supervised};
///
/// let approved = supervised(AgentBuilder::new("drafter"), AgentBuilder::new("supervisor"), "approved", 5);
/// assert_eq!(approved.label(), "(drafter >> supervisor) * until(S::is_true(approved), max 5)");
/// ```
pub fn supervised(
    worker: AgentBuilder,
    supervisor: AgentBuilder,
    key: &str,
    max: usize,
) -> Composable {
    let supervisor = if supervisor.declared_writes().iter().any(|k| k == key) {
        supervisor
    } else {
        supervisor.output_key(key)
    };
    (worker >> supervisor) * until_state(S::is_true(key)).max(max)
}
