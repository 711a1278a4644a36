//! [`RaceTextAgent`]: `A | B | C`, first success wins.

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use tokio::task::JoinSet;

use crate::agent::task_error;
use crate::decisions::{Choice, DecisionMode, Decisions};
use crate::{AgentError, SharedAgent, TextAgent};

/// Runs every agent concurrently and returns the first success; the others are cancelled
/// (their tasks aborted). When all fail, the last error to arrive.
///
/// Which branch wins depends on timing. With [`RaceTextAgent::decisions`], a recording run
/// writes the winner down and a replaying run runs only the recorded winner, so a replay
/// returns what the recording returned even when another branch is now faster
/// (decision 0054).
pub struct RaceTextAgent {
    name: String,
    agents: Vec<SharedAgent>,
    decisions: Option<Decisions>,
}

impl RaceTextAgent {
    /// A race called `name` between `agents`.
    pub fn new(name: impl Into<String>, agents: Vec<SharedAgent>) -> Self {
        RaceTextAgent {
            name: name.into(),
            agents,
            decisions: None,
        }
    }

    /// Records the winner into `decisions`, or replays it from there.
    #[must_use]
    pub fn decisions(mut self, decisions: Decisions) -> Self {
        self.decisions = Some(decisions);
        self
    }

    async fn replay(&self, state: &State, decisions: &Decisions) -> Result<String, AgentError> {
        let mismatch = |problem: String| AgentError::Decision {
            agent: self.name.clone(),
            problem,
        };
        let (index, winner) = match decisions.next(&self.name)? {
            Choice::RaceWinner { index, winner } => (index, winner),
            other => return Err(mismatch(format!("expected a race winner, found {other:?}"))),
        };
        let agent = self.agents.get(index).ok_or_else(|| {
            mismatch(format!(
                "the recorded winner is branch {index} (`{winner}`), but the race has {} branches",
                self.agents.len()
            ))
        })?;
        if agent.name() != winner {
            return Err(mismatch(format!(
                "the recorded winner is `{winner}`, branch {index} is now `{}`",
                agent.name()
            )));
        }
        agent.run(state).await
    }
}

impl TextAgent for RaceTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            if let Some(decisions) = &self.decisions
                && decisions.mode() == DecisionMode::Replay
            {
                return self.replay(state, decisions).await;
            }
            let mut branches = JoinSet::new();
            for (index, agent) in self.agents.iter().enumerate() {
                let (agent, state) = (agent.clone(), state.clone());
                branches.spawn(async move { (index, agent.run(&state).await) });
            }
            let mut last = AgentError::NoAgents {
                agent: self.name.clone(),
            };
            while let Some(joined) = branches.join_next().await {
                match joined {
                    Ok((index, Ok(output))) => {
                        if let Some(decisions) = &self.decisions {
                            let winner = self.agents[index].name().to_owned();
                            decisions.note(&self.name, Choice::RaceWinner { index, winner });
                        }
                        branches.abort_all();
                        return Ok(output);
                    }
                    Ok((_, Err(error))) => last = error,
                    Err(error) => last = task_error(&self.name, &error),
                }
            }
            Err(last)
        })
    }
}
