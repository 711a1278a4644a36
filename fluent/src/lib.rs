//! # reel-fluent
//!
//! `Live::builder()`: one chain configures a whole Gemini Live session — setup, tools,
//! callbacks, phases, recording — and starts it against the API, or runs the very same
//! application against a recording of it.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_tools::TypedTool;
//! use reel_fluent::{Live, LiveBuilder};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct WeatherArgs {
//!     /// The city, e.g. "London".
//!     city: String,
//! }
//!
//! fn assistant() -> LiveBuilder {
//!     Live::builder()
//!         .model("gemini-live-2.5-flash-preview")
//!         .text_only()
//!         .tool(TypedTool::new("get_weather", "The weather in a city.", |args: WeatherArgs, ctx| async move {
//!             ctx.state.set("app:city", &args.city).map_err(|e| ctx.fail(e))?;
//!             Ok(json!({ "city": args.city, "temp_c": 14 }))
//!         }))
//!         .phase("greeting", |p| {
//!             p.instruction("Greet the user and ask which city they want the weather for.")
//!                 .transition("forecast", |state| state.contains("app:city"))
//!         })
//!         .phase("forecast", |p| p.instruction("Give the forecast in one sentence.").terminal())
//!         .on_text_complete(|text| println!("assistant: {text}"))
//! }
//!
//! // Live, recorded:
//! let handle = assistant()
//!     .record_wire("session.wire.jsonl")
//!     .journal("session.journal.jsonl")
//!     .greeting("Hello!")
//!     .connect_from_env()
//!     .await?;
//! handle.send_text("What's the weather in London?")?;
//! // … later:
//! handle.disconnect().await;
//!
//! // Offline, in CI: the same application against the recording.
//! let outcome = assistant().replay("session.wire.jsonl").await?.finish().await;
//! assert!(outcome.divergences.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! - [`Live::builder`] → [`LiveBuilder`]: the chain. Setup (`model`, `voice`,
//!   `instruction`, `text_only`, `transcription`, `vad`, `session_resume`, …), tools
//!   (`tool`, `tools`, `tool_background`, `tool_timeout`), fast-lane callbacks (`on_audio`,
//!   `on_text`, …), control-lane callbacks (`on_connected`, `on_tool_call`,
//!   `on_turn_complete`, … and their `_concurrent` variants), hooks on what the runtime
//!   sends (`before_tool_response`, `on_turn_boundary`, `instruction_template`,
//!   `instruction_amendment`), phases (`phase` with a
//!   [`PhaseBuilder`], `initial_phase`), reactive state (`watch` with a [`LiveWatch`],
//!   `computed`, `when_sustained`, `when_rate`, `when_turns`), turn extractors
//!   (`extract_turns::<T>` and its `_windowed`/`_triggered` forms, `extractor`,
//!   `on_extracted`, `on_extraction_error`), persistence (`persistence`, `session_id`,
//!   `on_resumed`), out-of-band model calls (`llm_cassette`, `llm_cassette_at`,
//!   `llm_cassette_rules`, `llm_interceptor`), recording (`record_wire`, `journal`),
//!   `greeting`, `subscribe`.
//! - Starting: `connect_google_ai`, `connect_vertex`, `connect_from_env`, `connect` (any
//!   endpoint) return the runtime's [`LiveHandle`](reel_actors::LiveHandle);
//!   [`replay`](LiveBuilder::replay) returns a [`ReplayedSession`], which answers the
//!   recording's out-of-band model calls from its cassette and reports any [`LlmDrift`].
//! - Mistakes in the chain are a [`BuildError`], reported before anything connects.
//! - Below the chain is the runtime's
//!   [`LiveSessionBuilder`](reel_actors::LiveSessionBuilder); reach it with
//!   [`customize`](LiveBuilder::customize). The chain's tree-level settings
//!   (`playback_buffer`, `jitter_buffer`, `client_vad`, `extraction_timeout`) are fields of
//!   the one [`SessionOptions`](reel_actors::SessionOptions) it hands the runtime.

// Library code never unwraps: a mistake is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod audio;
mod beside;
mod builder;
mod connect;
mod control;
mod error;
mod extraction;
mod fast;
mod govern;
mod interceptors;
mod llm;
mod llm_drift;
mod mcp;
mod orchestration;
mod persistence;
mod phase;
mod phases;
mod plan;
mod reactive;
mod record_orchestration;
mod recorded_journal;
mod recorded_mcp;
mod recording;
mod replay;
mod replayed;
mod resume_file;
mod setup;
pub mod studio_link;
mod tools;
mod watch;

pub use builder::{Live, LiveBuilder};
pub use error::{BuildError, ConnectError, ReplayError};
pub use extraction::{DEFAULT_EXTRACTION_WINDOW, extractor_name};
pub use govern::{FlowView, GovernedHandle};
pub use llm_drift::LlmDrift;
pub use orchestration::FLOW_ACTIVE_KEY;
pub use phase::PhaseBuilder;
pub use record_orchestration::{
    ExtractRecord, OrchestratedRecord, RecordOrchestration, ResolveArgs,
};
pub use replay::{TapeSource, default_replay_options};
pub use replayed::{ReplayOutcome, ReplayedSession};
pub use resume_file::{RecordedResume, seed_resumed_from};
pub use studio_link::{STUDIO_TOKEN_ENV, StudioLink};
pub use watch::LiveWatch;

/// Conversation control for [`LiveBuilder::steering_mode`], [`LiveBuilder::context_delivery`],
/// [`LiveBuilder::phase_defaults`] and [`LiveBuilder::repair`].
pub use reel_actors::conversation::{ContextDelivery, PhaseDefaults, RepairConfig, SteeringMode};

/// MCP servers for [`LiveBuilder::mcp`] (the `mcp` feature): `reel_tools::mcp`.
#[cfg(feature = "mcp")]
pub use reel_tools::mcp::{McpError, McpServer, McpTool, McpToolset};
