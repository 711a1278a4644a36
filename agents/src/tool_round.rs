//! One round of an [`LlmTextAgent`](crate::LlmTextAgent)'s tool loop: the function calls of
//! one answer run at once, answered in call order.

use futures_util::future::join_all;
use reel_actors::state::State;
use reel_actors::tools::{ToolContext, ToolDispatcher, run_call};
use reel_protocol::{FunctionCall, FunctionResponse};
use tokio_util::sync::CancellationToken;

use crate::AgentError;

/// Runs `calls` against `tools` concurrently (on this task, each under its timeout, each
/// with its own view of `state`) and returns their responses in call order. A failed call
/// is an error response for the model (`{"error": "…"}`) and its state writes are rolled
/// back; a successful call's writes are committed, in call order, before this returns. Only
/// a failed commit is the agent's error.
pub(crate) async fn run_tool_calls(
    agent: &str,
    tools: &ToolDispatcher,
    calls: &[FunctionCall],
    state: &State,
) -> Result<Vec<FunctionResponse>, AgentError> {
    let runs = calls.iter().map(|call| {
        let view = state.with_delta();
        let ctx = ToolContext::for_call(call, view.clone(), CancellationToken::new());
        async move { (run_call(tools, call, ctx, None).await, view) }
    });
    let outcomes = join_all(runs).await;
    let mut responses = Vec::with_capacity(outcomes.len());
    for (outcome, view) in outcomes {
        outcome
            .settle(&view)
            .await
            .map_err(|source| AgentError::ToolState {
                agent: agent.to_owned(),
                tool: outcome.name.clone(),
                source,
            })?;
        let mut response = outcome.to_response(&tools.mode(&outcome.name));
        // The REST API's calls may come without an id; the answer then carries none either.
        if response.id.as_deref() == Some("") {
            response.id = None;
        }
        responses.push(response);
    }
    Ok(responses)
}
