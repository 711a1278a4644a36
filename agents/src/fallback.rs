//! [`FallbackTextAgent`]: `A ?? B ?? C`.

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::{AgentError, SharedAgent, TextAgent};

/// Tries agents in order and returns the first success; when all fail, the last error.
/// With no agents, [`AgentError::NoAgents`].
pub struct FallbackTextAgent {
    name: String,
    agents: Vec<SharedAgent>,
}

impl FallbackTextAgent {
    /// A fallback chain called `name` over `agents`.
    pub fn new(name: impl Into<String>, agents: Vec<SharedAgent>) -> Self {
        FallbackTextAgent {
            name: name.into(),
            agents,
        }
    }
}

impl TextAgent for FallbackTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let mut last = AgentError::NoAgents {
                agent: self.name.clone(),
            };
            for agent in &self.agents {
                match agent.run(state).await {
                    Ok(output) => return Ok(output),
                    Err(error) => last = error,
                }
            }
            Err(last)
        })
    }
}
