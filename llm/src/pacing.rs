//! How a replay paces recorded chunks, and the stream that yields them.

use std::time::Duration;

use futures_util::stream;
use reel_recorder::llm_tape::RecordedChunk;
use tokio::time::Instant;

use super::recorded::replay_chunk;
use super::{LlmError, LlmStream, TapeError};

/// How fast replayed chunks come.
///
/// Delays are kept from the start of the call: chunk *n* is due at the call's start plus
/// the recorded delays of chunks 1 to *n* (scaled), as a network stream would buffer them;
/// a consumer slower than the recording gets the chunks that are already due at once.
/// Waits use tokio's timer, which counts whole milliseconds: a due time between two
/// milliseconds is met at the later one.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ChunkPacing {
    /// With the recorded delays.
    #[default]
    Recorded,
    /// All at once, no delay.
    Immediate,
    /// With the recorded delays divided by `speed` (2.0 replays twice as fast).
    Scaled {
        /// Speed factor: a finite number above 0.
        speed: f64,
    },
}

impl ChunkPacing {
    /// Checks the pacing can be used: a scaled pacing needs a finite speed above 0.
    pub fn check(self) -> Result<Self, TapeError> {
        match self {
            ChunkPacing::Scaled { speed } if !(speed.is_finite() && speed > 0.0) => {
                Err(TapeError::InvalidSpeed { speed })
            }
            pacing => Ok(pacing),
        }
    }

    /// How long to wait for something recorded `delay_ns` after the previous item.
    fn wait(self, delay_ns: u64) -> Duration {
        match self {
            ChunkPacing::Recorded => Duration::from_nanos(delay_ns),
            ChunkPacing::Immediate => Duration::ZERO,
            // `speed` was checked finite and positive, so the quotient is finite and >= 0.
            ChunkPacing::Scaled { speed } => {
                Duration::from_nanos((delay_ns as f64 / speed).round() as u64)
            }
        }
    }
}

/// What comes after the replayed chunks.
pub(crate) enum ReplayEnd {
    /// Nothing: the answer is whole.
    Complete,
    /// An error, `delay_ns` after the last chunk (also paced).
    Fail {
        /// Recorded delay before the error.
        delay_ns: u64,
        /// The error to yield.
        error: Box<LlmError>,
    },
}

/// A stream yielding `chunks` with `pacing` from `start`, then `end`.
pub(crate) fn replay_stream(
    start: Instant,
    chunks: Vec<RecordedChunk>,
    end: ReplayEnd,
    pacing: ChunkPacing,
) -> LlmStream {
    // Instants overflow only after centuries of recorded delay; such a tape's remaining
    // items come at once rather than panic.
    let later = |due: Instant, delay_ns| due.checked_add(pacing.wait(delay_ns)).unwrap_or(due);
    let mut due = start;
    let mut items: Vec<(Instant, Result<_, LlmError>)> = Vec::with_capacity(chunks.len() + 1);
    for chunk in &chunks {
        due = later(due, chunk.delay_ns);
        items.push((due, Ok(replay_chunk(chunk))));
    }
    if let ReplayEnd::Fail { delay_ns, error } = end {
        due = later(due, delay_ns);
        items.push((due, Err(*error)));
    }
    Box::pin(stream::unfold(items.into_iter(), |mut items| async move {
        let (due, item) = items.next()?;
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        Some((item, items))
    }))
}
