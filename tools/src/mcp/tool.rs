//! [`McpTool`]: one tool of an MCP server, as a reel [`ToolFunction`].

use std::fmt;
use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;

use super::answer;
use crate::{ToolContext, ToolError, ToolFunction};

/// The connection to one server, shared by its tools: the server is gone (the process
/// killed, the HTTP session closed) when the last of them is dropped.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, ()>,
    /// The server's [label](super::McpServer::label).
    pub(crate) server: String,
}

/// A tool of an MCP server. It runs like any other tool: from the control lane, in its
/// own task, under the dispatcher's timeout, cancellation and concurrency limits. A call is
/// one `tools/call` request; when the call is cancelled (`toolCallCancellation`, a
/// barge-in with `BargeIn::Cancel`, the session's end) or times out, the runtime drops
/// the request, and the MCP SDK tells the server with `notifications/cancelled`. No
/// response is sent for a cancelled call; a timed-out one is answered with the timeout
/// error, as for a native tool.
///
/// Results and errors reach the model as [the `answer` rules](super) say; a server that
/// died mid-call gives [`ToolError::Unreachable`], and the session goes on.
#[derive(Clone)]
pub struct McpTool {
    /// The declared name (prefix + the server's name for it).
    name: String,
    /// The name on the server.
    remote: String,
    description: String,
    parameters: Option<Value>,
    /// The server's input schema, as it sent it (JSON Schema).
    input_schema: Value,
    connection: Arc<Connection>,
}

impl McpTool {
    pub(crate) fn new(
        name: String,
        remote: String,
        description: String,
        input_schema: Value,
        connection: Arc<Connection>,
    ) -> Self {
        let parameters = super::schema::parameters(&input_schema);
        McpTool {
            name,
            remote,
            description,
            parameters,
            input_schema,
            connection,
        }
    }

    /// The tool's name on its server (the declared name without the prefix).
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The input schema as the server sent it (JSON Schema); the declaration carries it
    /// rewritten for the Live API ([`live_schema`](crate::live_schema)).
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The server's [label](super::McpServer::label).
    pub fn server(&self) -> &str {
        &self.connection.server
    }
}

impl ToolFunction for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Option<Value> {
        self.parameters.clone()
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let name = self.name.clone();
        let mut params = CallToolRequestParams::new(self.remote.clone());
        match args {
            Value::Object(arguments) => params = params.with_arguments(arguments),
            Value::Null => {}
            other => {
                return futures_util::future::ready(Err(ToolError::InvalidArgs {
                    tool: name,
                    message: format!("arguments must be an object, not {other}"),
                }))
                .boxed();
            }
        }
        let connection = Arc::clone(&self.connection);
        async move {
            // Dropping this future (a cancellation, a timeout) drops the request, and the
            // SDK sends `notifications/cancelled` for it.
            match connection.service.peer().call_tool(params).await {
                Ok(result) => answer::from_result(&name, result),
                Err(error) => Err(answer::from_service_error(&name, &connection.server, error)),
            }
        }
        .boxed()
    }
}

impl fmt::Debug for McpTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("remote", &self.remote)
            .field("server", &self.connection.server)
            .finish_non_exhaustive()
    }
}
