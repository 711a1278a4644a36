//! `M::retry`: a failed call made again, the attempts and waits recorded.
//!
//! A cassette records only the calls that succeeded (a live failure is returned and not
//! kept), so a replay cannot make the failed attempts again: it reads the recorded
//! decision instead. A recording whose last attempt succeeded replays as that one call
//! (the cassette answers it) with no wait; one whose attempts all failed replays as the same
//! [`AgentError::Failed`] with no call. Live and replayed runs fail with the same message.
//! The decisions that deciding layers inside the retry made during the failed attempts are
//! recorded by name (`skipped`) and dropped by the replay, which does not make them.

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
                let skipped: Vec<String> = match outcome.get("skipped") {
                    None => Vec::new(),
                    Some(list) => serde_json::from_value(list.clone()).map_err(|error| {
                        ctx.mismatch(format!(
                            "the recorded retry's `skipped` is not a list of names: {error}"
                        ))
                    })?,
                };
                ctx.skip(&skipped)?;
                return match outcome["failed"].as_str() {
                    Some(last) => Err(exhausted(&ctx.agent, attempts, last)),
                    None => next.run(state).await,
                };
            }
            let mut waits: Vec<u64> = Vec::new();
            let mut skipped: Vec<String> = Vec::new();
            let mut attempts: u32 = 0;
            let note = |attempts: u32, waits: &[u64], skipped: &[String], failed: Option<&str>| {
                let mut outcome = json!({ "attempts": attempts, "waitsMs": waits });
                if !skipped.is_empty() {
                    outcome["skipped"] = json!(skipped);
                }
                if let Some(failed) = failed {
                    outcome["failed"] = json!(failed);
                }
                ctx.note("retry", outcome);
            };
            loop {
                attempts += 1;
                let before = if ctx.recording() { ctx.log_len() } else { 0 };
                let outcome = next.run(state).await;
                if outcome.is_err() && ctx.recording() {
                    skipped.extend(ctx.deciders_since(before));
                }
                match outcome {
                    Ok(output) => {
                        note(attempts, &waits, &skipped, None);
                        return Ok(output);
                    }
                    Err(error) if attempts > self.max => {
                        let last = error.to_string();
                        note(attempts, &waits, &skipped, Some(&last));
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
