//! # reel-compose
//!
//! The composition layer over reel's text agents (`reel-agents`): [`AgentBuilder`], the
//! operators, the namespaces, the patterns and build-time data contracts. Everything
//! lowers to `reel-agents`' combinators, so a composed pipeline records into a cassette
//! and replays offline like any text agent pipeline (decisions 0054 and 0058).
//!
//! - **Operators** on builders, built agents and trees ([`Composable`]): `>>` in sequence
//!   ([`SequentialTextAgent`](reel_agents::SequentialTextAgent)), `|` at once
//!   ([`ParallelTextAgent`](reel_agents::ParallelTextAgent)), `* n` and `* until(pred)`
//!   repeated ([`LoopTextAgent`](reel_agents::LoopTextAgent)), `/` the first success
//!   ([`FallbackTextAgent`](reel_agents::FallbackTextAgent)); [`race`] for
//!   [`RaceTextAgent`](reel_agents::RaceTextAgent).
//! - **Namespaces**: [`S`] state transforms and predicates, [`C`] context policies, [`P`]
//!   prompt sections, [`T`] tools, [`M`] middleware, [`A`] artifacts, [`G`] output guards.
//! - **Patterns**: [`review_loop`], [`cascade`], [`fan_out_merge`], [`supervised`].
//! - **Contracts**: [`check_contracts`], [`infer_data_flow`], [`diagnose`] (and their
//!   `_with` forms, given the keys the caller sets up).
//! - **Processors**: [`RequestProcessor`] / [`ResponseProcessor`] and their chains,
//!   transforming a model call's request and answer on live and replayed calls alike.
//! - **Testing**: [`AgentHarness`], a scripted model, the starting state and exact checks.
//!
//! ```
//! use std::sync::Arc;
//! use reel_compose::{AgentBuilder, P, S, check_contracts, until};
//!
//! let pipeline = AgentBuilder::new("writer")
//!         .instruction(P::role("a poet") + P::task("Write a haiku about the input"))
//!         .output_key("draft")
//!     >> AgentBuilder::new("critic").reads(["draft"]).output_key("verdict")
//!     >> S::rename(&[("verdict", "final_verdict")]);
//! assert_eq!(pipeline.label(), "writer >> critic >> S::rename(verdict->final_verdict)");
//! assert!(check_contracts(&pipeline).is_empty());
//! // let agent = pipeline.compile(llm);  // an Arc<dyn TextAgent>
//! ```
//!
//! The seed's operator lines compile unchanged:
//!
//! ```
//! use reel_compose::{AgentBuilder, until};
//!
//! let pipeline = AgentBuilder::new("writer").instruction("Write a draft")
//!     >> AgentBuilder::new("reviewer").instruction("Review and improve");
//! let analysis = AgentBuilder::new("tech").instruction("Technical analysis")
//!     | AgentBuilder::new("business").instruction("Business analysis");
//! let polished = AgentBuilder::new("refiner").instruction("Polish the text") * 3;
//! let converge = AgentBuilder::new("iterate").instruction("Improve")
//!     * until(|v| v["quality"].as_str() == Some("good"));
//! let robust = AgentBuilder::new("primary").instruction("Try this first")
//!     / AgentBuilder::new("backup").instruction("Fall back to this");
//! assert_eq!(
//!     [pipeline.label(), analysis.label(), polished.label(), converge.label(), robust.label()],
//!     ["writer >> reviewer", "tech | business", "refiner * 3", "iterate * until(fn, max 10)", "primary / backup"]
//! );
//! ```

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agent;
mod artifact_store;
mod artifacts;
mod builder;
mod composable;
mod context_policy;
mod context_summary;
mod contracts;
mod guards;
mod harness;
mod middleware;
mod operators;
mod patterns;
mod processors;
mod prompt;
mod state_transform;
mod tools;

pub use agent::ComposedAgent;
pub use artifact_store::{ArtifactStore, ArtifactStoreError, StoredArtifact};
pub use artifacts::{A, Artifact, Artifacts, JSON_MIME, TEXT_MIME};
pub use builder::{AgentBuilder, AgentConfig, Keys};
pub use composable::{
    BuiltAgent, Composable, DEFAULT_UNTIL_MAX, Fallback, FanOut, Loop, Pipeline, Race, Until, race,
    until, until_state,
};
pub use context_policy::{C, ContextPolicy, HISTORY_KEY};
pub use context_summary::{
    ContextError, SUMMARY_INSTRUCTION, SUMMARY_PREFIX, summary_request, transcript_line,
};
pub use contracts::{
    ContractViolation, DataFlowEdge, check_contracts, check_contracts_with, diagnose,
    diagnose_with, infer_data_flow,
};
pub use guards::{G, GuardViolation, Guards};
pub use harness::{AgentHarness, HarnessError, HarnessRun};
pub use middleware::{
    AuditEntry, AuditLog, CostLedger, CostReport, FallbackModelLlm, LatencyLog, LatencyRecord, M,
    Metrics, MetricsSnapshot, Middleware, ModelCost,
};
pub use patterns::{cascade, fan_out_merge, review_loop, supervised};
pub use processors::{
    InstructionInserter, ProcessedLlm, ProcessorChain, ProcessorError, RequestProcessor,
    RequestProcessorChain, ResponseProcessor, ResponseProcessorChain,
};
pub use prompt::{P, Prompt, PromptSection, PromptSectionKind};
/// The price table `M::cost` reads (`reel-eval`'s: the file `reel eval --prices` reads).
pub use reel_eval::{ModelPrice, PriceTable};
pub use state_transform::{S, StatePredicate, StateTransform};
pub use tools::{BuiltinTool, T, Tools};
