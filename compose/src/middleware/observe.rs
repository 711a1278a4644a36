//! The observing layers: `M::log`, `M::latency`, `M::audit`, `M::metrics`.

use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, SharedAgent};
use serde_json::json;

use super::{AgentLayer, LayerCtx};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change is one push or one counter: a poisoned log is still whole.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(super) struct LogLayer;

impl AgentLayer for LogLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            tracing::info!(target: "reel_compose", agent = %ctx.agent, "model call starting");
            let outcome = next.run(state).await;
            match &outcome {
                Ok(output) => {
                    tracing::info!(target: "reel_compose", agent = %ctx.agent, chars = output.len(), "model call answered");
                }
                Err(error) => {
                    tracing::warn!(target: "reel_compose", agent = %ctx.agent, %error, "model call failed");
                }
            }
            outcome
        })
    }
}

/// One measured call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyRecord {
    /// The agent.
    pub agent: String,
    /// How long the call took, in milliseconds (in a replay: the recorded figure).
    pub ms: u64,
    /// Whether it succeeded.
    pub ok: bool,
}

/// Where `M::latency` keeps its measurements; cheap to clone (clones share it).
#[derive(Debug, Clone, Default)]
pub struct LatencyLog(Arc<Mutex<Vec<LatencyRecord>>>);

impl LatencyLog {
    /// An empty log.
    pub fn new() -> Self {
        LatencyLog::default()
    }

    /// The measurements so far, in order.
    pub fn records(&self) -> Vec<LatencyRecord> {
        lock(&self.0).clone()
    }
}

pub(super) struct LatencyLayer(pub LatencyLog);

impl AgentLayer for LatencyLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let recorded =
                match ctx.replayed("latency") {
                    Some(outcome) => Some(outcome?["ms"].as_u64().ok_or_else(|| {
                        ctx.mismatch("the recorded latency has no `ms`".to_owned())
                    })?),
                    None => None,
                };
            let start = tokio::time::Instant::now();
            let outcome = next.run(state).await;
            let ms = match recorded {
                Some(ms) => ms,
                None => {
                    let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                    ctx.note("latency", json!({ "ms": ms }));
                    ms
                }
            };
            lock(&self.0.0).push(LatencyRecord {
                agent: ctx.agent.clone(),
                ms,
                ok: outcome.is_ok(),
            });
            outcome
        })
    }
}

/// One audited call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// The agent.
    pub agent: String,
    /// The input it read.
    pub input: String,
    /// Its output, or its error's message.
    pub outcome: Result<String, String>,
}

/// Where `M::audit` keeps its entries; cheap to clone (clones share it).
#[derive(Debug, Clone, Default)]
pub struct AuditLog(Arc<Mutex<Vec<AuditEntry>>>);

impl AuditLog {
    /// An empty log.
    pub fn new() -> Self {
        AuditLog::default()
    }

    /// The entries so far, in order.
    pub fn entries(&self) -> Vec<AuditEntry> {
        lock(&self.0).clone()
    }
}

pub(super) struct AuditLayer(pub AuditLog);

impl AgentLayer for AuditLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let outcome = next.run(state).await;
            lock(&self.0.0).push(AuditEntry {
                agent: ctx.agent.clone(),
                input: ctx.input.clone(),
                outcome: outcome
                    .as_ref()
                    .map(Clone::clone)
                    .map_err(ToString::to_string),
            });
            outcome
        })
    }
}

/// The counts `M::metrics` keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Calls made.
    pub calls: u64,
    /// Calls that succeeded.
    pub succeeded: u64,
    /// Calls that failed.
    pub failed: u64,
}

/// Where `M::metrics` counts; cheap to clone (clones share it).
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Mutex<MetricsSnapshot>>);

impl Metrics {
    /// Zero counts.
    pub fn new() -> Self {
        Metrics::default()
    }

    /// The counts now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        *lock(&self.0)
    }
}

pub(super) struct MetricsLayer(pub Metrics);

impl AgentLayer for MetricsLayer {
    fn run<'a>(
        &'a self,
        _ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let outcome = next.run(state).await;
            let mut counts = lock(&self.0.0);
            counts.calls += 1;
            if outcome.is_ok() {
                counts.succeeded += 1;
            } else {
                counts.failed += 1;
            }
            drop(counts);
            outcome
        })
    }
}
