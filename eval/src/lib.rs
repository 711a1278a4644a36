//! # reel-eval
//!
//! Evaluation over recordings: the seed's `E::` namespace, run over a directory of
//! recorded sessions offline.
//!
//! - [`E`]: the constructors: [`E::suite`], [`E::case`] and the criteria
//!   ([`E::response_match`], [`E::contains_match`], [`E::trajectory`], [`E::safety`],
//!   [`E::semantic_match`], [`E::hallucination`], [`E::persona`], [`E::custom`]);
//! - [`Suite`]: named [`Case`]s, each a [`Criterion`] with a threshold in [0, 1], an
//!   optional [`Judge`] for the model-judged criteria and an optional [`PriceTable`];
//!   a suite is also a JSON file ([`Suite::from_json_file`]);
//! - [`recording`]: what is evaluated: wire logs (`*.wire.jsonl`, as `reel export` turns
//!   them into traces), agent traces (`*.trace.json`) and cassettes of model calls
//!   (`*.cassette.json`), found below a directory;
//! - [`evaluate`] runs a suite over recordings in parallel and gives an
//!   [`EvaluationReport`]: per recording, per case, a score, the threshold and the outcome;
//!   a recording that cannot be read is an error in the report, never a pass;
//! - [`export`]: the report as JSON, JUnit XML, Markdown (a pull-request comment) and TRX;
//! - [`cost`]: a trace's cost, its tokens × the user's [`PriceTable`].
//!
//! The judge of model-judged criteria is a `BaseLlm`; hand it a cassette's model
//! ([`Judge::from_cassette`]) and a second run of the suite makes no model call and gives
//! the same report, byte for byte (decision 0059).
//!
//! ```
//! use reel_eval::{E, Order, ArgsMatch};
//! use serde_json::json;
//!
//! let suite = E::suite("weather")
//!     .case(E::case("answers", E::contains_match(["14°C"])))
//!     .case(E::case(
//!         "looks the weather up",
//!         E::trajectory([E::call("get_weather").args(json!({"city": "London"}))])
//!             .order(Order::InOrder)
//!             .args(ArgsMatch::Subset),
//!     ))
//!     .case(E::case("no secrets", E::safety(["password"])));
//! assert_eq!(suite.cases().len(), 3);
//! ```

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cost;
mod criteria;
mod criterion;
mod error;
pub mod export;
mod judge;
mod namespace;
pub mod recording;
mod report;
mod run;
mod score;
mod suite;
mod text;

pub use cost::{Cost, ModelPrice, PriceTable};
pub use criterion::{
    ArgsMatch, ContainsMatch, Criterion, Custom, ExpectedCall, Hallucination, Order, Persona,
    ResponseMatch, Safety, SemanticMatch, Trajectory,
};
pub use error::{EvalError, SuiteProblem};
pub use judge::{Judge, JudgeError};
pub use namespace::E;
pub use report::{CaseOutcome, CaseResult, EvaluationReport, RecordingReport, Summary};
pub use run::{EvalOptions, evaluate, evaluate_trace};
pub use score::Score;
pub use suite::{Case, JudgeSpec, Suite};
