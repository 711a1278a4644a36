//! Phase instruction modifiers: text appended to a phase's instruction (or sent as a
//! context turn), computed from the state at each turn boundary.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::state::State;

/// Text computed from the state.
pub type ContextFn = Arc<dyn Fn(&State) -> String + Send + Sync>;

/// Whether a conditional modifier applies, judged on the state (the same shape as a phase
/// guard, `crate::phases::Guard`).
pub type Predicate = Arc<dyn Fn(&State) -> bool + Send + Sync>;

/// One modifier. Rendered in declaration order, the defaults' first (see
/// [`PhaseDefaults`](super::PhaseDefaults)); each renders to at most one line.
#[derive(Clone)]
pub enum Modifier {
    /// `[Context: k=v, k2=v2]` for the listed keys present in the state (a string value
    /// as it is, any other value as JSON); nothing when none is present. The seed's
    /// `with_state` (`StateAppend`).
    StateAppend(Vec<String>),
    /// The text when the predicate holds. The seed's `when` (`Conditional`).
    Conditional(Predicate, String),
    /// What the function returns, unless empty. The seed's `with_context`
    /// (`CustomAppend`).
    CustomAppend(ContextFn),
}

impl fmt::Debug for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modifier::StateAppend(keys) => f.debug_tuple("StateAppend").field(keys).finish(),
            Modifier::Conditional(_, text) => f.debug_tuple("Conditional").field(text).finish(),
            Modifier::CustomAppend(_) => f.write_str("CustomAppend(..)"),
        }
    }
}

impl Modifier {
    /// What this modifier adds for `state`, if anything.
    pub fn render(&self, state: &State) -> Option<String> {
        match self {
            Modifier::StateAppend(keys) => {
                let pairs: Vec<String> = keys
                    .iter()
                    .filter_map(|key| {
                        state
                            .get_raw(key)
                            .map(|value| format!("{key}={}", plain(&value)))
                    })
                    .collect();
                (!pairs.is_empty()).then(|| format!("[Context: {}]", pairs.join(", ")))
            }
            Modifier::Conditional(predicate, text) => predicate(state).then(|| text.clone()),
            Modifier::CustomAppend(f) => Some(f(state)).filter(|text| !text.is_empty()),
        }
    }
}

/// The modifiers' lines for `state`, one per modifier that adds something, joined by
/// newlines; `None` when none adds anything.
pub fn render_all<'a>(
    modifiers: impl IntoIterator<Item = &'a Modifier>,
    state: &State,
) -> Option<String> {
    let lines: Vec<String> = modifiers
        .into_iter()
        .filter_map(|modifier| modifier.render(state))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// A state value as a person reads it: a string without its quotes, anything else as JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
