//! [`TextAgent`]: the one trait every text agent implements, and the state conventions.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use serde::Serialize;

use crate::AgentError;

/// The state key an agent reads its input from.
pub const INPUT_KEY: &str = "input";
/// The state key an agent writes its output to.
pub const OUTPUT_KEY: &str = "output";

/// A unit of a text pipeline: reads what it needs from [`State`] (by convention
/// [`INPUT_KEY`]), does its work and returns its output (by convention also written to
/// [`OUTPUT_KEY`]).
///
/// Object safe: pipelines hold agents as `Arc<dyn TextAgent>`.
pub trait TextAgent: Send + Sync + 'static {
    /// The agent's name (in errors, decisions and traces).
    fn name(&self) -> &str;

    /// Runs the agent once over `state`.
    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>>;

    /// Whether the agent only observes (a [`TapTextAgent`](crate::TapTextAgent)): a
    /// sequence then pipes nothing from it. `false` by default.
    fn passes_through(&self) -> bool {
        false
    }
}

/// A shared agent, as combinators hold them.
pub type SharedAgent = Arc<dyn TextAgent>;

impl<T: TextAgent + ?Sized> TextAgent for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        (**self).run(state)
    }

    fn passes_through(&self) -> bool {
        (**self).passes_through()
    }
}

/// Writes `value` at `key` for `agent`, a failed write becoming [`AgentError::State`].
pub(crate) async fn write(
    state: &State,
    agent: &str,
    key: &str,
    value: impl Serialize,
) -> Result<(), AgentError> {
    state
        .set(key, value)
        .await
        .map_err(|source| AgentError::State {
            agent: agent.to_owned(),
            key: key.to_owned(),
            source,
        })
}

/// What became of a spawned branch of `agent` that did not return.
pub(crate) fn task_error(agent: &str, error: &tokio::task::JoinError) -> AgentError {
    AgentError::Task {
        agent: agent.to_owned(),
        what: if error.is_panic() {
            "panicked".to_owned()
        } else {
            "was cancelled".to_owned()
        },
    }
}
