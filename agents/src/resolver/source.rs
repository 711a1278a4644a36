//! What a resolver asks: an agent, a fetch closure or a model over a prompt.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_llm::{BaseLlm, LlmRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::template::render;
use crate::SharedAgent;

/// A fetch's error: anything that can say what went wrong.
pub type FetchError = Box<dyn std::error::Error + Send + Sync>;

/// A fetch closure, boxed.
pub(crate) type FetchFn =
    Arc<dyn Fn(State) -> BoxFuture<'static, Result<Value, FetchError>> + Send + Sync>;

/// Which kind of source a resolver has: what provenance and the recording name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A text agent (its output is the result, a string).
    Agent,
    /// A fetch closure: any async code.
    Fetch,
    /// One model call over a `{key}`-interpolated prompt (the answer's text is the result).
    Llm,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Agent => "agent",
            SourceKind::Fetch => "fetch",
            SourceKind::Llm => "llm",
        })
    }
}

/// A resolver's source.
#[derive(Clone)]
pub(crate) enum Source {
    Agent(SharedAgent),
    Fetch(FetchFn),
    Llm {
        llm: Arc<dyn BaseLlm>,
        prompt: String,
    },
}

impl Source {
    pub(crate) fn kind(&self) -> SourceKind {
        match self {
            Source::Agent(_) => SourceKind::Agent,
            Source::Fetch(_) => SourceKind::Fetch,
            Source::Llm { .. } => SourceKind::Llm,
        }
    }

    /// Runs the source over `state` (a copy of the session's): the result, or the
    /// source's error message.
    pub(crate) async fn run(&self, state: State) -> Result<Value, String> {
        match self {
            Source::Agent(agent) => agent
                .run(&state)
                .await
                .map(Value::String)
                .map_err(|error| error.to_string()),
            Source::Fetch(fetch) => fetch(state).await.map_err(|error| error.to_string()),
            Source::Llm { llm, prompt } => {
                let text = render(prompt, &state).map_err(|key| {
                    format!("its prompt reads `{{{key}}}`, but state key `{key}` is not set")
                })?;
                let request = LlmRequest::new(llm.model_id()).user(text);
                llm.generate(request)
                    .await
                    .map(|response| Value::String(response.text))
                    .map_err(|error| error.to_string())
            }
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Agent(agent) => f.debug_tuple("Agent").field(&agent.name()).finish(),
            Source::Fetch(_) => f.write_str("Fetch"),
            Source::Llm { llm, prompt } => f
                .debug_struct("Llm")
                .field("model", &llm.model_id())
                .field("prompt", prompt)
                .finish(),
        }
    }
}
