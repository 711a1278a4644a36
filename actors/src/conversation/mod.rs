//! Conversation control: how a multi-phase conversation is steered at its turn
//! boundaries — steering modes, context delivery, instruction modifiers, needs and the
//! navigation block, enter prompts, repair (`docs/decisions/0050-conversation-control.md`).
//!
//! Each piece is a deterministic function of the state, the phase machine and what the
//! control lane keeps ([`ConversationData`]); nothing reads a clock or draws a number. The
//! control lane's turn pipeline calls them (the crate's private `control_lane` module
//! lists the steps) and sends all the context of one turn boundary as one `clientContent` frame
//! ([`ContextBatch`]), at once or, under [`ContextDelivery::Deferred`], just before the
//! application's next send ([`PendingContext`]).
//!
//! One file per concept: [`steering`], [`modifiers`], [`defaults`], [`navigation`],
//! [`enter_prompt`], [`repair`], [`context_batch`], [`deferred`]; `pipeline.rs` is the
//! control lane's side.

pub mod context_batch;
pub mod defaults;
pub mod deferred;
pub mod enter_prompt;
pub mod modifiers;
pub mod navigation;
mod pipeline;
pub mod repair;
pub mod steering;

pub use context_batch::ContextBatch;
pub use defaults::PhaseDefaults;
pub use deferred::PendingContext;
pub use enter_prompt::{EnterPrompt, EnterPromptFn};
pub use modifiers::{ContextFn, Modifier, Predicate};
pub use navigation::{NAVIGATION_CONTEXT_KEY, Previous};
pub use repair::{
    EscalationHook, NeedsFulfillment, REPAIR_ESCALATION_KEY, REPAIR_UNFULFILLED_KEY, RepairAction,
    RepairConfig,
};
pub use steering::{ContextDelivery, SteeringMode};

/// What the control lane keeps for conversation control across its restarts.
#[derive(Debug, Clone, Default)]
pub struct ConversationData {
    /// How phases steer the model.
    pub(crate) steering: SteeringMode,
    /// When context is sent.
    pub(crate) delivery: ContextDelivery,
    /// The phase left last, and when.
    pub(crate) previous: Option<Previous>,
    /// How long the current phase's needs have gone unmet.
    pub(crate) needs: NeedsFulfillment,
    /// The modifiers' text last sent as a context turn in this phase (sent again only when
    /// it changes).
    pub(crate) last_modifiers: Option<String>,
    /// The navigation block last sent as a context turn in this phase.
    pub(crate) last_navigation: Option<String>,
}

impl ConversationData {
    /// Nothing yet, steering with `steering` and delivering with `delivery`.
    pub fn new(steering: SteeringMode, delivery: ContextDelivery) -> Self {
        ConversationData {
            steering,
            delivery,
            ..ConversationData::default()
        }
    }

    /// The conversation moved from `from` at turn count `turn`: a new stay.
    pub(crate) fn moved(&mut self, from: String, turn: u64) {
        self.previous = Some(Previous { phase: from, turn });
        self.needs.reset();
        self.last_modifiers = None;
        self.last_navigation = None;
    }
}
