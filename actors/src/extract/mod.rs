//! Turn extractors: structured data drawn from the conversation at turn boundaries and
//! written to the session state.
//!
//! A [`TurnExtractor`] reads a window of the last turns ([`crate::transcript`]) and returns
//! a JSON value. Extractors are registered with
//! [`LiveSessionBuilder::extractor`](crate::LiveSessionBuilder::extractor); each has a
//! [`ExtractionTrigger`] saying when it runs:
//!
//! | trigger | runs |
//! |---|---|
//! | [`EveryTurn`](ExtractionTrigger::EveryTurn) (default) | at every turn complete |
//! | [`Interval(n)`](ExtractionTrigger::Interval) | at turn complete of turns n, 2n, 3n, … |
//! | [`AfterToolCall`](ExtractionTrigger::AfterToolCall) | when tool responses were sent (their writes committed) |
//! | [`OnPhaseChange`](ExtractionTrigger::OnPhaseChange) | after a phase transition at turn complete |
//!
//! The kinds (a model asked for JSON, regex and closure extractors, deterministic
//! recognizers of numbers, money, choices, yes/no, dates and times) are in the
//! `reel-extract` crate, which re-exports this interface. Implement [`TurnExtractor`] for
//! anything else.
//!
//! # In the session
//!
//! The control lane runs the extractors that are due **concurrently** and **waits** for
//! them (each bounded by a timeout, by default [`DEFAULT_EXTRACTION_TIMEOUT`]), then
//! commits their results **in registration order**, so the journal depends only on the
//! frames and on the extractors' answers — a replay whose model calls are answered from a
//! recording writes the same journal. For each extractor, in that order:
//!
//! - success: one state batch — the whole value under the extractor's name, then, if it is
//!   an object, each field that is not `null` under `derived:{field}` (the seed's
//!   auto-flatten: `state.get("field")` finds it through the derived fallback) — then
//!   [`LiveEvent::Extraction`](crate::LiveEvent::Extraction) and `on_extracted`. A `null`
//!   value writes nothing.
//! - failure: no state write;
//!   [`LiveEvent::ExtractionError`](crate::LiveEvent::ExtractionError) and
//!   `on_extraction_error` (a `tracing` warning without one).
//! - `should_extract` said no: nothing at all.
//!
//! At turn complete they run after the transcript turn is finalized and before the computed
//! values and the phase transitions, so guards see fresh extractions (see
//! the control lane's module, `actors/src/control_lane/mod.rs`, for the whole pipeline).
//!
//! Models given to extractors go through the session's
//! [`LlmInterceptor`](crate::llm::LlmInterceptor) once, when the session starts
//! ([`TurnExtractor::intercept`]).

mod context;
mod error;
mod extractor;
mod flatten;
mod run;
mod trigger;

use std::time::Duration;

pub use context::ExtractionContext;
pub use error::ExtractionError;
pub use extractor::TurnExtractor;
pub use flatten::{DERIVED_PREFIX, state_writes};
pub use trigger::{ExtractionPoint, ExtractionTrigger};

pub(crate) use run::ExtractorSet;

/// How long the control lane waits for one extractor before giving up on it
/// ([`ExtractionError::TimedOut`]).
pub const DEFAULT_EXTRACTION_TIMEOUT: Duration = Duration::from_secs(30);
