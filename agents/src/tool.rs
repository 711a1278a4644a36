//! [`TextAgentTool`]: a text agent the live model can call as a tool.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_actors::tools::{ToolContext, ToolError, ToolFunction};
use serde_json::{Value, json};

use crate::SharedAgent;
use crate::agent::INPUT_KEY;

/// A [`TextAgent`](crate::TextAgent) as a [`ToolFunction`]: the model calls it with
/// `{"request": "…"}`; the request is written to the shared state's [`INPUT_KEY`], the agent
/// runs over that state (so it reads what the live session extracted, and its writes are
/// the session's), and its output is the tool's result, `{"result": "…"}`. An agent error is
/// the tool's error, which the model reads.
///
/// Being a tool, its response is on the session's wire log like any other. A session
/// replay runs the tool again, as it runs every tool, and compares its response with the
/// recorded one; give the agent a model wrapped in the session's cassette
/// ([`reel_llm::Cassette::beside`] the wire log) and its model calls replay from there, so
/// the replayed response is the recorded one with no model call.
pub struct TextAgentTool {
    name: String,
    description: String,
    agent: SharedAgent,
    state: State,
}

impl TextAgentTool {
    /// The tool `name`, described to the model as `description`, running `agent` over
    /// `state` (the live session's, usually).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        agent: SharedAgent,
        state: State,
    ) -> Self {
        TextAgentTool {
            name: name.into(),
            description: description.into(),
            agent,
            state,
        }
    }
}

impl std::fmt::Debug for TextAgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextAgentTool")
            .field("name", &self.name)
            .field("agent", &self.agent.name())
            .finish_non_exhaustive()
    }
}

impl ToolFunction for TextAgentTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Option<Value> {
        Some(json!({
            "type": "OBJECT",
            "properties": {
                "request": {"type": "STRING", "description": "What to ask the agent."}
            },
            "required": ["request"]
        }))
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let (agent, state, tool) = (
            Arc::clone(&self.agent),
            self.state.clone(),
            self.name.clone(),
        );
        Box::pin(async move {
            let request = match args.get("request") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => {
                    return Err(ToolError::InvalidArgs {
                        tool,
                        message: "missing field `request`".to_owned(),
                    });
                }
            };
            let failed = |message: String| ToolError::ExecutionFailed {
                tool: tool.clone(),
                message,
            };
            state
                .set(INPUT_KEY, &request)
                .await
                .map_err(|error| failed(error.to_string()))?;
            let output = agent
                .run(&state)
                .await
                .map_err(|error| failed(error.to_string()))?;
            Ok(json!({ "result": output }))
        })
    }
}
