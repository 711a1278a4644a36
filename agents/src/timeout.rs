//! [`TimeoutTextAgent`]: an agent under a deadline.

use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::decisions::{Choice, DecisionMode, Decisions};
use crate::{AgentError, SharedAgent, TextAgent};

/// Runs its agent under a time limit; past it, the agent is dropped and the run fails with
/// [`AgentError::Timeout`] naming this agent.
///
/// Whether the limit passes depends on timing. With [`TimeoutTextAgent::decisions`], a
/// recording run writes down whether it fired and a replaying run decides the same: a
/// recorded timeout fails at once without running the agent, a recorded finish runs the
/// agent with no deadline (decision 0054).
pub struct TimeoutTextAgent {
    name: String,
    agent: SharedAgent,
    limit: Duration,
    decisions: Option<Decisions>,
}

impl TimeoutTextAgent {
    /// `agent` under `limit`, called `name`.
    pub fn new(name: impl Into<String>, agent: SharedAgent, limit: Duration) -> Self {
        TimeoutTextAgent {
            name: name.into(),
            agent,
            limit,
            decisions: None,
        }
    }

    /// Records whether the deadline fired into `decisions`, or replays it from there.
    #[must_use]
    pub fn decisions(mut self, decisions: Decisions) -> Self {
        self.decisions = Some(decisions);
        self
    }

    fn timed_out(&self) -> AgentError {
        AgentError::Timeout {
            agent: self.name.clone(),
            after: self.limit,
        }
    }
}

impl TextAgent for TimeoutTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            if let Some(decisions) = &self.decisions
                && decisions.mode() == DecisionMode::Replay
            {
                return match decisions.next(&self.name)? {
                    Choice::Timeout { fired: true } => Err(self.timed_out()),
                    Choice::Timeout { fired: false } => self.agent.run(state).await,
                    other => Err(AgentError::Decision {
                        agent: self.name.clone(),
                        problem: format!("expected a timeout decision, found {other:?}"),
                    }),
                };
            }
            let outcome = tokio::time::timeout(self.limit, self.agent.run(state)).await;
            if let Some(decisions) = &self.decisions {
                let fired = outcome.is_err();
                decisions.note(&self.name, Choice::Timeout { fired });
            }
            outcome.unwrap_or_else(|_| Err(self.timed_out()))
        })
    }
}
