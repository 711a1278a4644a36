//! [`MapOverTextAgent`]: `items.map(A)`.

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use serde_json::Value;

use crate::agent::write;
use crate::{AgentError, SharedAgent, TextAgent};

/// The key each item is written to, by default.
pub const DEFAULT_ITEM_KEY: &str = "item";
/// The key the outputs are written to, by default.
pub const DEFAULT_MAP_OUTPUT_KEY: &str = "results";

/// Reads a list from state, runs its agent once per item (in list order, one at a time, so
/// the calls happen in the same order in every run), with the item at the item key, and
/// writes the outputs as a list of strings at the output key. Returns the outputs joined
/// with newlines. The list's key missing or not a list is [`AgentError::BadInput`]; an
/// item's failure stops the map and is returned.
pub struct MapOverTextAgent {
    name: String,
    agent: SharedAgent,
    list_key: String,
    item_key: String,
    output_key: String,
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
        }
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
            let mut outputs = Vec::with_capacity(items.len());
            for item in items {
                write(state, &self.name, &self.item_key, item).await?;
                outputs.push(self.agent.run(state).await?);
            }
            write(state, &self.name, &self.output_key, &outputs).await?;
            Ok(outputs.join("\n"))
        })
    }
}
