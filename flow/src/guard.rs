//! [`Guard`]: the one predicate type of a flow, over session state and the flow's marking.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::state_view::StateView;

/// What a guard is evaluated against: the session state, the steps done so far, and the
/// tools that have returned without error.
pub struct GuardContext<'a> {
    /// The session state.
    pub state: &'a dyn StateView,
    /// Whether a step is done (the marking).
    pub done: &'a dyn Fn(&str) -> bool,
    /// Whether a call of a tool has returned without error.
    pub called_ok: &'a dyn Fn(&str) -> bool,
}

/// The code of a [`CustomGuard`].
type Predicate = Arc<dyn Fn(&dyn StateView) -> bool + Send + Sync>;

/// A code predicate: the escape hatch of [`Guard::custom`]. It cannot be serialized.
#[derive(Clone)]
pub struct CustomGuard {
    /// The name shown in explanations and diagrams.
    pub name: String,
    predicate: Predicate,
}

impl fmt::Debug for CustomGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomGuard({:?})", self.name)
    }
}

/// A predicate over session state and the flow's marking. Every atom but
/// [`Guard::Custom`] is data: it serializes to JSON as `{"is_true": "key"}`,
/// `{"eq": {"key": "k", "value": v}}`, `{"all": [..]}`, ….
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Guard {
    /// The key holds `true`.
    IsTrue(String),
    /// The key is present and not `null`.
    IsSet(String),
    /// The key holds exactly this JSON value.
    Eq {
        /// The key.
        key: String,
        /// The value it must equal.
        value: Value,
    },
    /// Every key is present, not `null` and not the empty string.
    Captured(Vec<String>),
    /// A call of the tool has returned without error.
    CalledOk(String),
    /// The step is done.
    Done(String),
    /// `{name}:result` is set: a resolver, a sub-agent or a step's `on_enter` delivered.
    Resolved(String),
    /// Every guard holds (`all([])` always holds).
    All(Vec<Guard>),
    /// At least one guard holds (`any([])` never holds).
    Any(Vec<Guard>),
    /// The guard does not hold.
    Not(Box<Guard>),
    /// A code predicate over the state; cannot be serialized.
    #[serde(skip)]
    Custom(CustomGuard),
}

impl Guard {
    /// The key holds `true`.
    pub fn is_true(key: impl Into<String>) -> Guard {
        Guard::IsTrue(key.into())
    }

    /// The key is present and not `null`.
    pub fn is_set(key: impl Into<String>) -> Guard {
        Guard::IsSet(key.into())
    }

    /// The key holds exactly `value`.
    pub fn eq(key: impl Into<String>, value: impl Into<Value>) -> Guard {
        Guard::Eq {
            key: key.into(),
            value: value.into(),
        }
    }

    /// Every key is present, not `null` and not the empty string.
    pub fn captured<I, S>(keys: I) -> Guard
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Guard::Captured(keys.into_iter().map(Into::into).collect())
    }

    /// A call of `tool` has returned without error.
    pub fn called_ok(tool: impl Into<String>) -> Guard {
        Guard::CalledOk(tool.into())
    }

    /// The step is done.
    pub fn done(step: impl Into<String>) -> Guard {
        Guard::Done(step.into())
    }

    /// `{name}:result` is set.
    pub fn resolved(name: impl Into<String>) -> Guard {
        Guard::Resolved(name.into())
    }

    /// Every guard holds.
    pub fn all(guards: impl IntoIterator<Item = Guard>) -> Guard {
        Guard::All(guards.into_iter().collect())
    }

    /// At least one guard holds.
    pub fn any(guards: impl IntoIterator<Item = Guard>) -> Guard {
        Guard::Any(guards.into_iter().collect())
    }

    /// The guard does not hold.
    #[allow(clippy::should_implement_trait)] // the seed's name for the atom
    pub fn not(guard: Guard) -> Guard {
        Guard::Not(Box::new(guard))
    }

    /// A code predicate named `name` (shown in explanations and diagrams). A flow holding
    /// one cannot be written as data.
    pub fn custom(
        name: impl Into<String>,
        predicate: impl Fn(&dyn StateView) -> bool + Send + Sync + 'static,
    ) -> Guard {
        Guard::Custom(CustomGuard {
            name: name.into(),
            predicate: Arc::new(predicate),
        })
    }

    /// Whether the guard holds in `context`.
    pub fn holds(&self, context: &GuardContext<'_>) -> bool {
        let state = context.state;
        match self {
            Guard::IsTrue(key) => state.get(key) == Some(&Value::Bool(true)),
            Guard::IsSet(key) => state.get(key).is_some_and(|v| !v.is_null()),
            Guard::Eq { key, value } => state.get(key) == Some(value),
            Guard::Captured(keys) => keys.iter().all(|key| {
                state
                    .get(key)
                    .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
            }),
            Guard::CalledOk(tool) => (context.called_ok)(tool),
            Guard::Done(step) => (context.done)(step),
            Guard::Resolved(name) => state
                .get(&format!("{name}:result"))
                .is_some_and(|v| !v.is_null()),
            Guard::All(guards) => guards.iter().all(|g| g.holds(context)),
            Guard::Any(guards) => guards.iter().any(|g| g.holds(context)),
            Guard::Not(guard) => !guard.holds(context),
            Guard::Custom(custom) => (custom.predicate)(state),
        }
    }

    /// Every guard inside this one, itself first.
    pub fn walk(&self, visit: &mut dyn FnMut(&Guard)) {
        visit(self);
        match self {
            Guard::All(guards) | Guard::Any(guards) => {
                guards.iter().for_each(|g| g.walk(visit));
            }
            Guard::Not(guard) => guard.walk(visit),
            _ => {}
        }
    }

    /// The steps this guard names with `done(..)`.
    pub fn steps_named(&self) -> Vec<String> {
        let mut steps = Vec::new();
        self.walk(&mut |g| {
            if let Guard::Done(step) = g {
                steps.push(step.clone());
            }
        });
        steps
    }

    /// Whether the guard holds a [`Guard::Custom`] anywhere.
    pub fn has_custom(&self) -> bool {
        let mut found = false;
        self.walk(&mut |g| found |= matches!(g, Guard::Custom(_)));
        found
    }

    /// What must hold for this guard to hold, positively: the `done(..)` steps and
    /// `called_ok(..)` tools required through `all` (not under `any` or `not`).
    pub(crate) fn required_atoms(&self, steps: &mut Vec<String>, tools: &mut Vec<String>) {
        match self {
            Guard::Done(step) => steps.push(step.clone()),
            Guard::CalledOk(tool) => tools.push(tool.clone()),
            Guard::All(guards) => guards.iter().for_each(|g| g.required_atoms(steps, tools)),
            _ => {}
        }
    }
}

impl fmt::Display for Guard {
    /// The guard as the flow verbs write it: `is_true(identity_verified)`,
    /// `all(done(verify), not(is_set(app:blocked)))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, guards: &[Guard]| {
            write!(f, "{name}(")?;
            for (i, g) in guards.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{g}")?;
            }
            write!(f, ")")
        };
        match self {
            Guard::IsTrue(key) => write!(f, "is_true({key})"),
            Guard::IsSet(key) => write!(f, "is_set({key})"),
            Guard::Eq { key, value } => write!(f, "eq({key}, {value})"),
            Guard::Captured(keys) => write!(f, "captured({})", keys.join(", ")),
            Guard::CalledOk(tool) => write!(f, "called_ok({tool})"),
            Guard::Done(step) => write!(f, "done({step})"),
            Guard::Resolved(name) => write!(f, "resolved({name})"),
            Guard::All(guards) => list(f, "all", guards),
            Guard::Any(guards) => list(f, "any", guards),
            Guard::Not(guard) => write!(f, "not({guard})"),
            Guard::Custom(custom) => write!(f, "custom({})", custom.name),
        }
    }
}
