//! What a tool gets besides its arguments: who called it, a transactional view of the
//! session state, a cancellation signal, and the session's way of handing out models.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use reel_protocol::FunctionCall;
use tokio_util::sync::CancellationToken;

use crate::llm::{BaseLlm, LlmInterceptor, PassThrough};
use crate::state::DeltaState;

use super::{ToolError, ToolInput};

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
    /// What [`ToolContext::llm`] wraps models with (the session's interceptor).
    interceptor: Arc<dyn LlmInterceptor>,
    /// Where a streaming tool's results go as they come, when they can.
    partials: Option<Arc<dyn Fn(Value) + Send + Sync>>,
    /// The user's input, for a tool that consumes it (taken once, by the tool).
    input: Option<Arc<Mutex<Option<ToolInput>>>>,
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
            interceptor: Arc::new(PassThrough),
            partials: None,
            input: None,
        }
    }

    /// The call receives the user's live input through `input`
    /// ([`InputStreamingTool`](super::InputStreamingTool)).
    pub fn with_input(mut self, input: ToolInput) -> Self {
        self.input = Some(Arc::new(Mutex::new(Some(input))));
        self
    }

    /// Takes the user's live input handed to the call, if any (once: clones of the context
    /// share it).
    pub fn take_input(&self) -> Option<ToolInput> {
        self.input
            .as_ref()
            .and_then(|input| input.lock().unwrap_or_else(PoisonError::into_inner).take())
    }

    /// A streaming tool's results are handed to `sink` as they come (the control lane
    /// sends each to the model); without one they are kept for the final response.
    pub fn with_partials(mut self, sink: Arc<dyn Fn(Value) + Send + Sync>) -> Self {
        self.partials = Some(sink);
        self
    }

    /// Where a streaming tool's results go as they come, if they can.
    pub fn partials(&self) -> Option<Arc<dyn Fn(Value) + Send + Sync>> {
        self.partials.clone()
    }

    /// Models handed out through [`ToolContext::llm`] go through `interceptor` (the session
    /// sets its own; without one they pass through unchanged).
    pub fn with_llm_interceptor(mut self, interceptor: Arc<dyn LlmInterceptor>) -> Self {
        self.interceptor = interceptor;
        self
    }

    /// `llm` as the session hands models out: through the session's
    /// [`LlmInterceptor`], so that a tool's (or a background agent's) out-of-band calls are
    /// recorded with the session and answered from the recording in a replay. Call models
    /// through what this returns, not directly.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use futures_util::future::BoxFuture;
    /// # use reel_actors::llm::{BaseLlm, LlmError, LlmRequest, LlmStream};
    /// use reel_tools::SimpleTool;
    /// use serde_json::json;
    /// # struct Model;
    /// # impl BaseLlm for Model {
    /// #     fn model_id(&self) -> &str { "gemini-2.5-flash" }
    /// #     fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
    /// #         unimplemented!()
    /// #     }
    /// # }
    /// let model: Arc<dyn BaseLlm> = Arc::new(Model);
    /// let summarize = SimpleTool::new("summarize", "Summarizes a text.", None, move |args, ctx| {
    ///     let model = ctx.llm(Arc::clone(&model));
    ///     async move {
    ///         let request = LlmRequest::new(model.model_id()).user(args["text"].to_string());
    ///         let answer = model.generate(request).await.map_err(|e| ctx.fail(e))?;
    ///         Ok(json!({"summary": answer.text}))
    ///     }
    /// });
    /// ```
    pub fn llm(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        self.interceptor.wrap(llm)
    }

    /// A [`ToolError::ExecutionFailed`] for this call's tool: the way a tool reports that
    /// it ran but could not do what was asked.
    ///
    /// ```
    /// use reel_tools::SimpleTool;
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
