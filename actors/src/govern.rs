//! The governance seam: [`ToolGate`], what the control lane asks before a tool call runs
//! and tells as the session goes on, so that a governed flow (the `reel-flow` crate's
//! `Monitor`, wired by `reel-fluent`'s `govern`/`observe`) lives above the tree and
//! decides inside it, in the session's order (decision 0055,
//! `docs/decisions/0055-governed-sessions.md`).
//!
//! # When the lane calls it
//!
//! Before each call below, the lane hands the gate every state mutation committed since
//! the previous one ([`ToolGate::observe`], in journal order; [`ToolGate::resync`] with the
//! whole state when the journal's ring no longer reaches back):
//!
//! - a `toolCall` frame: [`ToolGate::call`] for each call the dispatcher would run, with
//!   the sequence number of the frame that carried it. A [`GateVerdict::Deny`] never runs:
//!   its call is answered at once with [`ToolError::Refused`](crate::tools::ToolError),
//!   in the frame's `toolResponse` like any other answer;
//! - a `toolResponse` frame: [`ToolGate::returned`] with each function response as it went
//!   out on the wire (its JSON), so the gate judges "returned without error" from exactly
//!   what a recording holds;
//! - a `toolCallCancellation`: [`ToolGate::cancelled`] for each id;
//! - a turn boundary: [`ToolGate::unmet`] (counted as unmet needs by the repair
//!   machinery: a nudge in the boundary's one context frame, then the escalation) and
//!   [`ToolGate::steering`], delivered as the steering mode delivers per-turn context:
//!   under `SteeringMode::InstructionUpdate` after the system instruction (re-sent when it
//!   changed), under `ContextInjection` and `Hybrid` as a context turn of the boundary's
//!   one context frame (when it changed), which `ContextDelivery` sends at once or with the
//!   application's next send.
//!
//! After each, the lane writes what [`ToolGate::published`] returns into the state.
//!
//! # Restarts and replay
//!
//! The gate is held in the control lane's data, which outlives every instance of the lane:
//! a restarted lane asks the same gate, with what it already counted (a `once` tool spent
//! stays spent). Every call is made on event time, in the lane's order, so a replay of
//! the same frames makes the same calls and gets the same answers.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::state::{State, StateMutation};

/// What the gate says of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    /// The call runs.
    Admit,
    /// The call does not run; the model is told `reason`.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
}

/// Decides tool calls and steers turn boundaries for a governed session. Every method has
/// a default that admits, steers and publishes nothing.
pub trait ToolGate: Send + Sync + fmt::Debug + 'static {
    /// State mutations committed since the previous call, in journal order.
    fn observe(&mut self, mutations: &[StateMutation]) {
        let _ = mutations;
    }

    /// The journal's ring no longer reaches back to what the gate saw last: the whole
    /// state as it is now.
    fn resync(&mut self, state: &State) {
        let _ = state;
    }

    /// A call of `tool` (id `call_id`), carried by the frame with sequence number `seq`.
    fn call(&mut self, seq: u64, call_id: &str, tool: &str) -> GateVerdict {
        let _ = (seq, call_id, tool);
        GateVerdict::Admit
    }

    /// A function response sent to the model: its JSON as it is on the wire (`id`, `name`,
    /// `response`, `willContinue`, …).
    fn returned(&mut self, response: &Value) {
        let _ = response;
    }

    /// The model cancelled call `call_id` (`toolCallCancellation`).
    fn cancelled(&mut self, call_id: &str) {
        let _ = call_id;
    }

    /// The state keys to write, with their values, that changed since the gate was last
    /// asked (the lane writes each one).
    fn published(&mut self) -> Vec<(String, Value)> {
        Vec::new()
    }

    /// The text that steers the model at this turn boundary, if any (the lane sends it
    /// when it differs from what it sent last).
    fn steering(&self) -> Option<String> {
        None
    }

    /// What the session still has to do, surfaced as repair at turn boundaries.
    fn unmet(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the session's handle gives the application to look at the gate with
    /// ([`LiveHandle::gate_view`](crate::LiveHandle::gate_view)), if anything.
    fn view(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }
}
