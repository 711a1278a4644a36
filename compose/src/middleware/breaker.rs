//! `M::circuit_breaker`: calls refused after failures in a row, each call's state recorded.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, SharedAgent};
use serde_json::json;
use tokio::time::Instant;

use super::{AgentLayer, LayerCtx};

#[derive(Default)]
struct Counts {
    failures: u32,
    opened_at: Option<Instant>,
}

pub(super) struct BreakerLayer {
    threshold: u32,
    cooldown: Duration,
    counts: Mutex<Counts>,
}

impl BreakerLayer {
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        BreakerLayer {
            threshold,
            cooldown,
            counts: Mutex::default(),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        // Every change is a counter and a time: a poisoned lock is still whole.
        self.counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `closed`, `open` or `halfOpen`, from the counts and the clock.
    fn decide(&self) -> &'static str {
        let counts = self.counts();
        if counts.failures < self.threshold.max(1) {
            return "closed";
        }
        match counts.opened_at {
            Some(at) if at.elapsed() < self.cooldown => "open",
            _ => "halfOpen",
        }
    }

    fn settle(&self, ok: bool) {
        let mut counts = self.counts();
        if ok {
            *counts = Counts::default();
        } else {
            counts.failures = counts.failures.saturating_add(1);
            if counts.failures >= self.threshold.max(1) {
                counts.opened_at = Some(Instant::now());
            }
        }
    }
}

impl AgentLayer for BreakerLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let decided = match ctx.replayed("circuitBreaker") {
                Some(outcome) => {
                    let outcome = outcome?;
                    match outcome["state"].as_str() {
                        Some(s @ ("closed" | "open" | "halfOpen")) => s.to_owned(),
                        _ => {
                            return Err(ctx.mismatch(format!(
                                "the recorded circuit state {} is not closed, open or halfOpen",
                                outcome["state"]
                            )));
                        }
                    }
                }
                None => {
                    let decided = self.decide();
                    ctx.note("circuitBreaker", json!({ "state": decided }));
                    decided.to_owned()
                }
            };
            if decided == "open" {
                return Err(AgentError::failed(
                    &ctx.agent,
                    format!(
                        "the circuit breaker is open after {} failures in a row; no call made",
                        self.threshold.max(1)
                    ),
                ));
            }
            let outcome = next.run(state).await;
            self.settle(outcome.is_ok());
            outcome
        })
    }
}
