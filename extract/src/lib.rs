//! Turn extractors for reel sessions: structured data drawn from what was said, written to
//! the session state at turn boundaries.
//!
//! The session tree (`reel-actors`) runs extractors through the [`TurnExtractor`] trait and
//! commits their results (see [`reel_actors::extract`] for when they run and what they
//! write); this crate holds the kinds, and re-exports that interface so one `use` finds both:
//!
//! - [`LlmExtractor`] asks an out-of-band model ([`reel_llm::BaseLlm`]) for JSON;
//! - [`RegexExtractor`] runs a closure over the window's text and accumulates fields;
//! - [`FnExtractor`] runs any closure over the window;
//! - [`Extract::record`] builds a [`RecordExtractor`] from deterministic [`Recognizer`]s
//!   ([`recognize`]: numbers, money, choices, fuzzy matches, yes/no, dates and times resolved
//!   on session time), with no model involved.
//!
//! Implement [`TurnExtractor`] for anything else.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod fn_extractor;
mod llm_extractor;
pub mod recognize;
mod regex_extractor;

pub use fn_extractor::FnExtractor;
pub use llm_extractor::LlmExtractor;
pub use recognize::{Extract, Recognizer, RecordBuilder, RecordExtractor};
pub use regex_extractor::RegexExtractor;

pub use reel_actors::extract::{
    DEFAULT_EXTRACTION_TIMEOUT, DERIVED_PREFIX, ExtractionContext, ExtractionError,
    ExtractionPoint, ExtractionTrigger, TurnExtractor, state_writes,
};
