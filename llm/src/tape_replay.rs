//! [`ReplayLlm`]: a model that answers from a per-call tape, offline.

use std::path::Path;

use futures_util::future::BoxFuture;
use reel_recorder::llm_tape::{LlmTape, TapeEnd, read_tape};
use serde_json::Value;
use tokio::time::Instant;

use super::matching::MatchRules;
use super::pacing::{ChunkPacing, ReplayEnd, replay_stream};
use super::recorded::request_json;
use super::{BaseLlm, LlmError, LlmRequest, LlmStream, TapeError};

/// A [`BaseLlm`] that replays one recorded call: it checks the request against the tape's,
/// then yields the tape's chunks with their recorded delays (or at once, or scaled; see
/// [`ChunkPacing`]).
///
/// The request must equal the recorded one unless [`MatchRules`] say otherwise; a mismatch
/// is [`TapeError::Mismatch`], naming the JSON path and both values, returned before any
/// chunk. Every call replays the same tape (one tape is one call: a runner that makes
/// several calls picks a tape for each).
///
/// A tape that recorded a failure yields its chunks, then [`LlmError::Recorded`] after the
/// recorded delay; a tape whose recording was abandoned yields its chunks, then
/// [`TapeError::Incomplete`].
///
/// ```no_run
/// use reel_llm::{BaseLlm, ChunkPacing, LlmRequest, ReplayLlm};
///
/// # async fn demo() -> Result<(), reel_llm::LlmError> {
/// let model = ReplayLlm::open("tests/tapes/smoke-1.json")?.pacing(ChunkPacing::Immediate);
/// let answer = model.generate(LlmRequest::new("gemini-2.5-flash").user("news?")).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ReplayLlm {
    tape: LlmTape,
    request: Value,
    name: String,
    rules: MatchRules,
    pacing: ChunkPacing,
}

impl ReplayLlm {
    /// Reads and checks the tape at `path` (strict matching, recorded pacing).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        let tape = read_tape(path).map_err(TapeError::File)?;
        Ok(ReplayLlm::named(tape, format!("`{}`", path.display())))
    }

    /// Replays `tape`, already in memory (errors name it by its label).
    pub fn new(tape: LlmTape) -> Self {
        let name = format!("labelled {:?}", tape.meta.label);
        ReplayLlm::named(tape, name)
    }

    fn named(tape: LlmTape, name: String) -> Self {
        ReplayLlm {
            request: Value::Object(tape.request.clone()),
            tape,
            name,
            rules: MatchRules::strict(),
            pacing: ChunkPacing::Recorded,
        }
    }

    /// Compares requests by `rules` instead of strict equality.
    pub fn rules(mut self, rules: MatchRules) -> Self {
        self.rules = rules;
        self
    }

    /// Paces the chunks by `pacing` (checked at each call: a bad speed is an error then).
    pub fn pacing(mut self, pacing: ChunkPacing) -> Self {
        self.pacing = pacing;
        self
    }

    /// The tape being replayed.
    pub fn tape(&self) -> &LlmTape {
        &self.tape
    }
}

impl BaseLlm for ReplayLlm {
    fn model_id(&self) -> &str {
        &self.tape.meta.model
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let start = Instant::now();
        Box::pin(async move {
            let pacing = self.pacing.check()?;
            let actual = Value::Object(request_json(&request)?);
            self.rules
                .compare(&self.request, &actual)
                .map_err(|mismatch| TapeError::Mismatch {
                    tape: self.name.clone(),
                    mismatch,
                })?;
            let end = match &self.tape.end {
                None => ReplayEnd::Complete,
                Some(TapeEnd::Error { delay_ns, message }) => ReplayEnd::Fail {
                    delay_ns: *delay_ns,
                    error: Box::new(LlmError::Recorded {
                        message: message.clone(),
                    }),
                },
                Some(TapeEnd::Abandoned { reason }) => ReplayEnd::Fail {
                    delay_ns: 0,
                    error: Box::new(
                        TapeError::Incomplete {
                            tape: self.name.clone(),
                            chunks: self.tape.stream.len(),
                            reason: reason.clone(),
                        }
                        .into(),
                    ),
                },
            };
            Ok(replay_stream(start, self.tape.stream.clone(), end, pacing))
        })
    }
}
