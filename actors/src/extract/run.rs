//! [`ExtractorSet`]: a session's extractors, and running the ones that are due.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::Value;

use super::DEFAULT_EXTRACTION_TIMEOUT;
use super::context::ExtractionContext;
use super::error::ExtractionError;
use super::extractor::TurnExtractor;
use crate::llm::LlmInterceptor;
use crate::panic_message::panic_message;
use crate::transcript::TranscriptTurn;

/// The outcome of one extractor in a run: its name and its result.
pub(crate) type Extraction = (String, Result<Value, ExtractionError>);

/// A session's extractors, in registration order, their models already intercepted.
#[derive(Clone)]
pub(crate) struct ExtractorSet {
    extractors: Vec<Arc<dyn TurnExtractor>>,
    timeout: Duration,
}

impl Default for ExtractorSet {
    fn default() -> Self {
        ExtractorSet {
            extractors: Vec::new(),
            timeout: DEFAULT_EXTRACTION_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for ExtractorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractorSet")
            .field(
                "extractors",
                &self.extractors.iter().map(|e| e.name()).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ExtractorSet {
    /// `extractors`, each passed through `interceptor` once, each run bounded by `timeout`.
    pub(crate) fn new(
        extractors: Vec<Arc<dyn TurnExtractor>>,
        interceptor: &dyn LlmInterceptor,
        timeout: Duration,
    ) -> Self {
        let extractors = extractors
            .into_iter()
            .map(|extractor| extractor.intercept(interceptor).unwrap_or(extractor))
            .collect();
        ExtractorSet {
            extractors,
            timeout,
        }
    }

    /// Whether there is none.
    pub(crate) fn is_empty(&self) -> bool {
        self.extractors.is_empty()
    }

    /// The largest window any extractor reads.
    pub(crate) fn widest_window(&self) -> usize {
        self.extractors
            .iter()
            .map(|e| e.window_size())
            .max()
            .unwrap_or(0)
    }

    /// Runs, concurrently, every extractor due at `ctx.point` in turn `ctx.turn_number`
    /// whose `should_extract` accepts its window of `turns` (the last turns, oldest first),
    /// and returns their outcomes in registration order. A slow extractor times out, a
    /// panicking one is caught: neither holds up or fails the others.
    pub(crate) async fn run(
        &self,
        turns: &[TranscriptTurn],
        ctx: &ExtractionContext,
    ) -> Vec<Extraction> {
        let due = self.extractors.iter().filter(|extractor| {
            extractor.trigger().fires_at(ctx.point, ctx.turn_number)
                && extractor.should_extract(window(turns, extractor.window_size()))
        });
        let runs = due.map(|extractor| async move {
            let name = extractor.name().to_owned();
            let window = window(turns, extractor.window_size());
            // Called inside the future, so a panic while building it is caught too.
            let run = AssertUnwindSafe(async move { extractor.extract(window, ctx).await })
                .catch_unwind();
            let result = match tokio::time::timeout(self.timeout, run).await {
                Ok(Ok(result)) => result,
                Ok(Err(panic)) => Err(ExtractionError::Panicked {
                    extractor: name.clone(),
                    message: panic_message(panic.as_ref()),
                }),
                Err(_) => Err(ExtractionError::TimedOut {
                    extractor: name.clone(),
                    timeout: self.timeout,
                }),
            };
            (name, result)
        });
        join_all(runs).await
    }
}

/// The last `n` of `turns`.
fn window(turns: &[TranscriptTurn], n: usize) -> &[TranscriptTurn] {
    &turns[turns.len().saturating_sub(n)..]
}
