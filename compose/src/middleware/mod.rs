//! `M::`: middleware around a composed agent's model call.
//!
//! Each layer wraps the agent's core (its one [`LlmTextAgent`](reel_agents::LlmTextAgent)
//! call) and runs in the order written: `M::log() | M::retry(2)` logs around the retries.
//! A layer that reads the clock or sleeps decides by timing, so it writes what it decided
//! into the [`Decisions`] log the agent was built with, and a replay reads the decision
//! back instead of reading the clock (decision 0058):
//!
//! | layer | reads the clock for | recorded as (`kind: middleware`) | a replay |
//! |---|---|---|---|
//! | `M::timeout` | the deadline | `{"layer": "timeout", "outcome": {"fired": true}}` | fails at once if it fired, else runs with no deadline |
//! | `M::retry` | the backoff's sleeps | `{"layer": "retry", "outcome": {"attempts": 2, "waitsMs": [100]}}` | makes the last attempt, no sleep |
//! | `M::latency` | the elapsed time | `{"layer": "latency", "outcome": {"ms": 120}}` | reports the recorded time |
//! | `M::circuit_breaker` | the cool-down | `{"layer": "circuitBreaker", "outcome": {"state": "open"}}` | decides the same state |
//! | `M::cache` | an entry's age | `{"layer": "cache", "outcome": {"hit": true}}` | hits where the recording hit |
//! | `M::rate_limit` | the token bucket's refill | `{"layer": "rateLimit", "outcome": {"waitedMs": 500}}` | makes the call at once, no wait |
//!
//! Each layer's decisions are kept under `{agent}.{layer}` (`writer.retry`), so each reads
//! its own in order. A retry or a timeout around other deciding layers also records which
//! of their decisions its failed attempts (or the run it cut short) made (`skipped`), and
//! its replay drops them, since it does not run those again.
//!
//! `M::log`, `M::audit`, `M::metrics`, `M::dedup`, `M::fallback_model` and `M::cost` read
//! no clock: they decide the same on the same answers, which the cassette gives back.

mod breaker;
mod cache;
mod cost;
mod fallback_model;
mod observe;
mod rate_limit;
mod retry;

use std::fmt;
use std::ops::BitOr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, Choice, DecisionMode, Decisions, SharedAgent, TextAgent};
use serde_json::Value;

pub(crate) use cost::CostLlm;
pub use cost::{CostLedger, CostReport, ModelCost};
pub use fallback_model::FallbackModelLlm;
pub use observe::{AuditEntry, AuditLog, LatencyLog, LatencyRecord, Metrics, MetricsSnapshot};

/// What a layer knows about the run it wraps.
#[derive(Clone)]
pub(crate) struct LayerCtx {
    /// The composed agent's name (the decisions' `agent`).
    pub agent: String,
    /// The decisions log, if the agent was built with one.
    pub decisions: Option<Decisions>,
    /// The request the core will send, as JSON text (the cache's and dedup's key).
    pub key: String,
    /// The input the core reads.
    pub input: String,
}

impl LayerCtx {
    /// The name `layer`'s decisions are kept under: `{agent}.{layer}`, so each layer
    /// reads its own decisions in order whatever the others recorded.
    pub fn decider(&self, layer: &str) -> String {
        format!("{}.{layer}", self.agent)
    }

    /// Whether decisions are being recorded.
    pub fn recording(&self) -> bool {
        self.decisions
            .as_ref()
            .is_some_and(|d| d.mode() == DecisionMode::Record)
    }

    /// How many decisions the log holds (recording), to find those made since.
    pub fn log_len(&self) -> usize {
        self.decisions
            .as_ref()
            .map_or(0, |d| d.snapshot().decisions.len())
    }

    /// The deciders of this agent's layers that wrote decisions since the log held `from`.
    pub fn deciders_since(&self, from: usize) -> Vec<String> {
        let prefix = format!("{}.", self.agent);
        self.decisions.as_ref().map_or_else(Vec::new, |d| {
            d.snapshot()
                .decisions
                .into_iter()
                .skip(from)
                .filter(|decision| decision.agent.starts_with(&prefix))
                .map(|decision| decision.agent)
                .collect()
        })
    }

    /// In a replay, reads and drops the next decision of each of `deciders`, in order
    /// (those an attempt that is not made again would have read).
    pub fn skip(&self, deciders: &[String]) -> Result<(), AgentError> {
        if let Some(decisions) = &self.decisions {
            for decider in deciders {
                decisions.next(decider)?;
            }
        }
        Ok(())
    }

    /// In a replay, the recorded outcome of `layer`'s next decision for this agent.
    pub fn replayed(&self, layer: &str) -> Option<Result<Value, AgentError>> {
        let decisions = self.decisions.as_ref()?;
        if decisions.mode() != DecisionMode::Replay {
            return None;
        }
        Some(match decisions.next(&self.decider(layer)) {
            Ok(Choice::Middleware {
                layer: found,
                outcome,
            }) if found == layer => Ok(outcome),
            Ok(other) => {
                Err(self.mismatch(format!("expected a `{layer}` decision, found {other:?}")))
            }
            Err(error) => Err(error),
        })
    }

    /// When recording, writes `outcome` of `layer` down.
    pub fn note(&self, layer: &str, outcome: Value) {
        if let Some(decisions) = &self.decisions
            && decisions.mode() == DecisionMode::Record
        {
            decisions.note(
                &self.decider(layer),
                Choice::Middleware {
                    layer: layer.to_owned(),
                    outcome,
                },
            );
        }
    }

    /// A replay that does not fit its recording.
    pub fn mismatch(&self, problem: String) -> AgentError {
        AgentError::Decision {
            agent: self.agent.clone(),
            problem,
        }
    }
}

/// One instantiated layer (with its own memory: a cache, a breaker's count).
pub(crate) trait AgentLayer: Send + Sync {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>>;
}

/// A layer around the next agent, for one run.
struct Layered {
    layer: Arc<dyn AgentLayer>,
    ctx: LayerCtx,
    next: SharedAgent,
}

impl TextAgent for Layered {
    fn name(&self) -> &str {
        &self.ctx.agent
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        self.layer.run(&self.ctx, &self.next, state)
    }
}

/// Runs `core` inside `layers` (the first outermost).
pub(crate) async fn run_layered(
    layers: &[Arc<dyn AgentLayer>],
    ctx: &LayerCtx,
    core: SharedAgent,
    state: &State,
) -> Result<String, AgentError> {
    let mut agent = core;
    for layer in layers.iter().rev() {
        agent = Arc::new(Layered {
            layer: Arc::clone(layer),
            ctx: ctx.clone(),
            next: agent,
        });
    }
    agent.run(state).await
}

/// A layer as written, before it is given its memory.
#[derive(Clone)]
pub(crate) enum LayerSpec {
    Log,
    Latency(LatencyLog),
    Timeout(Duration),
    Retry { max: u32, backoff: Duration },
    Audit(AuditLog),
    CircuitBreaker { threshold: u32, cooldown: Duration },
    Cache { ttl: Duration },
    Dedup,
    Metrics(Metrics),
    FallbackModel(String),
    Cost(CostLedger),
    RateLimit(u32),
}

impl LayerSpec {
    fn label(&self) -> String {
        match self {
            LayerSpec::Log => "M::log()".to_owned(),
            LayerSpec::Latency(_) => "M::latency(..)".to_owned(),
            LayerSpec::Timeout(limit) => format!("M::timeout({limit:?})"),
            LayerSpec::Retry { max, backoff } => format!("M::retry({max}, {backoff:?})"),
            LayerSpec::Audit(_) => "M::audit(..)".to_owned(),
            LayerSpec::CircuitBreaker {
                threshold,
                cooldown,
            } => {
                format!("M::circuit_breaker({threshold}, {cooldown:?})")
            }
            LayerSpec::Cache { ttl } => format!("M::cache({ttl:?})"),
            LayerSpec::Dedup => "M::dedup()".to_owned(),
            LayerSpec::Metrics(_) => "M::metrics(..)".to_owned(),
            LayerSpec::FallbackModel(model) => format!("M::fallback_model({model})"),
            LayerSpec::Cost(_) => "M::cost(..)".to_owned(),
            LayerSpec::RateLimit(per_second) => format!("M::rate_limit({per_second})"),
        }
    }

    /// The layer with fresh memory; `None` for the model-level `fallback_model` and `cost`.
    pub(crate) fn instantiate(&self) -> Option<Arc<dyn AgentLayer>> {
        Some(match self {
            LayerSpec::Log => Arc::new(observe::LogLayer),
            LayerSpec::Latency(log) => Arc::new(observe::LatencyLayer(log.clone())),
            LayerSpec::Timeout(limit) => Arc::new(TimeoutLayer(*limit)),
            LayerSpec::Retry { max, backoff } => Arc::new(retry::RetryLayer {
                max: *max,
                backoff: *backoff,
            }),
            LayerSpec::Audit(log) => Arc::new(observe::AuditLayer(log.clone())),
            LayerSpec::CircuitBreaker {
                threshold,
                cooldown,
            } => Arc::new(breaker::BreakerLayer::new(*threshold, *cooldown)),
            LayerSpec::Cache { ttl } => Arc::new(cache::CacheLayer::new(*ttl)),
            LayerSpec::Dedup => Arc::new(cache::DedupLayer::default()),
            LayerSpec::Metrics(metrics) => Arc::new(observe::MetricsLayer(metrics.clone())),
            LayerSpec::RateLimit(per_second) => {
                Arc::new(rate_limit::RateLimitLayer::new(*per_second))
            }
            LayerSpec::FallbackModel(_) | LayerSpec::Cost(_) => return None,
        })
    }
}

/// Middleware layers, outermost first (`|` appends).
///
/// ```
/// use std::time::Duration;
/// use reel_compose::{AuditLog, LatencyLog, M};
///
/// let (latency, audit) = (LatencyLog::new(), AuditLog::new());
/// let middleware = M::log()
///     | M::latency(&latency)
///     | M::timeout(Duration::from_secs(30))
///     | M::retry(3)
///     | M::circuit_breaker(5)
///     | M::audit(&audit);
/// assert_eq!(middleware.len(), 6);
/// ```
#[derive(Clone, Default)]
pub struct Middleware {
    pub(crate) layers: Vec<LayerSpec>,
}

impl fmt::Debug for Middleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<String> = self.layers.iter().map(LayerSpec::label).collect();
        f.debug_tuple("Middleware").field(&labels).finish()
    }
}

impl Middleware {
    fn one(layer: LayerSpec) -> Self {
        Middleware {
            layers: vec![layer],
        }
    }

    /// How many layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The layers as written.
    pub fn labels(&self) -> Vec<String> {
        self.layers.iter().map(LayerSpec::label).collect()
    }
}

impl BitOr for Middleware {
    type Output = Middleware;

    /// `self`'s layers (outer), then `rhs`'s.
    fn bitor(mut self, rhs: Middleware) -> Middleware {
        self.layers.extend(rhs.layers);
        self
    }
}

/// `M::timeout`: the rest under a deadline. Whether it fired is recorded (`{"fired": true}`)
/// with the decisions the layers inside made before it fired (`skipped`), which a replay
/// drops, since it does not run them: a fired timeout fails at once, one that did not runs
/// with no deadline.
struct TimeoutLayer(Duration);

impl TimeoutLayer {
    fn timed_out(&self, ctx: &LayerCtx) -> AgentError {
        AgentError::Timeout {
            agent: ctx.agent.clone(),
            after: self.0,
        }
    }
}

impl AgentLayer for TimeoutLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            if let Some(outcome) = ctx.replayed("timeout") {
                let outcome = outcome?;
                let fired = outcome["fired"].as_bool().ok_or_else(|| {
                    ctx.mismatch("the recorded timeout has no `fired`".to_owned())
                })?;
                if !fired {
                    return next.run(state).await;
                }
                let skipped: Vec<String> = match outcome.get("skipped") {
                    None => Vec::new(),
                    Some(list) => serde_json::from_value(list.clone()).map_err(|error| {
                        ctx.mismatch(format!(
                            "the recorded timeout's `skipped` is not a list of names: {error}"
                        ))
                    })?,
                };
                ctx.skip(&skipped)?;
                return Err(self.timed_out(ctx));
            }
            let before = if ctx.recording() { ctx.log_len() } else { 0 };
            match tokio::time::timeout(self.0, next.run(state)).await {
                Ok(outcome) => {
                    ctx.note("timeout", serde_json::json!({ "fired": false }));
                    outcome
                }
                Err(_) => {
                    let skipped = if ctx.recording() {
                        ctx.deciders_since(before)
                    } else {
                        Vec::new()
                    };
                    let mut outcome = serde_json::json!({ "fired": true });
                    if !skipped.is_empty() {
                        outcome["skipped"] = serde_json::json!(skipped);
                    }
                    ctx.note("timeout", outcome);
                    Err(self.timed_out(ctx))
                }
            }
        })
    }
}

/// The `M::` namespace: middleware ([`Middleware`]).
#[derive(Debug, Clone, Copy)]
pub struct M;

impl M {
    /// Logs each call's start and end (`tracing`, target `reel_compose`).
    pub fn log() -> Middleware {
        Middleware::one(LayerSpec::Log)
    }

    /// Measures each call into `log`; recorded, so a replay reports the recorded time.
    pub fn latency(log: &LatencyLog) -> Middleware {
        Middleware::one(LayerSpec::Latency(log.clone()))
    }

    /// Fails a call that takes longer than `limit` with `AgentError::Timeout`; recorded
    /// (whether it fired), so a replay decides the same.
    pub fn timeout(limit: Duration) -> Middleware {
        Middleware::one(LayerSpec::Timeout(limit))
    }

    /// Retries a failed call up to `max` times, at once.
    pub fn retry(max: u32) -> Middleware {
        M::retry_with_backoff(max, Duration::ZERO)
    }

    /// Retries a failed call up to `max` times, waiting `backoff`, then twice that, … before
    /// each retry; the attempts and waits are recorded, and a replay makes the same attempts
    /// without waiting.
    pub fn retry_with_backoff(max: u32, backoff: Duration) -> Middleware {
        Middleware::one(LayerSpec::Retry { max, backoff })
    }

    /// Keeps each call's input and outcome in `log`.
    pub fn audit(log: &AuditLog) -> Middleware {
        Middleware::one(LayerSpec::Audit(log.clone()))
    }

    /// After `threshold` failures in a row, refuses calls (without calling the model) for
    /// 30 seconds, then lets one through; see [`M::circuit_breaker_with_cooldown`].
    pub fn circuit_breaker(threshold: u32) -> Middleware {
        M::circuit_breaker_with_cooldown(threshold, Duration::from_secs(30))
    }

    /// After `threshold` failures in a row, refuses calls for `cooldown`, then lets one
    /// through (its failure opens the circuit again, its success closes it). Each call's
    /// state (`closed`, `open`, `halfOpen`) is recorded, so a replay decides the same.
    pub fn circuit_breaker_with_cooldown(threshold: u32, cooldown: Duration) -> Middleware {
        Middleware::one(LayerSpec::CircuitBreaker {
            threshold,
            cooldown,
        })
    }

    /// Answers a request identical to one answered less than `ttl` ago from memory (per
    /// built agent); hits and misses are recorded, so a replay hits where the recording hit.
    pub fn cache(ttl: Duration) -> Middleware {
        Middleware::one(LayerSpec::Cache { ttl })
    }

    /// Answers a request identical to the agent's previous one with the previous answer,
    /// without a call (no clock: the same requests dedup the same in a replay).
    pub fn dedup() -> Middleware {
        Middleware::one(LayerSpec::Dedup)
    }

    /// Counts calls, successes and failures into `metrics`.
    pub fn metrics(metrics: &Metrics) -> Middleware {
        Middleware::one(LayerSpec::Metrics(metrics.clone()))
    }

    /// When the model call fails, asks `model` instead (the same `BaseLlm`, the request's
    /// model replaced); both calls go through the agent's model, so a cassette records and
    /// replays both.
    pub fn fallback_model(model: &str) -> Middleware {
        Middleware::one(LayerSpec::FallbackModel(model.to_owned()))
    }

    /// Charges every answered model call to `ledger`: its tokens at its request's model's
    /// prices (the ledger's [`PriceTable`](reel_eval::PriceTable), per million tokens;
    /// thinking billed as output). It sits next to the model, inside `M::fallback_model`
    /// wherever it is written, so a fallback is charged at the fallback's price. No clock:
    /// a cassette replay gives back the usage and costs the same.
    pub fn cost(ledger: &CostLedger) -> Middleware {
        Middleware::one(LayerSpec::Cost(ledger.clone()))
    }

    /// At most `per_second` calls a second for this agent (a token bucket: `per_second`
    /// calls at once, then one every `1/per_second` s; at least one a second); a call
    /// over the limit waits for its turn. Each call's wait is recorded
    /// (`{"waitedMs": 500}`), and a replay makes the call at once: it decides the same
    /// without the clock.
    pub fn rate_limit(per_second: u32) -> Middleware {
        Middleware::one(LayerSpec::RateLimit(per_second))
    }
}
