//! [`RouteTextAgent`] and [`RouteRule`]: state-driven branching.

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::{AgentError, SharedAgent, TextAgent};

type Predicate = dyn Fn(&State) -> bool + Send + Sync;

/// One branch of a route: the agent to run when the predicate holds.
pub struct RouteRule {
    predicate: Box<Predicate>,
    agent: SharedAgent,
}

impl RouteRule {
    /// Runs `agent` when `predicate` holds on the state.
    pub fn new(
        predicate: impl Fn(&State) -> bool + Send + Sync + 'static,
        agent: SharedAgent,
    ) -> Self {
        RouteRule {
            predicate: Box::new(predicate),
            agent,
        }
    }
}

/// Runs the agent of the first rule whose predicate holds, else the default, and returns
/// its output (a predicate reads the state when the route runs: the same state replays the
/// same branch).
pub struct RouteTextAgent {
    name: String,
    rules: Vec<RouteRule>,
    default: SharedAgent,
}

impl RouteTextAgent {
    /// A route called `name` over `rules`, with `default` when none holds.
    pub fn new(name: impl Into<String>, rules: Vec<RouteRule>, default: SharedAgent) -> Self {
        RouteTextAgent {
            name: name.into(),
            rules,
            default,
        }
    }
}

impl TextAgent for RouteTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let agent = self
                .rules
                .iter()
                .find(|rule| (rule.predicate)(state))
                .map_or(&self.default, |rule| &rule.agent);
            agent.run(state).await
        })
    }
}
