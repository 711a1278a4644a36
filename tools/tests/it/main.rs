//! The crate's integration tests, gathered into one binary (one link, one process): each
//! file beside this one holds one tool kind's tests; the fixtures they share with the
//! tree's engine tests are declared here once. (The MCP tests run sessions with real MCP
//! servers through the chain: `fluent/tests/it/mcp_http.rs`, `mcp_stdio.rs`.)

#[allow(dead_code)]
#[path = "../support/tool_calls.rs"]
mod tool_calls;

mod simple_tool;
mod typed_tool;
