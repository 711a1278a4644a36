//! Tools from [Model Context Protocol](https://modelcontextprotocol.io) servers (the `mcp`
//! feature), through the official Rust SDK, `rmcp`.
//!
//! An [`McpServer`] says where a server is: a command started as a child process
//! ([`McpServer::stdio`]) or a URL speaking streamable HTTP ([`McpServer::http`]), with an
//! optional allow-list and name prefix. [`McpServer::connect`] starts it, lists its tools
//! and gives an [`McpToolset`]: one [`McpTool`] per tool, each a [`ToolFunction`](crate::ToolFunction)
//! whose declaration carries the server's name (prefixed), description and input schema
//! (rewritten for the Live API by [`live_schema`](crate::live_schema)).
//!
//! Registered in a [`ToolDispatcher`](crate::ToolDispatcher), an MCP tool runs like
//! a native one: from the control lane, under the same timeout, cancellation, concurrency
//! and barge-in rules; a cancelled or timed-out call drops its request and the SDK sends
//! `notifications/cancelled`. What the model reads:
//!
//! | the server answers | the response |
//! |---|---|
//! | `structuredContent` (an object) | that object |
//! | text content | `{"result": "<the texts, one per line>"}` |
//! | other content (images, resources) | `{"content": [<the blocks>]}` |
//! | `isError: true` | ``{"error": "tool `x` failed: <the text>"}`` ([`ToolError::ExecutionFailed`](crate::ToolError::ExecutionFailed)) |
//! | a JSON-RPC error | the same, with the error's message |
//! | nothing: the connection closed, the process died | ``{"error": "tool `x` could not be reached: …"}`` ([`ToolError::Unreachable`](crate::ToolError::Unreachable)) |
//!
//! [`McpServer::on_message`] watches a connection: every JSON-RPC message as it went over
//! the transport ([`McpMessage`]), then its close.
//!
//! A replay never connects: `Live::builder().replay(..)` takes the MCP tools'
//! declarations from the recorded setup and their answers from the recorded tool
//! responses (see `reel_fluent`).

mod answer;
mod connect;
mod error;
mod schema;
mod server;
mod tool;
mod toolset;
mod traffic;

pub use error::McpError;
pub use server::{DEFAULT_CONNECT_TIMEOUT, McpServer};
pub use tool::McpTool;
pub use toolset::McpToolset;
pub use traffic::McpMessage;
