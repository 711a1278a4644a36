//! Conversation phases: each with its instruction, allowed tools, transitions and hooks,
//! checked as a whole when the session starts.

use reel_actors::phases::{Phase, PhaseError, PhaseMachine};

use crate::builder::LiveBuilder;
use crate::phase::PhaseBuilder;

/// The phases part of a [`LiveBuilder`].
#[derive(Debug, Default)]
pub(crate) struct PhasesPart {
    phases: Vec<Phase>,
    initial: Option<String>,
}

impl PhasesPart {
    /// The machine, or `None` when the chain defines no phase and names no initial one.
    pub(crate) fn machine(&self) -> Result<Option<PhaseMachine>, PhaseError> {
        let initial = match (&self.initial, self.phases.first()) {
            (Some(initial), _) => initial.clone(),
            (None, Some(first)) => first.name().to_owned(),
            (None, None) => return Ok(None),
        };
        let machine = self
            .phases
            .iter()
            .cloned()
            .fold(PhaseMachine::builder(initial), |machine, phase| {
                machine.phase(phase)
            })
            .build()?;
        Ok(Some(machine))
    }
}

impl LiveBuilder {
    /// Defines phase `name`, configured by `build` (instruction, tools, transitions,
    /// hooks; see [`PhaseBuilder`]). The session starts in the first phase defined, unless
    /// [`initial_phase`](LiveBuilder::initial_phase) names another. The initial phase's
    /// instruction is the session's system instruction.
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .phase("greeting", |p| {
    ///         p.instruction("Greet the user.")
    ///             .transition("farewell", |s| s.get::<u64>("session:turn_count").unwrap_or(0) >= 2)
    ///     })
    ///     .phase("farewell", |p| p.instruction("Say goodbye.").terminal());
    /// let config = builder.session_config().unwrap();
    /// let instruction = config.setup().system_instruction.as_ref().unwrap();
    /// assert_eq!(instruction.parts()[0].text.as_deref(), Some("Greet the user."));
    /// ```
    pub fn phase(
        mut self,
        name: impl Into<String>,
        build: impl FnOnce(PhaseBuilder) -> PhaseBuilder,
    ) -> Self {
        let phase = build(PhaseBuilder::new(name.into())).into_phase();
        self.phases.phases.push(phase);
        self
    }

    /// The phase the session starts in (by default, the first phase defined).
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .phase("greeting", |p| p.instruction("Greet the user."))
    ///     .phase("support", |p| p.instruction("Solve the user's problem."))
    ///     .initial_phase("support");
    /// let config = builder.session_config().unwrap();
    /// let instruction = config.setup().system_instruction.as_ref().unwrap();
    /// assert_eq!(instruction.parts()[0].text.as_deref(), Some("Solve the user's problem."));
    /// ```
    pub fn initial_phase(mut self, name: impl Into<String>) -> Self {
        self.phases.initial = Some(name.into());
        self
    }
}
