//! Text agents: composable request/response units over [`reel_llm::BaseLlm`], and the
//! seed's combinators to build pipelines from them.
//!
//! A [`TextAgent`] reads the [`State`](reel_actors::state::State) (by convention its
//! [`INPUT_KEY`]) and returns its output (by convention also written to [`OUTPUT_KEY`]).
//! [`LlmTextAgent`] asks a model (and, given tools, runs the model's tool calls in a loop
//! up to a bound); [`FnTextAgent`] and [`TapTextAgent`] run closures; the
//! combinators run other agents: in order ([`SequentialTextAgent`]), all at once
//! ([`ParallelTextAgent`]), first success ([`RaceTextAgent`]), by state
//! ([`RouteTextAgent`]), until one succeeds ([`FallbackTextAgent`]), repeatedly
//! ([`LoopTextAgent`]), per list item ([`MapOverTextAgent`]), under a deadline
//! ([`TimeoutTextAgent`]), in the background ([`DispatchTextAgent`], [`JoinTextAgent`]);
//! [`ApprovalTextAgent`] stops a pipeline until a person approves or rejects.
//!
//! **Record and replay.** Every model call goes through the [`reel_llm::BaseLlm`] the agent
//! was given: wrap it in a [`reel_llm::Cassette`] and a pipeline's calls are recorded, and a
//! cassette replay runs the pipeline with no model call. A choice made by timing (a race's
//! winner, a deadline passing) or by a person (an approval) is kept in a [`Decisions`] log
//! so a replay makes the same one (decision 0054).
//!
//! From a live session: [`TextAgentTool`] is an agent as a tool, and
//! [`BackgroundAgentDispatcher`] runs agents detached with results in state.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agent;
mod approval;
mod background;
mod decisions;
mod dispatch;
mod error;
mod fallback;
mod fn_agent;
mod llm_agent;
mod loop_agent;
mod map_over;
mod mode;
mod parallel;
mod race;
pub mod resolver;
mod route;
mod sequential;
mod timeout;
mod tool;
mod tool_round;

pub use agent::{INPUT_KEY, OUTPUT_KEY, SharedAgent, TextAgent};
pub use approval::{Approval, ApprovalTextAgent};
pub use background::BackgroundAgentDispatcher;
pub use decisions::{
    Choice, DECISIONS_VERSION, Decision, DecisionFile, DecisionMode, Decisions, DecisionsError,
};
pub use dispatch::{DispatchTextAgent, JoinTextAgent, TaskRegistry};
pub use error::AgentError;
pub use fallback::FallbackTextAgent;
pub use fn_agent::{FnTextAgent, TapTextAgent};
pub use llm_agent::{DEFAULT_MAX_TOOL_ROUNDS, LlmTextAgent};
pub use loop_agent::LoopTextAgent;
pub use map_over::{DEFAULT_ITEM_KEY, DEFAULT_MAP_OUTPUT_KEY, MapOverTextAgent};
pub use mode::AgentMode;
pub use parallel::ParallelTextAgent;
pub use race::RaceTextAgent;
pub use resolver::{
    FetchError, Provenance, Resolution, ResolutionMode, Resolutions, ResolutionsError,
    ResolveError, Resolver, ResolverDrift, SourceKind, call_agent, provenance, read_resolutions,
};
pub use route::{RouteRule, RouteTextAgent};
pub use sequential::SequentialTextAgent;
pub use timeout::TimeoutTextAgent;
pub use tool::TextAgentTool;
