//! What the monitor answers with: [`Verdict`], [`Denial`], [`Violation`],
//! [`FlowExplanation`]. All serializable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Not eligible yet: a dependency is not done or its gate does not hold.
    Pending,
    /// Eligible and not done: its posture, ground lines and tools apply.
    Active,
    /// Done (latched).
    Done,
    /// Never done, and the flow is complete without it.
    Skipped,
}

/// Why a tool call is not admissible.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Denial {
    /// An active step denies the tool.
    #[error("\"{tool}\" is denied while step \"{step}\" is active")]
    DeniedByStep {
        /// The tool.
        tool: String,
        /// The active step that denies it.
        step: String,
    },
    /// A `never(tool).until(guard)` (or a `commit`) whose guard does not hold yet.
    #[error("\"{tool}\" is forbidden until {until}")]
    Never {
        /// The tool.
        tool: String,
        /// The guard, as written.
        until: String,
    },
    /// A `once` (or `commit`) tool that already ran.
    #[error("\"{tool}\" may run once and already ran (frame {seq})")]
    OnceSpent {
        /// The tool.
        tool: String,
        /// The sequence number of the call that spent it.
        seq: u64,
    },
    /// The only steps allowing the tool wait for another step (`before`).
    #[error(
        "\"{tool}\" is allowed by step \"{step}\", which must wait until step \"{first}\" is done"
    )]
    Before {
        /// The tool.
        tool: String,
        /// The step that allows it.
        step: String,
        /// The step it waits for.
        first: String,
    },
    /// No active step allows the tool.
    #[error("\"{tool}\" is not allowed by any active step ({})", active_list(.active))]
    NotAllowed {
        /// The tool.
        tool: String,
        /// The steps active at the time.
        active: Vec<String>,
    },
}

fn active_list(active: &[String]) -> String {
    if active.is_empty() {
        "no step is active".to_owned()
    } else {
        format!("active: {}", active.join(", "))
    }
}

/// A call the flow would have refused: in observe mode, or in a recording scored
/// against a flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The sequence number of the frame that carried the call.
    pub seq: u64,
    /// The call's id, when it had one.
    pub call_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// Why it was not admissible.
    pub denial: Denial,
    /// The denial in words.
    pub reason: String,
}

/// What `why_blocked()` / `explain()` return: the monitor's state in one serializable
/// snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowExplanation {
    /// The active steps, in declaration order.
    pub active: Vec<String>,
    /// The steps done, in declaration order.
    pub done: Vec<String>,
    /// Each tool the flow (or the session) knows that would be refused now, with why.
    pub blocked_tools: BTreeMap<String, String>,
    /// The required steps not done yet.
    pub missing_requirements: Vec<String>,
    /// Whether the flow is complete.
    pub complete: bool,
}

/// An active step's posture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posture {
    /// The step.
    pub step: String,
    /// Its instruction.
    pub text: String,
}
