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

use crate::state::State;
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
        self.transition_with(target, guard, description)
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
}

/// Builds a [`PhaseMachine`].
#[derive(Debug)]
pub struct PhaseMachineBuilder {
    phases: Vec<Phase>,
    initial: String,
}

impl PhaseMachineBuilder {
    /// Adds a phase.
    pub fn phase(mut self, phase: Phase) -> Self {
        self.phases.push(phase);
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
        Ok(PhaseMachine {
            phases,
            initial: self.initial,
        })
    }
}

impl PhaseMachine {
    /// A builder whose machine starts in `initial`.
    pub fn builder(initial: impl Into<String>) -> PhaseMachineBuilder {
        PhaseMachineBuilder {
            phases: Vec::new(),
            initial: initial.into(),
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

    /// The transition that fires from `current` on `state`, if any.
    pub fn evaluate(&self, current: &str, state: &State) -> Option<&Transition> {
        let phase = self.phases.get(current)?;
        if phase.terminal {
            return None;
        }
        phase.transitions.iter().find(|t| (t.guard)(state))
    }
}
