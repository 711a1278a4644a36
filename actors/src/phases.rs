//! The conversation phase machine: phases with their own instruction and tools, and guarded
//! transitions evaluated at each turn complete.
//!
//! ```
//! use reel_actors::phases::{Phase, PhaseMachine};
//! let machine = PhaseMachine::builder("greeting")
//!     .phase(Phase::new("greeting").instruction("Greet the caller.")
//!         .transition("booking", |s| s.get::<bool>("app:greeted") == Some(true)))
//!     .phase(Phase::new("booking").instruction("Book a table.").tools(["book_table"]))
//!     .build()
//!     .unwrap();
//! assert_eq!(machine.initial(), "greeting");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::conversation::{EnterPrompt, Modifier, PhaseDefaults, RepairConfig};
use crate::state::State;
use crate::transcript::TranscriptTurn;
use crate::writer::SessionWriter;

/// A guard: whether a transition may fire, judged on the state.
pub type Guard = Arc<dyn Fn(&State) -> bool + Send + Sync>;
/// A hook run when a phase is entered or left.
pub type PhaseHook = Arc<dyn Fn(State, SessionWriter) -> BoxFuture<'static, ()> + Send + Sync>;
/// An instruction computed from the state when the phase is entered.
pub type DynamicInstruction = Arc<dyn Fn(&State) -> String + Send + Sync>;

/// A phase's instruction.
#[derive(Clone)]
pub enum Instruction {
    /// Fixed text.
    Static(String),
    /// Computed when the phase is entered.
    Dynamic(DynamicInstruction),
}

/// A way out of a phase.
#[derive(Clone)]
pub struct Transition {
    /// The phase it leads to.
    pub target: String,
    /// When it may fire.
    pub guard: Guard,
    /// Why, for events and logs.
    pub description: String,
    /// Whether the description was given (`transition_with`): only then does the
    /// navigation block show it.
    pub described: bool,
}

/// One phase of the conversation.
#[derive(Clone)]
pub struct Phase {
    name: String,
    instruction: Option<Instruction>,
    tools: Option<Vec<String>>,
    transitions: Vec<Transition>,
    on_enter: Option<PhaseHook>,
    on_exit: Option<PhaseHook>,
    terminal: bool,
    /// Entry guard: the phase may be entered only when it holds.
    guard: Option<Guard>,
    needs: Vec<String>,
    modifiers: Vec<Modifier>,
    navigation: bool,
    enter_prompt: Option<EnterPrompt>,
    prompt_on_enter: Option<bool>,
}

impl fmt::Debug for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Phase")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .field(
                "transitions",
                &self
                    .transitions
                    .iter()
                    .map(|t| (&t.target, &t.description))
                    .collect::<Vec<_>>(),
            )
            .field("terminal", &self.terminal)
            .field("needs", &self.needs)
            .field("modifiers", &self.modifiers)
            .field("navigation", &self.navigation)
            .field("enter_prompt", &self.enter_prompt)
            .field("prompt_on_enter", &self.prompt_on_enter)
            .finish_non_exhaustive()
    }
}

impl Phase {
    /// A phase named `name` with no instruction, all tools, no transitions.
    pub fn new(name: impl Into<String>) -> Self {
        Phase {
            name: name.into(),
            instruction: None,
            tools: None,
            transitions: Vec::new(),
            on_enter: None,
            on_exit: None,
            terminal: false,
            guard: None,
            needs: Vec::new(),
            modifiers: Vec::new(),
            navigation: false,
            enter_prompt: None,
            prompt_on_enter: None,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instruction sent to the model when the phase is entered.
    pub fn instruction(mut self, text: impl Into<String>) -> Self {
        self.instruction = Some(Instruction::Static(text.into()));
        self
    }

    /// An instruction computed from the state when the phase is entered.
    pub fn dynamic_instruction(
        mut self,
        f: impl Fn(&State) -> String + Send + Sync + 'static,
    ) -> Self {
        self.instruction = Some(Instruction::Dynamic(Arc::new(f)));
        self
    }

    /// Only these tools may be called in this phase (calls to others are refused with an
    /// error the model sees). Without this, every tool may be called.
    pub fn tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// A transition to `target` when `guard` holds at a turn complete. Transitions are
    /// tried in the order they were added; the first whose guard holds fires.
    pub fn transition(
        self,
        target: impl Into<String>,
        guard: impl Fn(&State) -> bool + Send + Sync + 'static,
    ) -> Self {
        let target = target.into();
        let description = format!("guard to {target}");
        let mut phase = self.transition_with(target, guard, description);
        if let Some(last) = phase.transitions.last_mut() {
            last.described = false;
        }
        phase
    }

    /// A transition with a description (shown in events and reports).
    pub fn transition_with(
        mut self,
        target: impl Into<String>,
        guard: impl Fn(&State) -> bool + Send + Sync + 'static,
        description: impl Into<String>,
    ) -> Self {
        self.transitions.push(Transition {
            target: target.into(),
            guard: Arc::new(guard),
            description: description.into(),
            described: true,
        });
        self
    }

    /// Runs when the phase is entered (after the previous phase's `on_exit`).
    pub fn on_enter<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.on_enter = Some(Arc::new(move |s, w| Box::pin(f(s, w))));
        self
    }

    /// Runs when the phase is left.
    pub fn on_exit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.on_exit = Some(Arc::new(move |s, w| Box::pin(f(s, w))));
        self
    }

    /// No transition leaves this phase.
    pub fn terminal(mut self) -> Self {
        self.terminal = true;
        self
    }

    /// The phase may be entered only when `guard` holds: a transition to it whose own
    /// guard holds is skipped while this one does not, and the next is tried.
    pub fn guard(mut self, guard: impl Fn(&State) -> bool + Send + Sync + 'static) -> Self {
        self.guard = Some(Arc::new(guard));
        self
    }

    /// The state keys this phase gathers: the navigation block lists those still missing,
    /// and repair counts the turns they stay missing.
    pub fn needs(mut self, keys: &[&str]) -> Self {
        self.needs = keys.iter().map(|key| (*key).to_owned()).collect();
        self
    }

    /// Appends `[Context: k=v, …]` for these keys (see [`Modifier::StateAppend`]).
    pub fn with_state(mut self, keys: &[&str]) -> Self {
        self.modifiers.push(Modifier::StateAppend(
            keys.iter().map(|key| (*key).to_owned()).collect(),
        ));
        self
    }

    /// Appends `text` when `predicate` holds (see [`Modifier::Conditional`]).
    pub fn when(
        mut self,
        predicate: impl Fn(&State) -> bool + Send + Sync + 'static,
        text: impl Into<String>,
    ) -> Self {
        self.modifiers
            .push(Modifier::Conditional(Arc::new(predicate), text.into()));
        self
    }

    /// Appends what `f` returns, unless empty (see [`Modifier::CustomAppend`]).
    pub fn with_context(mut self, f: impl Fn(&State) -> String + Send + Sync + 'static) -> Self {
        self.modifiers.push(Modifier::CustomAppend(Arc::new(f)));
        self
    }

    /// The phase carries the `[Navigation]` block (see [`crate::conversation::navigation`]).
    pub fn navigation(mut self) -> Self {
        self.navigation = true;
        self
    }

    /// Said as the model when the phase is entered, after which the model answers.
    pub fn enter_prompt(mut self, text: impl Into<String>) -> Self {
        self.enter_prompt = Some(EnterPrompt::Text(text.into()));
        self
    }

    /// An enter prompt computed from the state and the finished turns when the phase is
    /// entered.
    pub fn enter_prompt_fn(
        mut self,
        f: impl Fn(&State, &[TranscriptTurn]) -> String + Send + Sync + 'static,
    ) -> Self {
        self.enter_prompt = Some(EnterPrompt::Computed(Arc::new(f)));
        self
    }

    /// Whether entering the phase asks the model to answer at once (overrides the
    /// defaults'; an enter prompt always does).
    pub fn prompt_on_enter(mut self, prompt: bool) -> Self {
        self.prompt_on_enter = Some(prompt);
        self
    }

    /// Whether the phase may be entered on `state`.
    pub fn may_enter(&self, state: &State) -> bool {
        self.guard.as_ref().is_none_or(|guard| guard(state))
    }

    /// The state keys the phase gathers.
    pub fn needs_keys(&self) -> &[String] {
        &self.needs
    }

    /// Its own modifiers, in order.
    pub fn modifier_list(&self) -> &[Modifier] {
        &self.modifiers
    }

    /// Whether it carries the navigation block itself.
    pub fn has_navigation(&self) -> bool {
        self.navigation
    }

    /// Its enter prompt.
    pub fn enter_prompt_text(&self) -> Option<&EnterPrompt> {
        self.enter_prompt.as_ref()
    }

    /// Its own `prompt_on_enter`, if set.
    pub fn prompts_on_enter(&self) -> Option<bool> {
        self.prompt_on_enter
    }

    /// Whether no transition leaves it.
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// Its transitions, in order.
    pub fn transition_list(&self) -> &[Transition] {
        &self.transitions
    }

    /// The tools allowed, if restricted.
    pub fn allowed_tools(&self) -> Option<&[String]> {
        self.tools.as_deref()
    }

    /// The instruction for the current state.
    pub fn instruction_for(&self, state: &State) -> Option<String> {
        match &self.instruction {
            Some(Instruction::Static(text)) => Some(text.clone()),
            Some(Instruction::Dynamic(f)) => Some(f(state)),
            None => None,
        }
    }

    pub(crate) fn enter_hook(&self) -> Option<&PhaseHook> {
        self.on_enter.as_ref()
    }

    pub(crate) fn exit_hook(&self) -> Option<&PhaseHook> {
        self.on_exit.as_ref()
    }
}

/// A phase machine that failed validation. The texts say what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhaseError {
    /// The initial phase is not defined.
    #[error("initial phase `{initial}` is not defined; defined phases: {defined:?}")]
    UnknownInitial {
        /// The initial phase named.
        initial: String,
        /// The phases defined.
        defined: Vec<String>,
    },
    /// Two phases share a name.
    #[error("phase `{name}` is defined twice; give each phase a unique name")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// A transition leads to a phase that does not exist.
    #[error(
        "phase `{from}` has a transition to `{to}`, which is not defined; defined phases: {defined:?}"
    )]
    UnknownTarget {
        /// The phase with the transition.
        from: String,
        /// The missing target.
        to: String,
        /// The phases defined.
        defined: Vec<String>,
    },
    /// A terminal phase has transitions.
    #[error("phase `{name}` is terminal but has transitions; remove them or drop `.terminal()`")]
    TerminalWithTransitions {
        /// The phase.
        name: String,
    },
    /// The repair escalation leads to a phase that does not exist.
    #[error(
        "the repair escalation goes to `{to}`, which is not defined; defined phases: {defined:?}"
    )]
    UnknownEscalation {
        /// The missing target.
        to: String,
        /// The phases defined.
        defined: Vec<String>,
    },
    /// A phase allows a tool no one declared.
    #[error(
        "phase `{phase}` allows tool `{tool}`, which is not declared; declared tools: {declared:?}"
    )]
    UnknownTool {
        /// The phase.
        phase: String,
        /// The tool's name.
        tool: String,
        /// The declared tools.
        declared: Vec<String>,
    },
}

/// The validated phases of a session.
#[derive(Clone, Debug)]
pub struct PhaseMachine {
    phases: BTreeMap<String, Phase>,
    initial: String,
    defaults: PhaseDefaults,
    repair: Option<RepairConfig>,
}

/// Builds a [`PhaseMachine`].
#[derive(Debug)]
pub struct PhaseMachineBuilder {
    phases: Vec<Phase>,
    initial: String,
    defaults: PhaseDefaults,
    repair: Option<RepairConfig>,
}

impl PhaseMachineBuilder {
    /// Adds a phase.
    pub fn phase(mut self, phase: Phase) -> Self {
        self.phases.push(phase);
        self
    }

    /// What every phase shares (merged into each; a phase's own settings extend them).
    pub fn defaults(mut self, defaults: PhaseDefaults) -> Self {
        self.defaults = defaults;
        self
    }

    /// Nudges and escalates when a phase's needs stay unmet (see [`RepairConfig`]).
    pub fn repair(mut self, repair: RepairConfig) -> Self {
        self.repair = Some(repair);
        self
    }

    /// Checks the phases and builds the machine.
    pub fn build(self) -> Result<PhaseMachine, PhaseError> {
        let mut phases = BTreeMap::new();
        for phase in self.phases {
            if phases.contains_key(&phase.name) {
                return Err(PhaseError::Duplicate { name: phase.name });
            }
            phases.insert(phase.name.clone(), phase);
        }
        let defined: Vec<String> = phases.keys().cloned().collect();
        if !phases.contains_key(&self.initial) {
            return Err(PhaseError::UnknownInitial {
                initial: self.initial,
                defined,
            });
        }
        for phase in phases.values() {
            if phase.terminal && !phase.transitions.is_empty() {
                return Err(PhaseError::TerminalWithTransitions {
                    name: phase.name.clone(),
                });
            }
            for transition in &phase.transitions {
                if !phases.contains_key(&transition.target) {
                    return Err(PhaseError::UnknownTarget {
                        from: phase.name.clone(),
                        to: transition.target.clone(),
                        defined,
                    });
                }
            }
        }
        if let Some(target) = self.repair.as_ref().and_then(|r| r.escalate_to.as_ref())
            && !phases.contains_key(target)
        {
            return Err(PhaseError::UnknownEscalation {
                to: target.clone(),
                defined,
            });
        }
        Ok(PhaseMachine {
            phases,
            initial: self.initial,
            defaults: self.defaults,
            repair: self.repair,
        })
    }
}

impl PhaseMachine {
    /// A builder whose machine starts in `initial`.
    pub fn builder(initial: impl Into<String>) -> PhaseMachineBuilder {
        PhaseMachineBuilder {
            phases: Vec::new(),
            initial: initial.into(),
            defaults: PhaseDefaults::default(),
            repair: None,
        }
    }

    /// The initial phase's name.
    pub fn initial(&self) -> &str {
        &self.initial
    }

    /// A phase by name.
    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.get(name)
    }

    /// The phases' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.phases.keys().map(String::as_str)
    }

    /// Checks that every tool a phase allows is declared.
    pub fn check_tools(&self, declared: &[String]) -> Result<(), PhaseError> {
        for phase in self.phases.values() {
            for tool in phase.tools.iter().flatten() {
                if !declared.contains(tool) {
                    return Err(PhaseError::UnknownTool {
                        phase: phase.name.clone(),
                        tool: tool.clone(),
                        declared: declared.to_vec(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The transition that fires from `current` on `state`, if any: the first whose guard
    /// holds and whose target may be entered.
    pub fn evaluate(&self, current: &str, state: &State) -> Option<&Transition> {
        let phase = self.phases.get(current)?;
        if phase.terminal {
            return None;
        }
        phase.transitions.iter().find(|t| {
            (t.guard)(state)
                && self
                    .phases
                    .get(&t.target)
                    .is_some_and(|p| p.may_enter(state))
        })
    }

    /// What every phase shares.
    pub fn defaults(&self) -> &PhaseDefaults {
        &self.defaults
    }

    /// The repair settings, if the session repairs.
    pub fn repair(&self) -> Option<&RepairConfig> {
        self.repair.as_ref()
    }

    /// `phase`'s modifiers merged with the defaults': the defaults' first.
    pub fn modifiers_of<'a>(&'a self, phase: &'a Phase) -> impl Iterator<Item = &'a Modifier> {
        self.defaults
            .modifiers()
            .iter()
            .chain(phase.modifiers.iter())
    }

    /// Whether `phase` carries the navigation block (its own or the defaults').
    pub fn navigates(&self, phase: &Phase) -> bool {
        phase.navigation || self.defaults.has_navigation()
    }

    /// Whether entering `phase` asks the model to answer: an enter prompt always does;
    /// else the phase's `prompt_on_enter`, else the defaults'.
    pub fn prompts_on_enter(&self, phase: &Phase) -> bool {
        phase.enter_prompt.is_some()
            || phase
                .prompt_on_enter
                .or(self.defaults.prompts_on_enter())
                .unwrap_or(false)
    }

    /// Whether any conversation control is configured (modifiers, navigation, enter
    /// prompts, needs with repair): without any, the turn pipeline sends and writes
    /// exactly what it did before these existed.
    pub fn converses(&self) -> bool {
        !self.defaults.modifiers().is_empty()
            || self.defaults.has_navigation()
            || self.defaults.prompts_on_enter().is_some()
            || self.repair.is_some()
            || self.phases.values().any(|p| {
                !p.modifiers.is_empty()
                    || p.navigation
                    || p.enter_prompt.is_some()
                    || p.prompt_on_enter.is_some()
            })
    }
}
