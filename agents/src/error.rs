//! [`AgentError`]: why an agent run failed, naming the agent.

use std::time::Duration;

use reel_actors::state::StateError;
use reel_llm::LlmError;

/// Why a text agent's run failed. Every variant names the agent it happened in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model call failed.
    #[error("agent `{agent}`: the model call failed: {source}")]
    Llm {
        /// The agent.
        agent: String,
        /// The model's error.
        #[source]
        source: LlmError,
    },
    /// A state write failed.
    #[error("agent `{agent}`: writing state key `{key}` failed: {source}")]
    State {
        /// The agent.
        agent: String,
        /// The key written.
        key: String,
        /// The state's error.
        #[source]
        source: StateError,
    },
    /// The agent did not finish within its time limit.
    #[error("agent `{agent}` timed out after {after:?}")]
    Timeout {
        /// The agent that timed out (the wrapped one's wrapper, or the join).
        agent: String,
        /// The limit.
        after: Duration,
    },
    /// A combinator was given no agents to run.
    #[error("agent `{agent}` has no agents to run")]
    NoAgents {
        /// The combinator.
        agent: String,
    },
    /// A state key an agent reads was missing or of the wrong shape.
    #[error("agent `{agent}`: state key `{key}` {problem}")]
    BadInput {
        /// The agent.
        agent: String,
        /// The key read.
        key: String,
        /// What was wrong with it (`is not set`, `is not a list`, …).
        problem: String,
    },
    /// Application code in an agent (a closure, a task) failed.
    #[error("agent `{agent}` failed: {message}")]
    Failed {
        /// The agent.
        agent: String,
        /// What the code reported.
        message: String,
    },
    /// A spawned branch or task panicked or was cancelled.
    #[error("agent `{agent}`: its task {what}")]
    Task {
        /// The agent whose task ended.
        agent: String,
        /// `panicked` or `was cancelled`.
        what: String,
    },
    /// The model still called tools after the agent's bound of tool rounds
    /// ([`LlmTextAgent::max_tool_rounds`](crate::LlmTextAgent::max_tool_rounds)).
    #[error(
        "agent `{agent}`: the model still called tools ({}) after {bound} rounds, the agent's max_tool_rounds",
        calls.join(", ")
    )]
    ToolRounds {
        /// The agent.
        agent: String,
        /// Its bound of tool rounds.
        bound: usize,
        /// The functions the last answer called, in order.
        calls: Vec<String>,
    },
    /// A tool call succeeded but its state writes could not be committed.
    #[error("agent `{agent}`: committing the state writes of tool `{tool}` failed: {source}")]
    ToolState {
        /// The agent.
        agent: String,
        /// The tool whose writes failed.
        tool: String,
        /// The state's error.
        #[source]
        source: StateError,
    },
    /// A replay's recorded decisions do not fit the run: the recording is from another
    /// pipeline, or ran out.
    #[error("agent `{agent}`: replayed decision mismatch: {problem}")]
    Decision {
        /// The agent deciding.
        agent: String,
        /// What did not fit.
        problem: String,
    },
    /// An approver rejected what an [`ApprovalTextAgent`](crate::ApprovalTextAgent) asked
    /// about.
    #[error("agent `{agent}`: rejected by {by}: {reason}")]
    Rejected {
        /// The approval step.
        agent: String,
        /// Who rejected it.
        by: String,
        /// Why.
        reason: String,
    },
}

impl AgentError {
    /// The name of the agent the error happened in.
    pub fn agent(&self) -> &str {
        match self {
            AgentError::Llm { agent, .. }
            | AgentError::State { agent, .. }
            | AgentError::Timeout { agent, .. }
            | AgentError::NoAgents { agent }
            | AgentError::BadInput { agent, .. }
            | AgentError::Failed { agent, .. }
            | AgentError::Task { agent, .. }
            | AgentError::Decision { agent, .. }
            | AgentError::Rejected { agent, .. }
            | AgentError::ToolRounds { agent, .. }
            | AgentError::ToolState { agent, .. } => agent,
        }
    }

    /// A [`AgentError::Failed`] for `agent` saying `message`.
    pub fn failed(agent: impl Into<String>, message: impl std::fmt::Display) -> Self {
        AgentError::Failed {
            agent: agent.into(),
            message: message.to_string(),
        }
    }
}
