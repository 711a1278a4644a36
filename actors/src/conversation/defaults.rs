//! [`PhaseDefaults`]: what every phase shares, merged into each (a phase's own settings
//! extend the defaults, never replace them).

use std::sync::Arc;

use super::modifiers::{ContextFn, Modifier};
use crate::state::State;

/// Settings every phase gets (the seed's `phase_defaults`): modifiers rendered before the
/// phase's own, the navigation block, and `prompt_on_enter` unless the phase says
/// otherwise.
///
/// ```
/// use reel_actors::conversation::PhaseDefaults;
/// let defaults = PhaseDefaults::default()
///     .with_state(&["caller_name"])
///     .when(|s| s.contains("app:upset"), "Use extra empathy.")
///     .navigation()
///     .prompt_on_enter(true);
/// assert_eq!(defaults.modifiers().len(), 2);
/// assert!(defaults.has_navigation());
/// ```
#[derive(Clone, Debug, Default)]
pub struct PhaseDefaults {
    modifiers: Vec<Modifier>,
    navigation: bool,
    prompt_on_enter: Option<bool>,
}

impl PhaseDefaults {
    /// Appends `[Context: k=v, …]` for these keys (the seed's `StateAppend`).
    pub fn with_state(mut self, keys: &[&str]) -> Self {
        self.modifiers.push(Modifier::StateAppend(
            keys.iter().map(|key| (*key).to_owned()).collect(),
        ));
        self
    }

    /// Appends `text` when `predicate` holds (the seed's `Conditional`).
    pub fn when(
        mut self,
        predicate: impl Fn(&State) -> bool + Send + Sync + 'static,
        text: impl Into<String>,
    ) -> Self {
        self.modifiers
            .push(Modifier::Conditional(Arc::new(predicate), text.into()));
        self
    }

    /// Appends what `f` returns, unless empty (the seed's `CustomAppend`).
    pub fn with_context(mut self, f: impl Fn(&State) -> String + Send + Sync + 'static) -> Self {
        let f: ContextFn = Arc::new(f);
        self.modifiers.push(Modifier::CustomAppend(f));
        self
    }

    /// Every phase carries the `[Navigation]` block (see [`super::navigation`]).
    pub fn navigation(mut self) -> Self {
        self.navigation = true;
        self
    }

    /// Whether entering a phase asks the model to answer at once (a phase's own setting
    /// wins).
    pub fn prompt_on_enter(mut self, prompt: bool) -> Self {
        self.prompt_on_enter = Some(prompt);
        self
    }

    /// The modifiers, in order.
    pub fn modifiers(&self) -> &[Modifier] {
        &self.modifiers
    }

    /// Whether every phase carries the navigation block.
    pub fn has_navigation(&self) -> bool {
        self.navigation
    }

    /// The default for `prompt_on_enter`, if set.
    pub fn prompts_on_enter(&self) -> Option<bool> {
        self.prompt_on_enter
    }
}
