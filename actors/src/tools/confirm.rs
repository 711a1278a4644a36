//! Confirmation: a tool marked as needing the user's agreement
//! ([`ToolFunction::confirmation`]; `reel_tools::ConfirmTool` marks one) runs only once the
//! dispatcher's [`ConfirmationProvider`] agrees (a prompt in the application's UI, a
//! policy, `reel_tools::StaticConfirmation` in tests).
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

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;

#[cfg(doc)]
use super::{ToolError, ToolFunction};

/// What a provider is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmationRequest {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments the model called it with.
    pub args: Value,
    /// The tool's question ([`ToolFunction::confirmation`]).
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
