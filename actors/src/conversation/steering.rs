//! [`SteeringMode`] and [`ContextDelivery`]: how a phase's instruction and its per-turn
//! context reach the model, and when.

/// How phase instructions and per-turn modifiers reach the model (the seed's three modes;
/// `docs/decisions/0050-conversation-control.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SteeringMode {
    /// The system instruction is replaced on each transition, with the phase's modifiers
    /// and navigation baked into its text (re-sent at a turn boundary when that text
    /// changed). The default.
    #[default]
    InstructionUpdate,
    /// The system instruction (the session's own) is set once at connect and never
    /// updated; the phase's instruction, its modifiers and its navigation go to the model
    /// as model-role context turns.
    ContextInjection,
    /// The system instruction is replaced on each transition (with the navigation baked
    /// in); per-turn modifiers go as model-role context turns.
    Hybrid,
}

impl SteeringMode {
    /// Whether the phase's instruction is the system instruction (not a context turn).
    pub fn updates_instruction(self) -> bool {
        !matches!(self, SteeringMode::ContextInjection)
    }

    /// Whether the modifiers are sent as context turns (not baked into the instruction).
    pub fn modifiers_as_context(self) -> bool {
        !matches!(self, SteeringMode::InstructionUpdate)
    }
}

/// When a turn boundary's context frame is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextDelivery {
    /// At once, during the turn-complete pipeline. The default.
    #[default]
    Immediate,
    /// Queued, and sent just before the application's next `send_audio`, `send_text` or
    /// `send_video` (through the same transport mailbox, so in that order on the wire) —
    /// or at once when the boundary needs the model to answer (`prompt_on_enter`, an enter
    /// prompt, a first repair nudge), with whatever was queued before it.
    Deferred,
}
