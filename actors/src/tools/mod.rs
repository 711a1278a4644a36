//! Tools: the interface a tool implements and the engine that runs it, answers it on the
//! wire and settles its state writes. The tool kinds — `SimpleTool`, `TypedTool`,
//! `CachedTool`, `ConfirmTool`, MCP tools — live above the tree in `reel-tools`, which
//! re-exports all of this module: `reel_tools::X` is the one path a program needs
//! (decision 0048).
//!
//! - [`ToolFunction`] is what a tool is; [`StreamingTool`] sends results while it runs
//!   (`willContinue` responses); an [`InputStreamingTool`] also receives the user's live
//!   input meanwhile ([`ToolInput`]).
//! - [`ToolDispatcher`] holds a session's tools by name (sorted: the setup frame's bytes do
//!   not depend on registration or hash order), their timeouts (30 s by default),
//!   execution modes and limits, and produces their
//!   [`declarations`](ToolDispatcher::declarations).
//! - [`run_call`] runs one [`FunctionCall`](reel_protocol::FunctionCall): phase filter,
//!   confirmation ([`ConfirmationProvider`]), timeout, cancellation, panics caught; it
//!   yields a [`ToolOutcome`].
//! - [`ToolOutcome::to_response`] and [`running_ack`] produce the
//!   [`FunctionResponse`](reel_protocol::FunctionResponse)s; background tools are shaped by
//!   a [`ResultFormatter`] ([`DefaultResultFormatter`] unless the mode names another).
//! - Each call gets a [`ToolContext`]: its writes to session state are buffered in a
//!   [`DeltaState`](crate::state::DeltaState) and settled ([`ToolOutcome::settle`]) when
//!   the response is sent: committed on success, rolled back on failure.
//!
//! ```no_run
//! # async fn example(call: reel_protocol::FunctionCall, state: reel_actors::state::State) -> Result<(), Box<dyn std::error::Error>> {
//! use reel_actors::tools::{ToolContext, ToolDispatcher, run_call};
//! use reel_tools::TypedTool;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs {
//!     /// The city to look up.
//!     city: String,
//! }
//!
//! let mut tools = ToolDispatcher::new();
//! tools.register(TypedTool::new("get_weather", "The weather in a city.", |args: WeatherArgs, ctx: ToolContext| async move {
//!     ctx.state.set("app:last_city", &args.city).map_err(|e| ctx.fail(e))?;
//!     Ok(json!({ "city": args.city, "celsius": 21 }))
//! }))?;
//!
//! // For each call in a `toolCall` frame:
//! let delta = state.with_delta();
//! let ctx = ToolContext::for_call(&call, delta.clone(), CancellationToken::new());
//! let outcome = run_call(&tools, &call, ctx, None).await;
//! let response = outcome.to_response(&tools.mode(&outcome.name));
//! // … send `response` in a toolResponse frame, then:
//! outcome.settle(&delta).await?;
//! # let _ = response;
//! # Ok(())
//! # }
//! ```

mod barge_in;
mod confirm;
mod context;
mod dispatcher;
mod error;
mod execution;
mod formatter;
mod function;
mod input_streaming;
mod mode;
mod name;
mod response;
mod streaming;
mod task;
pub mod tool_input;

pub use barge_in::BargeIn;
pub use confirm::{ConfirmationProvider, ConfirmationRequest, ToolConfirmation, recorded_decision};
pub use context::ToolContext;
pub use dispatcher::{DEFAULT_TOOL_TIMEOUT, ToolDispatcher};
pub use error::{DispatchError, ToolError};
pub use execution::{PhaseToolFilter, ToolOutcome, acquire_limits, run_call, run_call_holding};
pub use formatter::{DefaultResultFormatter, ResultFormatter};
pub use function::ToolFunction;
pub use input_streaming::{InputStreaming, InputStreamingTool};
pub use mode::ToolExecutionMode;
pub use name::{MAX_NAME_LEN, validate_name};
pub use response::running_ack;
pub use streaming::{Streaming, StreamingTool, ToolStream};
pub use tool_input::{DEFAULT_INPUT_CAPACITY, InputEvent, StampedInput, ToolInput, ToolInputs};
