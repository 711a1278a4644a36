//! Running one function call from the model against the dispatcher.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;

use reel_protocol::{Args, FunctionCall};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::state::{DeltaState, StateError};

use super::task::supervise;
use super::{ConfirmationRequest, ToolConfirmation, ToolContext, ToolDispatcher, ToolError};

/// The tools the current phase allows, and the phase's name (for the error message).
///
/// ```
/// use reel_actors::tools::PhaseToolFilter;
///
/// let allowed = vec!["get_weather".to_owned()];
/// let filter = PhaseToolFilter { phase: "greeting", allowed: &allowed };
/// assert!(filter.allows("get_weather"));
/// assert!(!filter.allows("book_table"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseToolFilter<'a> {
    /// The current phase.
    pub phase: &'a str,
    /// The tools it allows (empty: none).
    pub allowed: &'a [String],
}

impl PhaseToolFilter<'_> {
    /// Whether the phase allows `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed.iter().any(|name| name == tool)
    }
}

/// How one call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The id of the call (empty if the model sent none).
    pub call_id: String,
    /// The tool called.
    pub name: String,
    /// The arguments it was called with (`{}` if the model sent none): background
    /// formatters may quote them.
    pub args: Args,
    /// The tool's result, or why there is none.
    pub result: Result<Value, ToolError>,
    /// From the start of [`run_call`] to its end, in tokio time (exact under paused time).
    pub duration: Duration,
}

impl ToolOutcome {
    /// The call this outcome answers (id, name and arguments).
    pub fn call(&self) -> FunctionCall {
        FunctionCall {
            id: Some(self.call_id.clone()),
            name: Some(self.name.clone()),
            args: Some(self.args.clone()),
            ..FunctionCall::default()
        }
    }

    /// Settles the call's state writes: commits `state` (the view the call's
    /// [`ToolContext`] carried) if the call succeeded, rolls it back if it failed. The
    /// runtime calls this when it sends the response, so writes reach the journal in
    /// response order, and a failed, timed-out or cancelled call leaves no trace.
    pub async fn settle(&self, state: &DeltaState) -> Result<(), StateError> {
        if self.result.is_ok() {
            state.commit().await
        } else {
            state.rollback();
            Ok(())
        }
    }
}

/// Runs `call` against `dispatcher`.
///
/// - An unknown tool fails at once with [`ToolError::UnknownTool`], listing the tools the
///   model may call (those the phase allows, when `filter` is given).
/// - A tool the phase does not allow fails at once with [`ToolError::NotAllowed`].
/// - Otherwise the tool's future runs, on the task that awaits this, under the tool's
///   timeout and `ctx.cancel`; a panic becomes [`ToolError::Panicked`] (caught here), a
///   timeout [`ToolError::Timeout`], a cancellation [`ToolError::Cancelled`]. After a
///   timeout or a cancellation the future has been dropped by the time this returns.
///
/// Missing `args` count as `{}`. The state writes of the call stay in `ctx.state` until
/// [`ToolOutcome::settle`].
///
/// Calls are independent: run several concurrently (e.g. `join_all`) and they take as long
/// as the slowest, not the sum.
pub async fn run_call(
    dispatcher: &ToolDispatcher,
    call: &FunctionCall,
    ctx: ToolContext,
    filter: Option<PhaseToolFilter<'_>>,
) -> ToolOutcome {
    let name = call.name.clone().unwrap_or_default();
    let permits = if dispatcher.get(&name).is_some() {
        acquire_limits(dispatcher, &name, &ctx.cancel).await
    } else {
        Ok(Vec::new())
    };
    run_call_holding(dispatcher, call, ctx, filter, permits).await
}

/// The permits a call of `name` must hold to run under the dispatcher's limits: the
/// tool's, then the session's (none without limits). Waits for them — not timed, but
/// `cancel` ends the wait with [`ToolError::Cancelled`]. Taking them in call order, before
/// the calls' tasks start, is what makes calls past a limit start in call order.
pub async fn acquire_limits(
    dispatcher: &ToolDispatcher,
    name: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Vec<OwnedSemaphorePermit>, ToolError> {
    let mut permits = Vec::new();
    for limit in dispatcher.limits(name).into_iter().flatten() {
        tokio::select! {
            // A dispatcher's semaphores are never closed, so this always holds.
            permit = limit.acquire_owned() => if let Ok(permit) = permit {
                permits.push(permit);
            },
            () = cancel.cancelled() => {
                return Err(ToolError::Cancelled { tool: name.to_owned() });
            }
        }
    }
    Ok(permits)
}

/// [`run_call`] for a call that already holds its permits (or failed to get them: then it
/// does not run and its outcome is that error). The permits are released when it ends.
pub async fn run_call_holding(
    dispatcher: &ToolDispatcher,
    call: &FunctionCall,
    ctx: ToolContext,
    filter: Option<PhaseToolFilter<'_>>,
    permits: Result<Vec<OwnedSemaphorePermit>, ToolError>,
) -> ToolOutcome {
    let start = Instant::now();
    let name = call.name.clone().unwrap_or_default();
    let args = call.args.clone().unwrap_or_else(Args::empty);
    let result = match (dispatcher.get(&name), filter) {
        (None, _) => Err(ToolError::UnknownTool {
            available: dispatcher
                .names()
                .into_iter()
                .filter(|tool| filter.is_none_or(|filter| filter.allows(tool)))
                .collect(),
            name: name.clone(),
        }),
        (Some(_), Some(filter)) if !filter.allows(&name) => Err(ToolError::NotAllowed {
            tool: name.clone(),
            phase: filter.phase.to_owned(),
        }),
        (Some(tool), _) => match permits {
            Err(error) => Err(error),
            Ok(permits) => {
                let cancel = ctx.cancel.clone();
                // `call` itself runs inside the supervised future too, so a tool that panics
                // before handing back its future is caught like one that panics while
                // running.
                let tool = Arc::clone(tool);
                let call_args = args.clone();
                // A tool that must be confirmed asks first, inside the task: the wait
                // counts against its timeout and a cancellation ends it.
                let confirmation = tool.confirmation().map(|message| ConfirmationRequest {
                    call_id: ctx.call_id.clone(),
                    tool: name.clone(),
                    args: args.value().clone(),
                    message: message.to_owned(),
                });
                let provider = dispatcher.confirmation_provider().cloned();
                let future = async move {
                    if let Some(request) = confirmation {
                        let tool = request.tool.clone();
                        let decision = match provider {
                            Some(provider) => provider.confirm(request).await,
                            None => ToolConfirmation::denied("no confirmation provider is set"),
                        };
                        if let ToolConfirmation::Denied { reason } = decision {
                            return Err(ToolError::Denied { tool, reason });
                        }
                    }
                    tool.call_args(call_args, ctx).await
                }
                .boxed();
                let result = supervise(&name, future, dispatcher.timeout(&name), &cancel).await;
                drop(permits);
                result
            }
        },
    };
    ToolOutcome {
        call_id: call.id.clone().unwrap_or_default(),
        name,
        args,
        result,
        duration: start.elapsed(),
    }
}
