//! The `[Navigation]` block: where the conversation is in the phase graph, what is still
//! missing and where it can go, kept in [`NAVIGATION_CONTEXT_KEY`].
//!
//! ```text
//! [Navigation]
//! Current phase: identify_caller -- Get the caller's full name and organization.
//! Previous: greeting (turn 2)
//! Still needed: caller_org
//! Possible next:
//!   -> determine_purpose: when caller provides their name
//!   -> take_message
//! ```
//!
//! The seed's wording, line for line. A line with nothing to say is left out (no previous
//! phase, nothing needed, a terminal phase); ` -- instruction` is left out for a phase
//! without one; a transition without a description (`transition`, not `transition_with`)
//! shows its target alone.

use crate::phases::Phase;
use crate::state::State;

/// The state key holding the current navigation block.
pub const NAVIGATION_CONTEXT_KEY: &str = "session:navigation_context";

/// The phase the conversation came from, and the turn count when it left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Previous {
    /// The phase left.
    pub phase: String,
    /// `session:turn_count` when the transition fired (the turns completed before it).
    pub turn: u64,
}

/// The keys of `phase`'s needs not present in `state`, in declaration order.
pub fn still_needed(phase: &Phase, state: &State) -> Vec<String> {
    phase
        .needs_keys()
        .iter()
        .filter(|key| !state.contains(key))
        .cloned()
        .collect()
}

/// The navigation block for `phase` on `state`.
pub fn render(phase: &Phase, previous: Option<&Previous>, state: &State) -> String {
    let mut lines = vec!["[Navigation]".to_owned()];
    match phase.instruction_for(state) {
        Some(instruction) => {
            lines.push(format!("Current phase: {} -- {instruction}", phase.name()))
        }
        None => lines.push(format!("Current phase: {}", phase.name())),
    }
    if let Some(previous) = previous {
        lines.push(format!(
            "Previous: {} (turn {})",
            previous.phase, previous.turn
        ));
    }
    let needed = still_needed(phase, state);
    if !needed.is_empty() {
        lines.push(format!("Still needed: {}", needed.join(", ")));
    }
    if !phase.is_terminal() && !phase.transition_list().is_empty() {
        lines.push("Possible next:".to_owned());
        for transition in phase.transition_list() {
            match transition.described.then_some(&transition.description) {
                Some(description) => {
                    lines.push(format!("  -> {}: {description}", transition.target));
                }
                None => lines.push(format!("  -> {}", transition.target)),
            }
        }
    }
    lines.join("\n")
}
