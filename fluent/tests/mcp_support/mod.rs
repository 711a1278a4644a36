//! Shared by the MCP tests: a small MCP server written here with rmcp, served over
//! streamable HTTP on a free loopback port, and a session connected on real time (MCP
//! servers are real processes and sockets; paused time would race them).

#![allow(dead_code)] // each test file uses its own subset

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use reel_actors::LiveHandle;
use reel_actors::testing::{ClientFrame, ScriptedServer, ServerConn};
use reel_fluent::LiveBuilder;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

/// What the test server saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A `tools/call` of this tool with these arguments.
    Called(&'static str, Value),
    /// The call of this tool was cancelled by the client.
    Cancelled(&'static str),
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct CityArgs {
    /// The city, e.g. "London".
    pub city: String,
}

/// The test's MCP server: `add` (text), `lookup` (structured content), `fail` (isError)
/// and `wait` (runs until the client cancels it).
#[derive(Clone)]
pub struct Calculator {
    seen: mpsc::UnboundedSender<Seen>,
    #[allow(dead_code)] // read by #[tool_handler]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Calculator {
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        let _ = self.seen.send(Seen::Called("add", json!({"a": a, "b": b})));
        (a + b).to_string()
    }

    #[tool(description = "The weather in a city.")]
    fn lookup(&self, Parameters(CityArgs { city }): Parameters<CityArgs>) -> CallToolResult {
        let _ = self
            .seen
            .send(Seen::Called("lookup", json!({"city": city})));
        CallToolResult::structured(json!({"city": city, "temp_c": 21}))
    }

    #[tool(description = "Always fails.")]
    fn fail(&self) -> CallToolResult {
        let _ = self.seen.send(Seen::Called("fail", json!({})));
        CallToolResult::error(vec![ContentBlock::text("no table free at 19:00")])
    }

    #[tool(description = "Runs until cancelled.")]
    async fn wait(&self, context: RequestContext<RoleServer>) -> String {
        let _ = self.seen.send(Seen::Called("wait", json!({})));
        context.ct.cancelled().await;
        let _ = self.seen.send(Seen::Cancelled("wait"));
        "cancelled".to_owned()
    }
}

#[tool_handler]
impl ServerHandler for Calculator {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The test server on a free loopback port.
pub struct HttpMcp {
    pub url: String,
    seen: Mutex<mpsc::UnboundedReceiver<Seen>>,
    connections: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl HttpMcp {
    /// Serves [`Calculator`] over streamable HTTP at `http://127.0.0.1:PORT/mcp`.
    pub async fn start() -> HttpMcp {
        let (seen_tx, seen) = mpsc::unbounded_channel();
        let calculator = Calculator {
            seen: seen_tx,
            tool_router: Calculator::tool_router(),
        };
        let service = StreamableHttpService::new(
            move || Ok(calculator.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let service = TowerToHyperService::new(service);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        HttpMcp {
            url,
            seen: Mutex::new(seen),
            connections,
            accept,
        }
    }

    /// The next thing the server saw.
    pub async fn next(&self) -> Seen {
        self.seen.lock().await.recv().await.unwrap()
    }

    /// What the server saw and was not yet taken, if anything (without waiting).
    pub async fn try_next(&self) -> Option<Seen> {
        self.seen.lock().await.try_recv().ok()
    }

    /// How many TCP connections the server has accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Stops accepting: the port is closed from now on.
    pub fn stop(&self) {
        self.accept.abort();
    }
}

/// Connects `builder` to `server`, whose side reads the setup frame and accepts it: the
/// live session, the server's connection and the setup frame as sent.
pub async fn accepted(
    builder: LiveBuilder,
    server: &mut ScriptedServer,
) -> (LiveHandle, ServerConn, ClientFrame) {
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (conn, setup)) = tokio::join!(builder.connect(endpoint), script);
    (handle.unwrap(), conn, setup)
}

/// A `toolCall` frame.
pub fn tool_call(calls: Value) -> Value {
    json!({"toolCall": {"functionCalls": calls}})
}

/// A `toolResponse` frame.
pub fn tool_response(responses: Value) -> Value {
    json!({"toolResponse": {"functionResponses": responses}})
}
