//! What a tool gets besides its arguments: who called it, a transactional view of the
//! session state, and a cancellation signal.

use std::fmt;

use reel_protocol::FunctionCall;
use tokio_util::sync::CancellationToken;

use crate::state::DeltaState;

use super::ToolError;

/// Handed to every tool call.
///
/// Writes go through [`state`](ToolContext::state), a [`DeltaState`]: they stay buffered
/// while the tool runs, the runtime commits them when the response is sent and rolls them
/// back when the call fails (see [`ToolOutcome::settle`](super::ToolOutcome::settle)). So a
/// tool's writes are all-or-nothing, and they reach the journal in the order responses are
/// sent, not in the order tasks happened to be scheduled: replay reproduces them exactly.
///
/// [`cancel`](ToolContext::cancel) fires when the call is cancelled (server
/// `toolCallCancellation`, disconnect, session end). The runtime aborts the tool's task
/// then anyway; a tool that holds resources outside its future can watch the token to
/// release them early.
#[derive(Clone)]
pub struct ToolContext {
    /// The id of the call being answered.
    pub call_id: String,
    /// The name of the tool called.
    pub tool: String,
    /// The session state, seen through this call's uncommitted writes.
    pub state: DeltaState,
    /// Fires when the call is cancelled.
    pub cancel: CancellationToken,
}

impl ToolContext {
    /// A context for `call`, with the given state view and cancellation token.
    ///
    /// A call without an id or name gets empty strings (the model always sends both).
    pub fn for_call(call: &FunctionCall, state: DeltaState, cancel: CancellationToken) -> Self {
        ToolContext {
            call_id: call.id.clone().unwrap_or_default(),
            tool: call.name.clone().unwrap_or_default(),
            state,
            cancel,
        }
    }

    /// A [`ToolError::ExecutionFailed`] for this call's tool: the way a tool reports that
    /// it ran but could not do what was asked.
    ///
    /// ```
    /// use reel_actors::tools::SimpleTool;
    /// use serde_json::Value;
    ///
    /// let tool = SimpleTool::new("book_table", "Books a table.", None, |_args: Value, ctx| async move {
    ///     Err(ctx.fail("no table free at 19:00"))
    /// });
    /// ```
    pub fn fail(&self, message: impl fmt::Display) -> ToolError {
        ToolError::ExecutionFailed {
            tool: self.tool.clone(),
            message: message.to_string(),
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}
