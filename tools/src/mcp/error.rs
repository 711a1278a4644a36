//! What can go wrong while connecting to an MCP server and listing its tools.

use std::time::Duration;

/// Why an MCP server's tools could not be had: reported when the session connects, before
/// anything reaches the model. Each variant names the server by its
/// [label](super::McpServer::label) (the command line, or the URL without its query).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process could not be started (no such program, not executable, …).
    #[error("could not start the MCP server `{server}`: {source}")]
    Spawn {
        /// The command line.
        server: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The HTTP client could not be set up (TLS configuration).
    #[error("could not set up an HTTP client for the MCP server `{server}`: {message}")]
    Client {
        /// The URL.
        server: String,
        /// What failed.
        message: String,
    },
    /// The server did not complete the MCP handshake (`initialize`): it exited, answered
    /// something else, or could not be reached.
    #[error("the MCP server `{server}` did not complete the MCP handshake: {message}")]
    Initialize {
        /// The command line or URL.
        server: String,
        /// What failed, in the SDK's words.
        message: String,
    },
    /// Connecting and listing took longer than the server's
    /// [connect timeout](super::McpServer::connect_timeout).
    #[error("the MCP server `{server}` did not list its tools within {after:?}")]
    Timeout {
        /// The command line or URL.
        server: String,
        /// The limit.
        after: Duration,
    },
    /// `tools/list` failed.
    #[error("the MCP server `{server}` could not list its tools: {message}")]
    ListTools {
        /// The command line or URL.
        server: String,
        /// What failed, in the SDK's words.
        message: String,
    },
    /// The allow-list names a tool the server does not offer.
    #[error(
        "the MCP server `{server}` offers no tool named `{name}`; it offers: {}",
        offered.join(", ")
    )]
    NotOffered {
        /// The command line or URL.
        server: String,
        /// The name on the allow-list.
        name: String,
        /// The server's tools, sorted.
        offered: Vec<String>,
    },
    /// A tool's name (with the prefix, if any) is not one the Live API accepts; leave it
    /// out with an allow-list, or choose another prefix.
    #[error(
        "the MCP server `{server}` offers tool `{name}`, which is not a valid Live API function name: {reason}"
    )]
    InvalidToolName {
        /// The command line or URL.
        server: String,
        /// The name as it would be declared.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}
