//! Conversation repair: a phase whose needs stay unmet turn after turn gets a nudge, then
//! an escalation ([`RepairConfig`], [`NeedsFulfillment`]).

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::state::State;
use crate::writer::SessionWriter;

/// What runs when needs escalate (the same shape as a phase hook,
/// `crate::phases::PhaseHook`).
pub type EscalationHook = Arc<dyn Fn(State, SessionWriter) -> BoxFuture<'static, ()> + Send + Sync>;

/// The state key latched (`true`) when a phase's needs escalate.
pub const REPAIR_ESCALATION_KEY: &str = "repair:escalation";
/// The state key holding the needs still unmet when they escalated.
pub const REPAIR_UNFULFILLED_KEY: &str = "repair:unfulfilled";

/// When to nudge and when to escalate, for every phase with needs.
///
/// A turn boundary at which the current phase (entered before that turn) still misses some
/// of its needs counts one unmet turn; a boundary with every need present resets the count,
/// and so does a transition. At `nudge_after` unmet turns, and at each one after it, the
/// model gets the nudge `I still need to collect: a, b.` as a context turn (the first
/// nudge asks the model to answer, so it goes at once even under deferred delivery). At
/// `escalate_after` unmet turns the needs escalate, once per stay in the phase:
/// `repair:escalation` is set to `true` and `repair:unfulfilled` to the keys missing, the
/// transition to `escalate_to` is taken (if set and its target's guard allows it), and
/// `on_escalate` runs (if set).
///
/// ```
/// use reel_actors::conversation::RepairConfig;
/// let repair = RepairConfig::new(2, 4).escalate_to("take_message");
/// assert_eq!((repair.nudge_after, repair.escalate_after), (2, 4));
/// ```
#[derive(Clone)]
pub struct RepairConfig {
    /// Unmet turns before the first nudge (at least 1).
    pub nudge_after: u32,
    /// Unmet turns before the escalation.
    pub escalate_after: u32,
    /// The phase the escalation moves to, if any.
    pub escalate_to: Option<String>,
    /// Runs when the needs escalate, with the state and the runtime's writer.
    pub on_escalate: Option<EscalationHook>,
}

impl fmt::Debug for RepairConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RepairConfig")
            .field("nudge_after", &self.nudge_after)
            .field("escalate_after", &self.escalate_after)
            .field("escalate_to", &self.escalate_to)
            .field("on_escalate", &self.on_escalate.is_some())
            .finish()
    }
}

impl Default for RepairConfig {
    /// A nudge after 2 unmet turns, the escalation after 4.
    fn default() -> Self {
        RepairConfig::new(2, 4)
    }
}

impl RepairConfig {
    /// Nudges after `nudge_after` unmet turns, escalates after `escalate_after`.
    pub fn new(nudge_after: u32, escalate_after: u32) -> Self {
        RepairConfig {
            nudge_after: nudge_after.max(1),
            escalate_after,
            escalate_to: None,
            on_escalate: None,
        }
    }

    /// The escalation moves the conversation to phase `target`.
    pub fn escalate_to(mut self, target: impl Into<String>) -> Self {
        self.escalate_to = Some(target.into());
        self
    }

    /// Runs `f` when the needs escalate.
    pub fn on_escalate<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.on_escalate = Some(Arc::new(move |s, w| Box::pin(f(s, w))));
        self
    }
}

/// What repair does at one turn boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepairAction {
    /// Remind the model what is missing; `attempt` counts from 1.
    Nudge {
        /// Which nudge this is in the current stay.
        attempt: u32,
        /// The needs missing.
        missing: Vec<String>,
    },
    /// Give up on gathering: latch, transition, callback.
    Escalate {
        /// The needs missing.
        missing: Vec<String>,
    },
}

impl RepairAction {
    /// The nudge's context text, for a nudge.
    pub fn nudge_text(&self) -> Option<String> {
        match self {
            RepairAction::Nudge { missing, .. } => Some(nudge_text(missing)),
            RepairAction::Escalate { .. } => None,
        }
    }
}

/// `I still need to collect: a, b.` (the seed's wording).
pub fn nudge_text(missing: &[String]) -> String {
    format!("I still need to collect: {}.", missing.join(", "))
}

/// How long the current phase's needs have gone unmet (kept across control-lane restarts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NeedsFulfillment {
    unmet_turns: u32,
    escalated: bool,
}

impl NeedsFulfillment {
    /// A new stay in a phase: nothing counted.
    pub fn reset(&mut self) {
        *self = NeedsFulfillment::default();
    }

    /// The number of unmet turns counted in this stay.
    pub fn unmet_turns(&self) -> u32 {
        self.unmet_turns
    }

    /// Counts one turn boundary with `missing` needs, and says what to do.
    pub fn turn(&mut self, missing: Vec<String>, config: &RepairConfig) -> Option<RepairAction> {
        if missing.is_empty() {
            self.reset();
            return None;
        }
        self.unmet_turns = self.unmet_turns.saturating_add(1);
        if self.escalated {
            return None;
        }
        if self.unmet_turns >= config.escalate_after {
            self.escalated = true;
            return Some(RepairAction::Escalate { missing });
        }
        (self.unmet_turns >= config.nudge_after).then(|| RepairAction::Nudge {
            attempt: self.unmet_turns - config.nudge_after + 1,
            missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nudges_from_n_escalates_at_m_once_and_resets_when_met() {
        let config = RepairConfig::new(2, 4);
        let missing = || vec!["caller_org".to_owned()];
        let mut needs = NeedsFulfillment::default();
        assert_eq!(needs.turn(missing(), &config), None);
        assert_eq!(
            needs.turn(missing(), &config),
            Some(RepairAction::Nudge {
                attempt: 1,
                missing: missing()
            })
        );
        assert_eq!(
            needs.turn(missing(), &config),
            Some(RepairAction::Nudge {
                attempt: 2,
                missing: missing()
            })
        );
        assert_eq!(
            needs.turn(missing(), &config),
            Some(RepairAction::Escalate { missing: missing() })
        );
        assert_eq!(needs.turn(missing(), &config), None);
        assert_eq!(needs.turn(Vec::new(), &config), None);
        assert_eq!(needs.unmet_turns(), 0);
        assert_eq!(
            RepairAction::Nudge {
                attempt: 1,
                missing: vec!["a".into(), "b".into()]
            }
            .nudge_text()
            .as_deref(),
            Some("I still need to collect: a, b.")
        );
    }
}
