//! Tools that act only once the user agrees: [`ConfirmTool`] marks a tool, a
//! [`ConfirmationProvider`] on the dispatcher decides each call (a prompt in the
//! application's UI, a policy, [`StaticConfirmation`] in tests).
//!
//! The runtime asks the provider before the tool runs, inside the call's task: the wait
//! counts against the tool's timeout, a cancellation ends it, and a provider that panics
//! fails the call like a tool that panics. A denied call never runs; the model reads
//! [`ToolError::Denied`] with the reason. A marked tool on a dispatcher without a provider
//! is denied ("no confirmation provider is set"): a tool that must be confirmed never runs
//! unconfirmed.
//!
//! In a replay nobody is asked: `reel_replayer::RecordedConfirmations` answers each call
//! as the recording shows it was answered ([`recorded_decision`]: a denial's error
//! response, or the tool's result), so the replay takes the same path as the session did.

use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_protocol::FunctionDeclaration;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolFunction};

/// What a provider is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmationRequest {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments the model called it with.
    pub args: Value,
    /// The tool's question ([`ConfirmTool::new`]).
    pub message: String,
}

/// A provider's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolConfirmation {
    /// Run the tool.
    Confirmed,
    /// Do not; the model is told why.
    Denied {
        /// Why, in words the model can pass on.
        reason: String,
    },
}

impl ToolConfirmation {
    /// A denial with `reason`.
    pub fn denied(reason: impl Into<String>) -> ToolConfirmation {
        ToolConfirmation::Denied {
            reason: reason.into(),
        }
    }
}

/// Decides whether a marked tool's call may run.
///
/// Any `Fn(ConfirmationRequest) -> impl Future<Output = ToolConfirmation>` is one:
///
/// ```
/// use std::sync::Arc;
/// use reel_actors::tools::{ConfirmationProvider, ConfirmationRequest, ToolConfirmation};
///
/// let provider: Arc<dyn ConfirmationProvider> = Arc::new(|request: ConfirmationRequest| async move {
///     if request.args["amount"].as_f64().unwrap_or(0.0) <= 100.0 {
///         ToolConfirmation::Confirmed
///     } else {
///         ToolConfirmation::denied("transfers over 100 need a call with an agent")
///     }
/// });
/// # drop(provider);
/// ```
pub trait ConfirmationProvider: Send + Sync + 'static {
    /// The decision on one call.
    fn confirm(&self, request: ConfirmationRequest) -> BoxFuture<'static, ToolConfirmation>;
}

impl<F, Fut> ConfirmationProvider for F
where
    F: Fn(ConfirmationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolConfirmation> + Send + 'static,
{
    fn confirm(&self, request: ConfirmationRequest) -> BoxFuture<'static, ToolConfirmation> {
        self(request).boxed()
    }
}

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
/// use reel_actors::tools::{ConfirmTool, SimpleTool, ToolFunction};
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
}

/// The prefix of a denial's text, as [`ToolError::Denied`] writes it.
const DENIED_PREFIX: &str = "the user did not confirm `";

/// The decision a recorded response to a confirmed tool's call shows: a denial's error
/// response (`{"error": "the user did not confirm `tool`: reason"}`, as
/// [`ToolError::Denied`] writes it) was denied with that reason; any other response means
/// the call was confirmed and ran. What a replay's provider answers with
/// (`reel_replayer::RecordedConfirmations`).
///
/// ```
/// use reel_actors::tools::{ToolConfirmation, recorded_decision};
/// use serde_json::json;
///
/// let denied = json!({"error": "the user did not confirm `transfer`: over the limit"});
/// assert_eq!(recorded_decision(&denied), ToolConfirmation::denied("over the limit"));
/// assert_eq!(recorded_decision(&json!({"moved": 50})), ToolConfirmation::Confirmed);
/// ```
pub fn recorded_decision(response: &Value) -> ToolConfirmation {
    response
        .get("error")
        .and_then(Value::as_str)
        .and_then(|text| text.strip_prefix(DENIED_PREFIX))
        .and_then(|rest| rest.split_once("`: "))
        .map_or(ToolConfirmation::Confirmed, |(_, reason)| {
            ToolConfirmation::denied(reason)
        })
}
