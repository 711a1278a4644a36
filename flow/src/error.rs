//! [`FlowError`]: what `build`, `compile` and the file format refuse, each naming the step
//! or tool and the fix.

use thiserror::Error;

/// A flow that cannot be built, compiled, read or written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FlowError {
    /// A step verb came before any `step(..)`.
    #[error("`{verb}(..)` was used before any step(..): declare the step first")]
    StrayVerb {
        /// The verb.
        verb: &'static str,
    },
    /// The flow has no step.
    #[error("the flow has no step: declare at least one with step(..)")]
    NoSteps,
    /// Two steps share a name.
    #[error("step \"{step}\" is declared twice: give each step its own name")]
    DuplicateStep {
        /// The name.
        step: String,
    },
    /// `after(..)` names a step that does not exist.
    #[error(
        "step \"{step}\" comes after \"{dep}\", which is not a step of the flow: declare it or fix the name"
    )]
    UnknownDependency {
        /// The step.
        step: String,
        /// The missing dependency.
        dep: String,
    },
    /// A verb names a step that does not exist.
    #[error(
        "{place} names step \"{step}\", which is not a step of the flow: declare it or fix the name"
    )]
    UnknownStep {
        /// Where: `require`, `before`, `step "x" (gate)`, ….
        place: String,
        /// The missing step.
        step: String,
    },
    /// A non-terminal step without a completion condition.
    #[error(
        "step \"{step}\" has no done(..) guard: it could never complete; add .done(Guard::..) or mark it .terminal()"
    )]
    MissingDone {
        /// The step.
        step: String,
    },
    /// The `after(..)` edges form a cycle.
    #[error("the steps wait for each other in a cycle: {}; remove one after(..) edge", .path.join(" → "))]
    Cycle {
        /// The steps around the cycle, the first repeated at the end.
        path: Vec<String>,
    },
    /// A ground template that cannot be read.
    #[error("step \"{step}\": ground template {template:?} {reason}")]
    BadGround {
        /// The step.
        step: String,
        /// The template.
        template: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A step that can never become eligible.
    #[error("step \"{step}\" is unreachable: {reason}")]
    Unreachable {
        /// The step.
        step: String,
        /// Why, and the fix.
        reason: String,
    },
    /// A commit tool whose guard already holds before anything has happened.
    #[error(
        "commit tool \"{tool}\" is effectively unguarded: its until guard {until} holds before anything has happened; guard it on a fact the conversation must establish"
    )]
    UnguardedCommit {
        /// The tool.
        tool: String,
        /// Its guard, as written.
        until: String,
    },
    /// A `never…until` waiting for a step that does not exist.
    #[error(
        "never(\"{tool}\").until(..) waits for done(\"{step}\"), which is not a step of the flow: the tool would be forbidden forever; declare the step or fix the name"
    )]
    NeverOnMissingStep {
        /// The tool.
        tool: String,
        /// The missing step.
        step: String,
    },
    /// `before(..)` edges close a cycle with the other ordering edges.
    #[error("before(..) closes an ordering cycle: {}; every step on it deadlocks; remove one of the edges", .path.join(" → "))]
    BeforeCycle {
        /// The steps around the cycle, the first repeated at the end.
        path: Vec<String>,
    },
    /// A tool the session does not have.
    #[error("{place} names tool \"{tool}\", which is not among the session's tools ({}): fix the name or register the tool", .known.join(", "))]
    UnknownTool {
        /// Where: `step "x" (allow)`, `once`, `never`, `commit`, ….
        place: String,
        /// The tool.
        tool: String,
        /// The tools the session has.
        known: Vec<String>,
    },
    /// A flow file that is not a flow.
    #[error("not a flow: {message}")]
    BadFile {
        /// What is wrong, with its JSON path.
        message: String,
    },
    /// A `custom(..)` guard cannot be written as data.
    #[error(
        "{place} holds a custom(..) guard, which is code and cannot be written as data: replace it with guard atoms"
    )]
    CustomGuard {
        /// Where the guard is.
        place: String,
    },
}
