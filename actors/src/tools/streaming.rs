//! Tools that stream partial results while they run ([`StreamingTool`]).
//!
//! A streaming tool runs in the background (`behavior: NON_BLOCKING`, registered so by
//! [`ToolDispatcher`](super::ToolDispatcher)): the model is told at once that it is
//! running, each result the tool sends reaches the model as it comes — a function response
//! with `willContinue: true`, scheduled as the tool's background setting says (when the
//! model is idle, by default) — and when the tool returns, its last response says it is
//! complete (`{"results_sent": n}`, shaped by the tool's result formatter). Results go through the control lane in the order the tool sent them, and are
//! recorded like any runtime frame, so a replay (which runs the tool again) sends them
//! again in place.
//!
//! Where responses cannot continue — the tool set to run as a standard tool — the results
//! are kept and sent together in the one response, `{"results": [...]}`. On Vertex AI the
//! results go out as they come with their scheduling stripped, as every background
//! response's is there.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolFunction};

/// A tool that sends several results over time.
///
/// ```
/// use futures_util::future::{BoxFuture, FutureExt};
/// use reel_actors::tools::{StreamingTool, ToolContext, ToolError, ToolStream};
/// use serde_json::{Value, json};
///
/// struct Progress;
///
/// impl StreamingTool for Progress {
///     fn name(&self) -> &str { "track_order" }
///     fn description(&self) -> &str { "Follows an order until it is delivered." }
///     fn parameters(&self) -> Option<Value> { None }
///     fn run(&self, _args: Value, _ctx: ToolContext, results: ToolStream)
///         -> BoxFuture<'static, Result<(), ToolError>> {
///         async move {
///             for step in ["packed", "shipped", "delivered"] {
///                 results.send(json!({ "status": step }));
///             }
///             Ok(())
///         }
///         .boxed()
///     }
/// }
/// ```
pub trait StreamingTool: Send + Sync + 'static {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// Its parameters (as [`ToolFunction::parameters`]).
    fn parameters(&self) -> Option<Value>;

    /// Runs one call, sending results through `results` as they come. Runs on its own
    /// task under the tool's timeout and the call's cancellation, like any tool.
    fn run(
        &self,
        args: Value,
        ctx: ToolContext,
        results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>>;
}

/// Where a streaming tool sends its results (cheap to clone; sending never waits).
#[derive(Clone)]
pub struct ToolStream {
    sink: Option<Arc<dyn Fn(Value) + Send + Sync>>,
    /// Results sent so far, and — only where they cannot go out as they come — the results
    /// themselves, for the final response.
    sent: Arc<Mutex<(usize, Vec<Value>)>>,
}

impl std::fmt::Debug for ToolStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolStream")
            .field("streams", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolStream {
    /// Sends one result: to the model now, or kept for the final response where responses
    /// cannot continue.
    pub fn send(&self, result: Value) {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        sent.0 += 1;
        match &self.sink {
            Some(sink) => sink(result),
            None => sent.1.push(result),
        }
    }

    /// Whether results reach the model as they are sent.
    pub fn streams(&self) -> bool {
        self.sink.is_some()
    }
}

/// A [`StreamingTool`] as a [`ToolFunction`]: what the dispatcher registers
/// ([`ToolDispatcher::register_streaming`](super::ToolDispatcher::register_streaming)).
pub struct Streaming(pub Arc<dyn StreamingTool>);

impl ToolFunction for Streaming {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn description(&self) -> &str {
        self.0.description()
    }

    fn parameters(&self) -> Option<Value> {
        self.0.parameters()
    }

    fn streams(&self) -> bool {
        true
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        stream_results(ctx.partials(), |results| self.0.run(args, ctx, results))
    }
}

/// Runs a streaming tool's `run` with a [`ToolStream`] to `partials` (or keeping the
/// results, without), and gives the call's final result: how many results went out, or
/// the results kept.
pub(crate) fn stream_results(
    partials: Option<Arc<dyn Fn(Value) + Send + Sync>>,
    run: impl FnOnce(ToolStream) -> BoxFuture<'static, Result<(), ToolError>>,
) -> BoxFuture<'static, Result<Value, ToolError>> {
    let results = ToolStream {
        sink: partials,
        sent: Arc::default(),
    };
    let run = run(results.clone());
    async move {
        run.await?;
        let (count, kept) =
            std::mem::take(&mut *results.sent.lock().unwrap_or_else(PoisonError::into_inner));
        Ok(if results.streams() {
            json!({ "results_sent": count })
        } else {
            json!({ "results": kept })
        })
    }
    .boxed()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use reel_protocol::FunctionCall;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::state::State;

    struct Three;

    impl StreamingTool for Three {
        fn name(&self) -> &str {
            "three"
        }
        fn description(&self) -> &str {
            "Counts to three."
        }
        fn parameters(&self) -> Option<Value> {
            None
        }
        fn run(
            &self,
            _args: Value,
            _ctx: ToolContext,
            results: ToolStream,
        ) -> BoxFuture<'static, Result<(), ToolError>> {
            async move {
                for n in 1..=3 {
                    results.send(json!(n));
                }
                Ok(())
            }
            .boxed()
        }
    }

    fn ctx() -> ToolContext {
        let call = FunctionCall {
            id: Some("c1".into()),
            name: Some("three".into()),
            ..FunctionCall::default()
        };
        ToolContext::for_call(&call, State::new().with_delta(), CancellationToken::new())
    }

    #[tokio::test]
    async fn where_responses_cannot_continue_the_results_go_together() {
        let result = Streaming(Arc::new(Three)).call(json!({}), ctx()).await;
        assert_eq!(result, Ok(json!({"results": [1, 2, 3]})));
    }

    #[tokio::test]
    async fn where_they_can_each_result_goes_out_as_it_comes() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&sent);
        let ctx = ctx().with_partials(Arc::new(move |value| sink.lock().unwrap().push(value)));
        let result = Streaming(Arc::new(Three)).call(json!({}), ctx).await;
        assert_eq!(result, Ok(json!({"results_sent": 3})));
        assert_eq!(*sent.lock().unwrap(), [json!(1), json!(2), json!(3)]);
    }
}
