//! Tools that act only once the user agrees: [`ConfirmTool`] marks a tool, the session's
//! [`ConfirmationProvider`] decides each call (a prompt in the application's UI, a policy,
//! [`StaticConfirmation`] in tests). How the runtime asks, and what a denied call answers,
//! is the tree's (`reel_actors::tools`, re-exported here).

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_protocol::FunctionDeclaration;
use serde_json::Value;

use crate::{
    ConfirmationProvider, ConfirmationRequest, ToolConfirmation, ToolContext, ToolError,
    ToolFunction,
};

/// The same answer to every call: for tests, and for sessions where a human already
/// agreed to everything (or nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticConfirmation(pub ToolConfirmation);

impl StaticConfirmation {
    /// Confirms every call.
    pub fn allow_all() -> StaticConfirmation {
        StaticConfirmation(ToolConfirmation::Confirmed)
    }

    /// Denies every call with `reason`.
    pub fn deny_all(reason: impl Into<String>) -> StaticConfirmation {
        StaticConfirmation(ToolConfirmation::denied(reason))
    }
}

impl ConfirmationProvider for StaticConfirmation {
    fn confirm(&self, _request: ConfirmationRequest) -> BoxFuture<'static, ToolConfirmation> {
        let answer = self.0.clone();
        async move { answer }.boxed()
    }
}

/// A tool that runs only once confirmed by the session's [`ConfirmationProvider`].
///
/// ```
/// use reel_tools::{ConfirmTool, SimpleTool, ToolFunction};
/// use serde_json::json;
///
/// let send = ConfirmTool::new(
///     SimpleTool::new("send_email", "Sends an email.", None, |_, _| async { Ok(json!({"sent": true})) }),
///     "This sends a real email. Send it?",
/// );
/// assert_eq!(send.name(), "send_email");
/// assert_eq!(send.confirmation(), Some("This sends a real email. Send it?"));
/// ```
pub struct ConfirmTool {
    inner: Arc<dyn ToolFunction>,
    message: String,
}

impl ConfirmTool {
    /// `tool`, asking `message` before each call.
    pub fn new(tool: impl ToolFunction, message: impl Into<String>) -> ConfirmTool {
        ConfirmTool::wrap(Arc::new(tool), message)
    }

    /// [`new`](ConfirmTool::new) for a tool already shared.
    pub fn wrap(tool: Arc<dyn ToolFunction>, message: impl Into<String>) -> ConfirmTool {
        ConfirmTool {
            inner: tool,
            message: message.into(),
        }
    }
}

impl ToolFunction for ConfirmTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters(&self) -> Option<Value> {
        self.inner.parameters()
    }

    fn declaration(&self) -> FunctionDeclaration {
        self.inner.declaration()
    }

    fn confirmation(&self) -> Option<&str> {
        Some(&self.message)
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.inner.call(args, ctx)
    }

    fn call_args(
        &self,
        args: reel_protocol::Args,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.inner.call_args(args, ctx)
    }
}
