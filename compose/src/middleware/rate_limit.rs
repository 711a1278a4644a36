//! `M::rate_limit`: at most `n` calls a second per built agent, as a token bucket (`n`
//! calls at once, then one every `1/n` s); a call over the limit waits for its turn.
//!
//! How long a call waited depends on the clock, so the wait is recorded
//! (`{"layer": "rateLimit", "outcome": {"waitedMs": 500}}`, one decision per call) and a
//! replay reads it back and makes the call at once: a replay from a cassette, which answers
//! at once, is not slowed by a limit the recording already obeyed, and it decides the same.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, SharedAgent};
use serde_json::json;
use tokio::time::Instant;

use super::{AgentLayer, LayerCtx};

pub(super) struct RateLimitLayer {
    /// The time between two calls at the steady rate.
    interval: Duration,
    /// How far ahead of now the schedule may run before a call waits (`n` intervals).
    burst: Duration,
    /// When the schedule's next free slot ends (the generic cell rate algorithm's
    /// theoretical arrival time); `None` before the first call.
    next: Mutex<Option<Instant>>,
}

impl RateLimitLayer {
    /// `per_second` calls a second (at least one).
    pub fn new(per_second: u32) -> Self {
        let per_second = per_second.max(1);
        let interval = Duration::from_secs(1) / per_second;
        RateLimitLayer {
            interval,
            burst: interval * per_second,
            next: Mutex::new(None),
        }
    }

    /// Takes a slot for a call arriving `now`: how long it must wait for it.
    fn take(&self, now: Instant) -> Duration {
        // One read and one write of an instant: a poisoned schedule is still whole.
        let mut next = self
            .next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot_end = next.map_or(now, |at| at.max(now)) + self.interval;
        *next = Some(slot_end);
        slot_end
            .saturating_duration_since(now)
            .saturating_sub(self.burst)
    }
}

impl AgentLayer for RateLimitLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            if let Some(outcome) = ctx.replayed("rateLimit") {
                outcome?["waitedMs"].as_u64().ok_or_else(|| {
                    ctx.mismatch("the recorded rate limit has no `waitedMs`".to_owned())
                })?;
                return next.run(state).await;
            }
            let wait = self.take(Instant::now());
            let waited_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
            ctx.note("rateLimit", json!({ "waitedMs": waited_ms }));
            if !wait.is_zero() {
                tracing::debug!(target: "reel_compose", agent = %ctx.agent, waited_ms, "rate limited");
                tokio::time::sleep(wait).await;
            }
            next.run(state).await
        })
    }
}
