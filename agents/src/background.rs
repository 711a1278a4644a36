//! [`BackgroundAgentDispatcher`]: agents run detached, their results in state.

use std::sync::{Arc, Mutex, MutexGuard};

use reel_actors::state::State;
use tokio::task::JoinHandle;

use crate::SharedAgent;

/// Runs agents detached from the caller (a callback, a watcher): each result lands in the
/// state at `{name}:result`, or its error's message at `{name}:error`. Cheap to clone
/// (clones share the running tasks).
#[derive(Debug, Clone, Default)]
pub struct BackgroundAgentDispatcher {
    running: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl BackgroundAgentDispatcher {
    /// A dispatcher with nothing running.
    pub fn new() -> Self {
        BackgroundAgentDispatcher::default()
    }

    /// Starts `agent` over `state` as `name` and returns at once.
    pub fn dispatch(&self, name: impl Into<String>, agent: SharedAgent, state: State) {
        let name = name.into();
        let handle = tokio::spawn(async move {
            let written = match agent.run(&state).await {
                Ok(output) => state.set(&format!("{name}:result"), output).await,
                Err(error) => state.set(&format!("{name}:error"), error.to_string()).await,
            };
            if let Err(error) = written {
                tracing::warn!(agent = %name, %error, "a background agent's result could not be written");
            }
        });
        let mut running = self.lock();
        running.retain(|task| !task.is_finished());
        running.push(handle);
    }

    /// Waits for every agent dispatched so far to finish and write its result.
    pub async fn wait_all(&self) {
        let tasks = std::mem::take(&mut *self.lock());
        for task in tasks {
            // A panicked agent wrote nothing; there is nothing more to wait for.
            let _ = task.await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        // Every change is one push, retain or take: a poisoned list is still whole.
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
