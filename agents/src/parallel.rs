//! [`ParallelTextAgent`]: `[A, B, C]`, all at once.

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::agent::task_error;
use crate::{AgentError, SharedAgent, TextAgent};

/// Runs every agent concurrently (each on its own task, over the same state) and joins
/// their outputs with newlines **in the order the agents were given**, whatever order they
/// finish in, so the result never depends on timing. The first error in that order is
/// returned, after every branch has finished.
pub struct ParallelTextAgent {
    name: String,
    agents: Vec<SharedAgent>,
}

impl ParallelTextAgent {
    /// A fan-out called `name` over `agents`.
    pub fn new(name: impl Into<String>, agents: Vec<SharedAgent>) -> Self {
        ParallelTextAgent {
            name: name.into(),
            agents,
        }
    }
}

impl TextAgent for ParallelTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let handles: Vec<_> = self
                .agents
                .iter()
                .map(|agent| {
                    let (agent, state) = (agent.clone(), state.clone());
                    tokio::spawn(async move { agent.run(&state).await })
                })
                .collect();
            let mut outputs = Vec::with_capacity(handles.len());
            for handle in handles {
                outputs.push(
                    handle
                        .await
                        .unwrap_or_else(|error| Err(task_error(&self.name, &error))),
                );
            }
            let outputs: Result<Vec<String>, AgentError> = outputs.into_iter().collect();
            Ok(outputs?.join("\n"))
        })
    }
}
