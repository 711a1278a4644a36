//! Conversation phases: each with its instruction, allowed tools, transitions and hooks,
//! checked as a whole when the session starts.

use reel_actors::conversation::{ContextDelivery, PhaseDefaults, RepairConfig, SteeringMode};
use reel_actors::phases::{Phase, PhaseError, PhaseMachine};

use crate::builder::LiveBuilder;
use crate::phase::PhaseBuilder;

/// The phases part of a [`LiveBuilder`].
#[derive(Debug, Default)]
pub(crate) struct PhasesPart {
    phases: Vec<Phase>,
    initial: Option<String>,
    defaults: PhaseDefaults,
    repair: Option<RepairConfig>,
}

impl PhasesPart {
    /// The machine, or `None` when the chain defines no phase and names no initial one.
    pub(crate) fn machine(&self) -> Result<Option<PhaseMachine>, PhaseError> {
        let initial = match (&self.initial, self.phases.first()) {
            (Some(initial), _) => initial.clone(),
            (None, Some(first)) => first.name().to_owned(),
            (None, None) => return Ok(None),
        };
        let mut builder = PhaseMachine::builder(initial).defaults(self.defaults.clone());
        if let Some(repair) = &self.repair {
            builder = builder.repair(repair.clone());
        }
        let machine = self
            .phases
            .iter()
            .cloned()
            .fold(builder, |machine, phase| machine.phase(phase))
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

    /// What every phase shares, merged into each (a phase's own modifiers come after the
    /// defaults', and its `prompt_on_enter` wins): modifiers, the navigation block,
    /// `prompt_on_enter`.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase_defaults(|d| d.with_state(&["caller_name"]).navigation().prompt_on_enter(true))
    ///     .phase("greeting", |p| p.instruction("Greet the caller."));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn phase_defaults(mut self, build: impl FnOnce(PhaseDefaults) -> PhaseDefaults) -> Self {
        self.phases.defaults = build(std::mem::take(&mut self.phases.defaults));
        self
    }

    /// Nudges the model when a phase's needs stay unmet, then escalates (see
    /// [`RepairConfig`]).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_actors::conversation::RepairConfig;
    /// let builder = Live::builder()
    ///     .repair(RepairConfig::new(2, 4).escalate_to("take_message"))
    ///     .phase("identify", |p| p.needs(&["caller_name"]).transition("take_message", |_| false))
    ///     .phase("take_message", |p| p.terminal());
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn repair(mut self, repair: RepairConfig) -> Self {
        self.phases.repair = Some(repair);
        self
    }

    /// How phases steer the model (default [`SteeringMode::InstructionUpdate`]). Under
    /// [`SteeringMode::ContextInjection`] the setup carries the session's own
    /// [`instruction`](LiveBuilder::instruction), and each phase's goes as a context turn.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_actors::conversation::SteeringMode;
    /// let builder = Live::builder()
    ///     .instruction("You are a restaurant host.")
    ///     .steering_mode(SteeringMode::ContextInjection)
    ///     .phase("greeting", |p| p.instruction("Welcome the guest."));
    /// let config = builder.session_config().unwrap();
    /// let instruction = config.setup().system_instruction.as_ref().unwrap();
    /// assert_eq!(instruction.parts()[0].text.as_deref(), Some("You are a restaurant host."));
    /// ```
    pub fn steering_mode(mut self, mode: SteeringMode) -> Self {
        self.options.steering = mode;
        self
    }

    /// When a turn boundary's context is sent (default [`ContextDelivery::Immediate`]).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_actors::conversation::ContextDelivery;
    /// let builder = Live::builder().context_delivery(ContextDelivery::Deferred);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn context_delivery(mut self, delivery: ContextDelivery) -> Self {
        self.options.context_delivery = delivery;
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
