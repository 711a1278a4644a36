//! [`MapOverTextAgent`]: `items.map(A)`.

use std::num::NonZeroUsize;

use futures_util::future::BoxFuture;
use futures_util::{StreamExt, TryStreamExt};
use reel_actors::state::State;
use serde_json::Value;

use crate::agent::write;
use crate::{AgentError, SharedAgent, TextAgent};

/// The key each item is written to, by default.
pub const DEFAULT_ITEM_KEY: &str = "item";
/// The key the outputs are written to, by default.
pub const DEFAULT_MAP_OUTPUT_KEY: &str = "results";

/// Reads a list from state, runs its agent once per item, with the item at the item key,
/// and writes the outputs **in list order** as a list of strings at the output key.
/// Returns the outputs joined with newlines. The list's key missing or not a list is
/// [`AgentError::BadInput`]; an item's failure stops the map and is returned.
///
/// **One at a time** (the default): items run in list order over the state itself, so the
/// calls happen in the same order in every run, and the item key holds the last item after.
///
/// **Concurrently** ([`MapOverTextAgent::concurrency`] of `n` > 1, the seed's
/// `map_over(agent, n)`): up to `n` items run at once, each over **its own copy of the
/// state** (every key as it was when the map started, then the item at the item key), so
/// no item sees another's writes and none depends on timing; the parent state gets only the
/// outputs. The first failure in list order is returned and the items still running are
/// dropped. The model calls are made in an order that may vary with timing; a cassette
/// matches each call by its request, not by when it came, so a replay answers every item
/// as recorded.
pub struct MapOverTextAgent {
    name: String,
    agent: SharedAgent,
    list_key: String,
    item_key: String,
    output_key: String,
    concurrency: NonZeroUsize,
}

impl MapOverTextAgent {
    /// A map called `name` running `agent` over the list at `list_key`.
    pub fn new(name: impl Into<String>, agent: SharedAgent, list_key: impl Into<String>) -> Self {
        MapOverTextAgent {
            name: name.into(),
            agent,
            list_key: list_key.into(),
            item_key: DEFAULT_ITEM_KEY.to_owned(),
            output_key: DEFAULT_MAP_OUTPUT_KEY.to_owned(),
            concurrency: NonZeroUsize::MIN,
        }
    }

    /// Runs up to `n` items at once, each over its own copy of the state (see the type's
    /// docs); `n` of 0 or 1 is one at a time over the state itself, the default.
    #[must_use]
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN);
        self
    }

    /// Writes each item to `key` (default [`DEFAULT_ITEM_KEY`]).
    #[must_use]
    pub fn item_key(mut self, key: impl Into<String>) -> Self {
        self.item_key = key.into();
        self
    }

    /// Writes the outputs to `key` (default [`DEFAULT_MAP_OUTPUT_KEY`]).
    #[must_use]
    pub fn output_key(mut self, key: impl Into<String>) -> Self {
        self.output_key = key.into();
        self
    }

    fn bad_list(&self, problem: &str) -> AgentError {
        AgentError::BadInput {
            agent: self.name.clone(),
            key: self.list_key.clone(),
            problem: problem.to_owned(),
        }
    }
}

impl TextAgent for MapOverTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let items = match state.get_raw(&self.list_key) {
                None => return Err(self.bad_list("is not set")),
                Some(Value::Array(items)) => items,
                Some(_) => return Err(self.bad_list("is not a list")),
            };
            let outputs = if self.concurrency.get() == 1 {
                let mut outputs = Vec::with_capacity(items.len());
                for item in items {
                    write(state, &self.name, &self.item_key, item).await?;
                    outputs.push(self.agent.run(state).await?);
                }
                outputs
            } else {
                let snapshot = state.snapshot();
                futures_util::stream::iter(items)
                    .map(|item| {
                        let snapshot = snapshot.clone();
                        async move {
                            let copy = State::new();
                            copy.set_clock(state.clock());
                            copy.set_many(
                                snapshot
                                    .iter()
                                    .map(|(key, value)| (key.to_owned(), value.clone()))
                                    .chain([(self.item_key.clone(), item)]),
                            )
                            .await
                            .map_err(|source| AgentError::State {
                                agent: self.name.clone(),
                                key: format!("(an item's copy of the state, `{}`)", self.item_key),
                                source,
                            })?;
                            self.agent.run(&copy).await
                        }
                    })
                    .buffered(self.concurrency.get())
                    .try_collect::<Vec<String>>()
                    .await?
            };
            write(state, &self.name, &self.output_key, &outputs).await?;
            Ok(outputs.join("\n"))
        })
    }
}
