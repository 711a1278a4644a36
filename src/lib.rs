//! # reel
//!
//! A runtime for real-time Gemini Live sessions, built as a tree of supervised actors whose
//! spine is record & replay. This crate re-exports the workspace's crates; see
//! [`protocol`] for the wire protocol.

// Library code never unwraps: a bad frame is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use reel_actors as actors;
/// Text agents and their combinators (the `reel-agents` crate): pipelines over `BaseLlm`
/// that record into cassettes and replay offline.
pub use reel_agents as agents;
/// The composition layer (the `reel-compose` crate): `AgentBuilder`, the operators
/// `>> | * /`, the `S C T P M A G` namespaces, patterns and build-time data contracts.
pub use reel_compose as compose;
/// Evaluation over recordings: `E::` suites scored over wire logs, traces and cassettes,
/// reported as JSON, JUnit XML, Markdown and TRX (the `reel-eval` crate).
pub use reel_eval as eval;
pub use reel_extract as extract;
/// Governed flows as data: the `Flow` value, its monitor, conformance scoring of
/// recordings (the `reel-flow` crate).
pub use reel_flow as flow;
pub use reel_fluent as fluent;
pub use reel_llm as llm;
pub use reel_persistence as persistence;
pub use reel_protocol as protocol;
/// Watchers, computed values and temporal patterns (the `reel-reactive` crate; it was
/// `reel::actors::reactive`).
pub use reel_reactive as reactive;
pub use reel_recorder as recorder;
pub use reel_replayer as replayer;
/// The tape server and recording proxy (`reel serve`): part of the command line.
#[cfg(feature = "cli")]
pub use reel_tape_server as tape_server;
/// The tool kinds (`SimpleTool`, `TypedTool`, `CachedTool`, `ConfirmTool`, MCP tools with
/// the `mcp` feature) and the tree's tool interface, re-exported (the `reel-tools` crate).
pub use reel_tools as tools;

mod failure;

/// Where recordings live (`s3://` URLs, with the `s3` feature) and `--shard i/n`.
pub mod recordings;
pub use failure::Failure;

/// The `reel demo` session (part of the command line: it plays the model with the
/// `testing` feature's scripted server).
#[cfg(feature = "cli")]
pub mod demo;

/// `reel studio`: recordings in a local web page (part of the command line).
#[cfg(feature = "cli")]
pub mod studio;

/// The names most programs need, in one import.
pub mod prelude {
    pub use reel_agents::{AgentMode, Resolver, call_agent};
    pub use reel_flow::{Flow, Guard};
    #[cfg(feature = "mcp")]
    pub use reel_fluent::McpServer;
    pub use reel_fluent::{ContextDelivery, GovernedHandle, Live, RepairConfig, SteeringMode};
    pub use reel_protocol::{
        ApiEndpoint, ClientMessage, CommandEncoder, EventDecoder, FunctionCall, FunctionResponse,
        Platform, ServerMessage, SessionCommand, SessionConfig, SessionEvent, SessionPhase,
        decode_client, decode_server,
    };
}
