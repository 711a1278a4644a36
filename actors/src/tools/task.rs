//! Running one tool future under a time limit and a cancellation token, with panics
//! caught, on the task that awaits it (the call's own task, in a session).

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolError;
use crate::panic_message::panic_message;

/// What ended the wait for the tool's future.
enum Ending {
    Finished(Result<Result<Value, ToolError>, Box<dyn Any + Send>>),
    TimedOut,
    Cancelled,
}

/// Runs `future` where it is awaited, at most `limit`, and no longer than `cancel` stays
/// unfired.
///
/// - The tool's own result comes back as it is.
/// - A panic becomes [`ToolError::Panicked`] with the panic message: it is caught here,
///   so the caller never unwinds.
/// - Past `limit`: [`ToolError::Timeout`]; on `cancel`: [`ToolError::Cancelled`]. In both
///   cases the future has been dropped when this returns: it cannot write to its state
///   view after the call was settled.
///   (A tool that blocks its thread instead of awaiting delays that drop until it yields.)
///
/// It runs on the caller's task rather than on one of its own: in a session each call
/// already has a task of its own, and another would be two more hand-offs (a spawn, and
/// the wake of the join) on every tool call's way to its response (decision 0041).
pub(crate) async fn supervise(
    tool: &str,
    future: BoxFuture<'static, Result<Value, ToolError>>,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled {
            tool: tool.to_owned(),
        });
    }
    // Unwind safety: on a panic the future is dropped unpolled and only its panic message
    // is kept, so no state it left half-changed is observed through it.
    let guarded = AssertUnwindSafe(future).catch_unwind();
    let ending = tokio::select! {
        biased;
        () = cancel.cancelled() => Ending::Cancelled,
        finished = tokio::time::timeout(limit, guarded) => match finished {
            Ok(finished) => Ending::Finished(finished),
            Err(_elapsed) => Ending::TimedOut,
        },
    };
    // The tool's future is gone here: `select!` dropped the branch that did not finish.
    match ending {
        Ending::Finished(Ok(result)) => result,
        Ending::Finished(Err(payload)) => Err(ToolError::Panicked {
            tool: tool.to_owned(),
            message: panic_message(payload.as_ref()),
        }),
        Ending::TimedOut => Err(ToolError::Timeout {
            tool: tool.to_owned(),
            after: limit,
        }),
        Ending::Cancelled => Err(ToolError::Cancelled {
            tool: tool.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use futures_util::FutureExt;
    use serde_json::json;
    use tokio::time::{Instant, sleep};

    use super::*;

    const LIMIT: Duration = Duration::from_secs(30);

    /// Sets its flag when dropped: proof that a future is gone.
    struct DropFlag(Arc<AtomicBool>);

    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_result_comes_back_as_it_is() {
        let cancel = CancellationToken::new();
        let ok = supervise("t", async { Ok(json!({ "a": 1 })) }.boxed(), LIMIT, &cancel).await;
        assert_eq!(ok, Ok(json!({ "a": 1 })));
        let failed = ToolError::ExecutionFailed {
            tool: "t".into(),
            message: "no".into(),
        };
        let expected = failed.clone();
        let err = supervise("t", async move { Err(failed) }.boxed(), LIMIT, &cancel).await;
        assert_eq!(err, Err(expected));
    }

    #[tokio::test(start_paused = true)]
    async fn the_tool_runs_on_the_task_that_awaits_it() {
        // A call's task awaits `supervise`: the tool runs there, not on a task of its own
        // (which would be a spawn and a join's wake more on the way to the response).
        let caller = tokio::spawn(async {
            let cancel = CancellationToken::new();
            let tool = async { Ok(json!(tokio::task::id().to_string())) }.boxed();
            let ran_on = supervise("t", tool, LIMIT, &cancel).await;
            (tokio::task::id().to_string(), ran_on)
        });
        let (caller, ran_on) = caller.await.unwrap();
        assert_eq!(ran_on, Ok(json!(caller)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_panic_becomes_panicked_with_its_message() {
        let cancel = CancellationToken::new();
        let result = supervise(
            "buggy",
            async {
                let seats: Vec<u32> = Vec::new();
                if seats.is_empty() {
                    panic!("no seats configured");
                }
                Ok(json!(seats))
            }
            .boxed(),
            LIMIT,
            &cancel,
        )
        .await;
        assert_eq!(
            result,
            Err(ToolError::Panicked {
                tool: "buggy".into(),
                message: "no seats configured".into()
            })
        );
        let formatted = supervise(
            "buggy",
            async {
                let index = 7;
                if index > 3 {
                    panic!("index {index} out of range");
                }
                Ok(json!(null))
            }
            .boxed(),
            LIMIT,
            &cancel,
        )
        .await;
        assert_eq!(
            formatted,
            Err(ToolError::Panicked {
                tool: "buggy".into(),
                message: "index 7 out of range".into()
            })
        );
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_limit_the_task_is_aborted_and_gone() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        let cancel = CancellationToken::new();
        let start = Instant::now();
        let result = supervise(
            "slow",
            async move {
                let _flag = flag;
                sleep(Duration::from_secs(60)).await;
                Ok(json!("done"))
            }
            .boxed(),
            LIMIT,
            &cancel,
        )
        .await;
        assert_eq!(
            result,
            Err(ToolError::Timeout {
                tool: "slow".into(),
                after: LIMIT
            })
        );
        assert_eq!(start.elapsed(), LIMIT);
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn cancelling_aborts_the_task() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        let cancel = CancellationToken::new();
        let start = Instant::now();
        let canceller = cancel.clone();
        let (result, ()) = tokio::join!(
            supervise(
                "slow",
                async move {
                    let _flag = flag;
                    sleep(Duration::from_secs(60)).await;
                    Ok(json!("done"))
                }
                .boxed(),
                LIMIT,
                &cancel,
            ),
            async move {
                sleep(Duration::from_secs(2)).await;
                canceller.cancel();
            }
        );
        assert_eq!(
            result,
            Err(ToolError::Cancelled {
                tool: "slow".into()
            })
        );
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn an_already_cancelled_call_never_starts() {
        let started = Arc::new(AtomicBool::new(false));
        let seen = started.clone();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result = supervise(
            "t",
            async move {
                seen.store(true, Ordering::SeqCst);
                Ok(json!(1))
            }
            .boxed(),
            LIMIT,
            &cancel,
        )
        .await;
        assert_eq!(result, Err(ToolError::Cancelled { tool: "t".into() }));
        tokio::task::yield_now().await;
        assert!(!started.load(Ordering::SeqCst));
    }
}
