//! `M::cache` (answers kept for a time, hits recorded) and `M::dedup` (a repeated request
//! answered with the previous answer).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, SharedAgent};
use serde_json::json;
use tokio::time::Instant;

use super::{AgentLayer, LayerCtx};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change is one insert: a poisoned map is still whole.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(super) struct CacheLayer {
    ttl: Duration,
    entries: Mutex<HashMap<String, (String, Instant)>>,
}

impl CacheLayer {
    pub fn new(ttl: Duration) -> Self {
        CacheLayer {
            ttl,
            entries: Mutex::default(),
        }
    }
}

impl AgentLayer for CacheLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            match ctx.replayed("cache") {
                Some(outcome) => {
                    let outcome = outcome?;
                    let hit = outcome["hit"].as_bool().ok_or_else(|| {
                        ctx.mismatch("the recorded cache decision has no `hit`".to_owned())
                    })?;
                    if hit {
                        let kept = lock(&self.entries)
                            .get(&ctx.key)
                            .map(|(answer, _)| answer.clone());
                        return kept.ok_or_else(|| {
                            ctx.mismatch(
                                "the recording answered from the cache, but the replay's cache holds no answer to this request"
                                    .to_owned(),
                            )
                        });
                    }
                }
                None => {
                    let fresh = lock(&self.entries)
                        .get(&ctx.key)
                        .filter(|(_, at)| at.elapsed() < self.ttl)
                        .map(|(answer, _)| answer.clone());
                    ctx.note("cache", json!({ "hit": fresh.is_some() }));
                    if let Some(answer) = fresh {
                        return Ok(answer);
                    }
                }
            }
            let output = next.run(state).await?;
            lock(&self.entries).insert(ctx.key.clone(), (output.clone(), Instant::now()));
            Ok(output)
        })
    }
}

#[derive(Default)]
pub(super) struct DedupLayer {
    last: Mutex<Option<(String, String)>>,
}

impl AgentLayer for DedupLayer {
    fn run<'a>(
        &'a self,
        ctx: &'a LayerCtx,
        next: &'a SharedAgent,
        state: &'a State,
    ) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let repeated = lock(&self.last)
                .as_ref()
                .filter(|(key, _)| *key == ctx.key)
                .map(|(_, answer)| answer.clone());
            if let Some(answer) = repeated {
                return Ok(answer);
            }
            let output = next.run(state).await?;
            *lock(&self.last) = Some((ctx.key.clone(), output.clone()));
            Ok(output)
        })
    }
}
