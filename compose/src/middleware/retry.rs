//! `M::retry`: a failed call made again, the attempts and waits recorded.
//!
//! A cassette records only the calls that succeeded (a live failure is returned and not
//! kept), so a replay cannot make the failed attempts again: it reads the recorded
//! decision instead. A recording whose last attempt succeeded replays as that one call
//! (the cassette answers it) with no wait; one whose attempts all failed replays as the same
//! [`AgentError::Failed`] with no call. Live and replayed runs fail with the same message.

use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, SharedAgent};
use serde_json::json;

use super::{AgentLayer, LayerCtx};

pub(super) struct RetryLayer {
    pub max: u32,
    pub backoff: Duration,
}

impl RetryLayer {
    /// The wait before retry `n` (1-based): the backoff doubled `n - 1` times.
    fn wait(&self, retry: u32) -> Duration {
        self.backoff.saturating_mul(
            1u32.checked_shl(retry.saturating_sub(1))
                .unwrap_or(u32::MAX),
        )
    }
}

fn exhausted(agent: &str, attempts: u64, last: &str) -> AgentError {
    AgentError::failed(
        agent,
        format!("M::retry: all {attempts} attempts failed; the last: {last}"),
    )
}

impl AgentLayer for RetryLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            if let Some(outcome) = ctx.replayed("retry") {
                let outcome = outcome?;
                let attempts = outcome["attempts"].as_u64().ok_or_else(|| {
                    ctx.mismatch("the recorded retry has no `attempts`".to_owned())
                })?;
                return match outcome["failed"].as_str() {
                    Some(last) => Err(exhausted(&ctx.agent, attempts, last)),
                    None => next.run(state).await,
                };
            }
            let mut waits: Vec<u64> = Vec::new();
            let mut attempts: u32 = 0;
            loop {
                attempts += 1;
                match next.run(state).await {
                    Ok(output) => {
                        ctx.note("retry", json!({ "attempts": attempts, "waitsMs": waits }));
                        return Ok(output);
                    }
                    Err(error) if attempts > self.max => {
                        let last = error.to_string();
                        ctx.note(
                            "retry",
                            json!({ "attempts": attempts, "waitsMs": waits, "failed": last }),
                        );
                        return Err(exhausted(&ctx.agent, u64::from(attempts), &last));
                    }
                    Err(error) => {
                        tracing::debug!(target: "reel_compose", agent = %ctx.agent, attempt = attempts, %error, "retrying");
                    }
                }
                let wait = self.wait(attempts);
                waits.push(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
        })
    }
}
