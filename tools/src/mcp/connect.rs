//! Connecting to an MCP server: start it or reach it, the MCP handshake, `tools/list`.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::Tool;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use super::server::Transport;
use super::tool::Connection;
use super::traffic::Tapped;
use super::{McpError, McpServer, McpTool, McpToolset};
use crate::validate_name;

impl McpServer {
    /// Starts (stdio) or reaches (HTTP) the server, completes the MCP handshake and lists
    /// its tools, keeping those on the [allow-list](McpServer::allow) (all without one),
    /// each declared under the [prefix](McpServer::prefix) with the server's description
    /// and input schema. All of it within the [connect timeout](McpServer::connect_timeout).
    ///
    /// Every failure names the server ([`McpError`]); a server that cannot be started,
    /// reached or listed fails here, never later in the session.
    pub async fn connect(&self) -> Result<McpToolset, McpError> {
        let server = self.label();
        let limit = self.connect_timeout;
        let connecting = async {
            let service = self.start(&server).await?;
            let listed =
                service
                    .peer()
                    .list_all_tools()
                    .await
                    .map_err(|error| McpError::ListTools {
                        server: server.clone(),
                        message: error.to_string(),
                    })?;
            Ok::<_, McpError>((service, listed))
        };
        let (service, listed) =
            tokio::time::timeout(limit, connecting)
                .await
                .map_err(|_elapsed| McpError::Timeout {
                    server: server.clone(),
                    after: limit,
                })??;
        let connection = Arc::new(Connection {
            service,
            server: server.clone(),
        });
        let tools = self.take(listed, &connection)?;
        Ok(McpToolset { server, tools })
    }

    /// The running client: transport up and handshake done.
    async fn start(&self, server: &str) -> Result<RunningService<RoleClient, ()>, McpError> {
        let initialize = |error: rmcp::service::ClientInitializeError| McpError::Initialize {
            server: server.to_owned(),
            message: error.to_string(),
        };
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                current_dir,
            } => {
                let mut process = tokio::process::Command::new(command);
                process
                    .args(args)
                    .envs(env.iter().cloned())
                    .kill_on_drop(true);
                if let Some(dir) = current_dir {
                    process.current_dir(dir);
                }
                let child = TokioChildProcess::new(process).map_err(|source| McpError::Spawn {
                    server: server.to_owned(),
                    source,
                })?;
                match &self.observer {
                    Some(observer) => ().serve(Tapped::new(child, observer.clone())).await,
                    None => ().serve(child).await,
                }
                .map_err(initialize)
            }
            Transport::Http { url, bearer } => {
                let client = http_client().map_err(|message| McpError::Client {
                    server: server.to_owned(),
                    message,
                })?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = bearer {
                    config = config.auth_header(token.expose().to_owned());
                }
                let transport = StreamableHttpClientTransport::with_client(client, config);
                match &self.observer {
                    Some(observer) => ().serve(Tapped::new(transport, observer.clone())).await,
                    None => ().serve(transport).await,
                }
                .map_err(initialize)
            }
        }
    }

    /// The listed tools this server config takes, sorted by declared name.
    fn take(
        &self,
        listed: Vec<Tool>,
        connection: &Arc<Connection>,
    ) -> Result<Vec<McpTool>, McpError> {
        let server = &connection.server;
        if let Some(allow) = &self.allow {
            for name in allow {
                if !listed.iter().any(|tool| tool.name == name.as_str()) {
                    let mut offered: Vec<String> =
                        listed.iter().map(|tool| tool.name.to_string()).collect();
                    offered.sort();
                    return Err(McpError::NotOffered {
                        server: server.clone(),
                        name: name.clone(),
                        offered,
                    });
                }
            }
        }
        let mut tools = Vec::new();
        for tool in listed {
            let remote = tool.name.to_string();
            if self
                .allow
                .as_ref()
                .is_some_and(|allow| !allow.contains(&remote))
            {
                continue;
            }
            let name = format!("{}{remote}", self.prefix);
            if let Err(reason) = validate_name(&name) {
                return Err(McpError::InvalidToolName {
                    server: server.clone(),
                    name,
                    reason,
                });
            }
            let description = tool
                .description
                .as_deref()
                .or(tool.title.as_deref())
                .unwrap_or_default()
                .to_owned();
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            tools.push(McpTool::new(
                name,
                remote,
                description,
                schema,
                Arc::clone(connection),
            ));
        }
        tools.sort_by(|a, b| crate::ToolFunction::name(a).cmp(crate::ToolFunction::name(b)));
        Ok(tools)
    }
}

/// An HTTP client on rustls with the ring provider and the webpki roots (reqwest is built
/// without a provider of its own, so no aws-lc).
fn http_client() -> Result<reqwest::Client, String> {
    let roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| error.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|error| error.to_string())
}
