//! [`McpToolset`]: the tools taken from one connected MCP server.

use std::sync::Arc;

use super::McpTool;
use crate::{DispatchError, ToolDispatcher, ToolFunction};

/// The tools of one connected MCP server ([`McpServer::connect`](super::McpServer::connect)),
/// sorted by declared name. The server stays connected (its process running) while any of
/// them is alive; drop the last one inside the tokio runtime (the SDK kills a stdio
/// server's process on a task of its own).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use reel_tools::ToolDispatcher;
/// use reel_tools::mcp::McpServer;
///
/// let toolset = McpServer::stdio("python3", ["-m", "mcp_server_time"]).connect().await?;
/// assert_eq!(toolset.names(), ["convert_time", "get_current_time"]);
/// let mut tools = ToolDispatcher::new();
/// toolset.register_into(&mut tools)?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct McpToolset {
    pub(crate) server: String,
    pub(crate) tools: Vec<McpTool>,
}

impl McpToolset {
    /// The server's [label](super::McpServer::label).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tools, sorted by declared name.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The declared names (prefix included), sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }

    /// The tools as the dispatcher holds them.
    pub fn into_tools(self) -> Vec<Arc<dyn ToolFunction>> {
        self.tools
            .into_iter()
            .map(|tool| Arc::new(tool) as Arc<dyn ToolFunction>)
            .collect()
    }

    /// Registers every tool in `dispatcher` (standard mode, the dispatcher's timeout). A
    /// name already registered is [`DispatchError::Duplicate`]; the tools registered before
    /// it stay.
    pub fn register_into(&self, dispatcher: &mut ToolDispatcher) -> Result<(), DispatchError> {
        for tool in &self.tools {
            dispatcher.register(tool.clone())?;
        }
        Ok(())
    }
}
