//! MCP servers in the chain: `.mcp(McpServer::stdio(..))`, `.mcp(McpServer::http(..))`
//! (the `mcp` feature).
//!
//! A live session connects to every server when it connects (before the setup is sent, so
//! the setup declares their tools), in chain order, and registers their tools after the
//! chain's own; a name taken twice — by a native tool or another server — is a
//! [`BuildError::Tool`](crate::BuildError::Tool) naming the server. A replay never
//! connects: see [`crate::recorded_mcp`].

use std::sync::Arc;

use reel_tools::ToolFunction;

/// Tools found when the session starts (an MCP server's, or their recorded stand-ins in a
/// replay), registered after the chain's own tools and before its settings.
pub(crate) struct Discovered {
    /// The chain call they come from, for errors: `mcp(python3 server.py)`.
    pub(crate) call: String,
    pub(crate) tools: Vec<Arc<dyn ToolFunction>>,
}

#[cfg(feature = "mcp")]
mod servers {
    use reel_tools::mcp::{McpError, McpServer};

    use super::Discovered;
    use crate::builder::LiveBuilder;

    /// The MCP part of a [`LiveBuilder`]: the servers, in chain order.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct McpPart {
        servers: Vec<McpServer>,
    }

    impl McpPart {
        /// Whether the chain names no MCP server.
        pub(crate) fn is_empty(&self) -> bool {
            self.servers.is_empty()
        }

        /// Whether some server of the chain may declare a tool named `name` (by its prefix
        /// and allow-list: see [`McpServer::may_declare`]).
        pub(crate) fn may_declare(&self, name: &str) -> bool {
            self.servers.iter().any(|server| server.may_declare(name))
        }

        /// Connects to every server, in chain order, and takes their tools. The first
        /// server that fails ends it (the servers already connected are dropped, their
        /// processes killed).
        pub(crate) async fn discover(&self) -> Result<Vec<Discovered>, McpError> {
            let mut discovered = Vec::new();
            for server in &self.servers {
                let toolset = server.connect().await?;
                discovered.push(Discovered {
                    call: format!("mcp({})", toolset.server()),
                    tools: toolset.into_tools(),
                });
            }
            Ok(discovered)
        }
    }

    impl LiveBuilder {
        /// Offers the model the tools of an MCP server: a command run as a child process
        /// ([`McpServer::stdio`]) or a URL ([`McpServer::http`]), optionally only some of
        /// them ([`McpServer::allow`]) and under a prefix ([`McpServer::prefix`]).
        ///
        /// The server is started and its tools listed when the session connects; the setup
        /// declares them beside the chain's own tools (sorted by name, as always). A server
        /// that cannot be started or listed fails the connect
        /// ([`ConnectError::Mcp`](crate::ConnectError::Mcp)); a tool name taken twice is a
        /// [`BuildError::Tool`](crate::BuildError::Tool). Calls run like native tools'
        /// (timeouts, cancellation, limits; `tool_timeout` and the other settings may name
        /// MCP tools), and the server lives as long as the session.
        ///
        /// [`validate`](LiveBuilder::validate) and
        /// [`session_config`](LiveBuilder::session_config) do not connect: they check and
        /// show the chain without its MCP tools, and leave settings naming tools they do
        /// not know to the connect. A [`replay`](LiveBuilder::replay) never starts the
        /// server: the MCP tools are declared as the recorded setup declared them and
        /// answered with the recorded responses.
        ///
        /// ```
        /// use reel_tools::mcp::McpServer;
        /// use reel_fluent::Live;
        ///
        /// let builder = Live::builder()
        ///     .text_only()
        ///     .mcp(McpServer::stdio("python3", ["-m", "mcp_server_time"]).allow(["get_current_time"]))
        ///     .mcp(McpServer::http("http://127.0.0.1:8931/mcp").prefix("browser_"));
        /// assert!(builder.validate().is_ok());
        /// ```
        pub fn mcp(mut self, server: McpServer) -> Self {
            self.mcp.servers.push(server);
            self
        }
    }
}

#[cfg(not(feature = "mcp"))]
mod servers {
    /// Without the `mcp` feature the chain has no MCP servers.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct McpPart;

    impl McpPart {
        pub(crate) fn is_empty(&self) -> bool {
            true
        }

        pub(crate) fn may_declare(&self, _name: &str) -> bool {
            false
        }
    }
}

pub(crate) use servers::McpPart;
