//! [`SequentialTextAgent`]: `A >> B >> C`.

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::agent::{INPUT_KEY, write};
use crate::{AgentError, SharedAgent, TextAgent};

/// Runs agents in order; each one's output becomes the next one's [`INPUT_KEY`]. The last
/// output is the result. A [`TapTextAgent`](crate::TapTextAgent) pipes nothing. The first
/// error stops the sequence and is returned as it is.
pub struct SequentialTextAgent {
    name: String,
    agents: Vec<SharedAgent>,
}

impl SequentialTextAgent {
    /// A sequence called `name` of `agents`.
    pub fn new(name: impl Into<String>, agents: Vec<SharedAgent>) -> Self {
        SequentialTextAgent {
            name: name.into(),
            agents,
        }
    }
}

impl TextAgent for SequentialTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let mut last = String::new();
            for (position, agent) in self.agents.iter().enumerate() {
                let output = agent.run(state).await?;
                if agent.passes_through() {
                    continue;
                }
                if position + 1 < self.agents.len() {
                    write(state, &self.name, INPUT_KEY, &output).await?;
                }
                last = output;
            }
            Ok(last)
        })
    }
}
