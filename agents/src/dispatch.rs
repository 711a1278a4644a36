//! [`DispatchTextAgent`], [`JoinTextAgent`] and their [`TaskRegistry`]: background tasks
//! in a pipeline.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::agent::{task_error, write};
use crate::{AgentError, SharedAgent, TextAgent};

type Task = (String, JoinHandle<Result<String, AgentError>>);

/// The tasks a [`DispatchTextAgent`] started and a [`JoinTextAgent`] waits for, in
/// dispatch order. Cheap to clone (clones share the tasks).
#[derive(Debug, Clone, Default)]
pub struct TaskRegistry {
    tasks: Arc<Mutex<Vec<Task>>>,
}

impl TaskRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        TaskRegistry::default()
    }

    /// How many tasks wait to be joined.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no task waits to be joined.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Task>> {
        // Every change is one push or one take: a poisoned list is still whole.
        self.tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Starts its agents as background tasks (at most as many at once as the budget has
/// permits), registers them and returns an empty string at once. It only starts work, so a
/// sequence pipes nothing from it ([`TextAgent::passes_through`]).
///
/// Each task runs over its own copy of the state as it was at dispatch, not the live
/// state: what it reads cannot depend on how far the pipeline got before the task was
/// scheduled, so its model calls are the same in every run (and a cassette replays them).
/// Its result reaches the pipeline through [`JoinTextAgent`] (`{task}:result`).
pub struct DispatchTextAgent {
    name: String,
    agents: Vec<(String, SharedAgent)>,
    registry: TaskRegistry,
    budget: Arc<Semaphore>,
}

impl DispatchTextAgent {
    /// A dispatcher called `name` starting each `(task name, agent)` into `registry`, at
    /// most `budget`'s permits at once.
    pub fn new(
        name: impl Into<String>,
        agents: Vec<(String, SharedAgent)>,
        registry: TaskRegistry,
        budget: Arc<Semaphore>,
    ) -> Self {
        DispatchTextAgent {
            name: name.into(),
            agents,
            registry,
            budget,
        }
    }
}

impl TextAgent for DispatchTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let snapshot = state.snapshot();
            let mut forks = Vec::with_capacity(self.agents.len());
            for _ in &self.agents {
                let fork = State::new();
                fork.set_many(
                    snapshot
                        .iter()
                        .map(|(key, value)| (key.to_owned(), value.clone())),
                )
                .await
                .map_err(|source| AgentError::State {
                    agent: self.name.clone(),
                    key: "(a dispatched task's copy of the state)".to_owned(),
                    source,
                })?;
                forks.push(fork);
            }
            let mut tasks = self.registry.lock();
            for ((task, agent), state) in self.agents.iter().zip(forks) {
                let (agent, budget) = (agent.clone(), self.budget.clone());
                let dispatcher = self.name.clone();
                let handle = tokio::spawn(async move {
                    let _permit = budget.acquire_owned().await.map_err(|_| AgentError::Task {
                        agent: dispatcher,
                        what: "lost its budget (the semaphore was closed)".to_owned(),
                    })?;
                    agent.run(&state).await
                });
                tasks.push((task.clone(), handle));
            }
            Ok(String::new())
        })
    }

    fn passes_through(&self) -> bool {
        true
    }
}

/// Waits for every task registered so far, in dispatch order, writes each success at
/// `{task}:result` and returns the outputs joined with newlines. The first failure in
/// dispatch order is returned (written at `{task}:error`) once all have finished. With
/// [`JoinTextAgent::timeout`], a wait past the limit aborts the tasks left and fails with
/// [`AgentError::Timeout`].
pub struct JoinTextAgent {
    name: String,
    registry: TaskRegistry,
    timeout: Option<Duration>,
}

impl JoinTextAgent {
    /// A join called `name` over `registry`'s tasks.
    pub fn new(name: impl Into<String>, registry: TaskRegistry) -> Self {
        JoinTextAgent {
            name: name.into(),
            registry,
            timeout: None,
        }
    }

    /// Waits at most `limit` for all the tasks.
    #[must_use]
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    async fn join(&self, state: &State, tasks: Vec<Task>) -> Result<String, AgentError> {
        let mut outputs = Vec::with_capacity(tasks.len());
        let mut failure = None;
        for (task, handle) in tasks {
            let outcome = handle
                .await
                .unwrap_or_else(|error| Err(task_error(&task, &error)));
            match outcome {
                Ok(output) => {
                    write(state, &self.name, &format!("{task}:result"), &output).await?;
                    outputs.push(output);
                }
                Err(error) => {
                    write(
                        state,
                        &self.name,
                        &format!("{task}:error"),
                        error.to_string(),
                    )
                    .await?;
                    failure.get_or_insert(error);
                }
            }
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(outputs.join("\n")),
        }
    }
}

impl TextAgent for JoinTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let tasks = std::mem::take(&mut *self.registry.lock());
            let Some(limit) = self.timeout else {
                return self.join(state, tasks).await;
            };
            let aborts: Vec<_> = tasks
                .iter()
                .map(|(_, handle)| handle.abort_handle())
                .collect();
            match tokio::time::timeout(limit, self.join(state, tasks)).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    aborts.iter().for_each(tokio::task::AbortHandle::abort);
                    Err(AgentError::Timeout {
                        agent: self.name.clone(),
                        after: limit,
                    })
                }
            }
        })
    }
}
