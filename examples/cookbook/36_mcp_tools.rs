//! 36 — MCP tools (Fly): a live session whose model calls the tools of two Model Context
//! Protocol servers this example starts itself, and the JSON-RPC 2.0 lifecycle of each as
//! it went over the wire. The warehouse is a child process spoken to over stdio
//! (`McpServer::stdio` in `Live::builder().mcp(..)`: started, listed and ended with the
//! session; a replay never starts it). The shipping desk is served over MCP's streamable
//! HTTP on loopback (`McpServer::http`, connected by the example and handed to the session
//! as `T::mcp(..)` tools, which run like any other). Both are written with the official SDK's
//! server side (rmcp); the warehouse is this very program, run with `--mcp-stdio-server`.
//!
//! ```text
//! cargo run --example 36_mcp_tools                    # the bundled tape, offline
//! GEMINI_API_KEY=… cargo run --example 36_mcp_tools -- --live
//! GEMINI_API_KEY=… cargo run --example 36_mcp_tools -- --live --record mcp.wire.jsonl
//! ```
//!
//! Offline (the default), the model is the bundled tape
//! (`assets/cookbook/36_mcp_tools.wire.jsonl`) served on loopback by the tape server, and
//! the MCP servers are real: every tool call the tape's model makes goes to them. The tape
//! is then replayed through the session tree with nothing listening: the warehouse's tools
//! answered from the recording (its process is not started), the shipping tools called
//! again, as native tools are. The tape was recorded by reel from this session talking to a
//! scripted model (`tests/it/cookbook/ex36_mcp_tools.rs` holds the script and regenerates
//! it byte for byte). With `--live` the model decides which tools to call.
//!
//! The seed's `McpConnectionParams::Stdio` is reel's `McpServer::stdio`; its `Sse` is the
//! HTTP+SSE transport MCP has since replaced with streamable HTTP, which is what
//! `McpServer::http` speaks (rmcp's client); there is no separate SSE transport. The seed's
//! `McpSessionManager` + `McpToolset` are `McpServer::connect()` giving an `McpToolset`; the
//! lifecycle shown here is `McpServer::on_message`. The HTTP server takes only loopback
//! `Host`s (rmcp's default) and refuses any browser `Origin` but its own; it serves
//! quotes, nothing that writes (the warehouse, which does, is reachable only by its parent).

#[allow(dead_code)] // the cookbook's shared part; a live example uses its `Target`
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the tests use parts a run from the command line does not
#[path = "support/live.rs"]
pub mod live;

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cookbook::Target;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use reel::compose::T;
use reel::fluent::{Live, LiveBuilder};
use reel::protocol::ApiEndpoint;
use reel::recorder::WireEntry;
use reel::tools::mcp::{McpMessage, McpServer};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The example's name: its tape is `assets/cookbook/36_mcp_tools.wire.jsonl`.
pub const NAME: &str = "36_mcp_tools";
/// The Live model.
pub const MODEL: &str = "gemini-live-2.5-flash-preview";
/// The argument that makes this program the warehouse's MCP server on stdio.
pub const SERVE_STDIO: &str = "--mcp-stdio-server";
/// How long an MCP connection may take to close once the session ended.
const CLOSE_LIMIT: Duration = Duration::from_secs(10);

/// What the user types, turn by turn.
pub const USER: [&str; 3] = [
    "Do you have blue mugs in stock?",
    "Reserve three for me.",
    "Then reserve both, and quote shipping to Lyon.",
];

// ── The MCP servers (rmcp's server side) ──

/// `warehouse_stock`'s arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Sku {
    /// The item, e.g. "blue-mug".
    pub sku: String,
}

/// `warehouse_reserve`'s arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Reserve {
    /// The item, e.g. "blue-mug".
    pub sku: String,
    /// How many to reserve.
    pub qty: u32,
}

/// `shipping_quote`'s arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct City {
    /// Where the parcel goes, e.g. "Lyon".
    pub city: String,
}

/// The warehouse: what is on hand, and reservations taken from it.
#[derive(Clone)]
pub struct Warehouse {
    on_hand: Arc<Mutex<BTreeMap<String, u32>>>,
    #[allow(dead_code)] // read by #[tool_handler]
    tool_router: ToolRouter<Self>,
}

impl Default for Warehouse {
    /// Two blue mugs and five green bowls on hand.
    fn default() -> Warehouse {
        let on_hand =
            [("blue-mug", 2), ("green-bowl", 5)].map(|(sku, count)| (sku.to_owned(), count));
        Warehouse {
            on_hand: Arc::new(Mutex::new(BTreeMap::from(on_hand))),
            tool_router: Warehouse::tool_router(),
        }
    }
}

#[tool_router]
impl Warehouse {
    fn count(&self, sku: &str) -> u32 {
        // A poisoned map only means a panicking thread held it; the counts are whole.
        let on_hand = self.on_hand.lock().unwrap_or_else(|p| p.into_inner());
        on_hand.get(sku).copied().unwrap_or(0)
    }

    #[tool(description = "How many of an item are on hand.")]
    fn stock(&self, Parameters(Sku { sku }): Parameters<Sku>) -> CallToolResult {
        let on_hand = self.count(&sku);
        CallToolResult::structured(json!({"sku": sku, "on_hand": on_hand}))
    }

    #[tool(description = "Reserves some of an item for the customer.")]
    fn reserve(&self, Parameters(Reserve { sku, qty }): Parameters<Reserve>) -> CallToolResult {
        let mut on_hand = self.on_hand.lock().unwrap_or_else(|p| p.into_inner());
        let count = on_hand.entry(sku.clone()).or_insert(0);
        if qty > *count {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "only {count} {sku} on hand"
            ))]);
        }
        *count -= qty;
        CallToolResult::success(vec![ContentBlock::text(format!(
            "reserved {qty} {sku}, {count} left"
        ))])
    }
}

#[tool_handler]
impl ServerHandler for Warehouse {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("warehouse", "1.0.0"))
    }
}

/// The shipping desk: quotes by city.
#[derive(Clone)]
pub struct Shipping {
    #[allow(dead_code)] // read by #[tool_handler]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Shipping {
    #[tool(description = "How long shipping to a city takes and what it costs.")]
    fn quote(&self, Parameters(City { city }): Parameters<City>) -> String {
        let days = 1 + city.len() % 3;
        format!("{city}: {days} days, 4.50 EUR")
    }
}

#[tool_handler]
impl ServerHandler for Shipping {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("shipping", "1.0.0"))
    }
}

/// The warehouse on this process's stdin and stdout, until the client closes them.
async fn serve_stdio() -> Result<(), Box<dyn Error>> {
    let service = Warehouse::default().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// The shipping desk over streamable HTTP on a free loopback port.
pub struct ShippingServer {
    /// Where it is: `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    accept: JoinHandle<()>,
}

impl ShippingServer {
    /// Starts it.
    pub async fn start() -> Result<ShippingServer, Box<dyn Error>> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let origin = format!("http://{}", listener.local_addr()?);
        let service = StreamableHttpService::new(
            || {
                Ok(Shipping {
                    tool_router: Shipping::tool_router(),
                })
            },
            Arc::new(LocalSessionManager::default()),
            // Hosts: loopback only (rmcp's default). Origins: its own only.
            StreamableHttpServerConfig::default().with_allowed_origins([origin.clone()]),
        );
        let service = TowerToHyperService::new(service);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(ShippingServer {
            url: format!("{origin}/mcp"),
            accept,
        })
    }
}

impl Drop for ShippingServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

// ── Watching the JSON-RPC lifecycle ──

/// Every JSON-RPC message of one server's connection, and whether it closed.
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    messages: Arc<Mutex<Vec<McpMessage>>>,
    closed: Arc<Notify>,
}

impl Traffic {
    /// `server`, telling this traffic of every message.
    pub fn watch(&self, server: McpServer) -> McpServer {
        let traffic = self.clone();
        server.on_message(move |message| {
            traffic
                .messages
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(message.clone());
            if *message == McpMessage::Closed {
                traffic.closed.notify_one();
            }
        })
    }

    /// Waits until the connection closed.
    pub async fn closed(&self) -> Result<(), Box<dyn Error>> {
        tokio::time::timeout(CLOSE_LIMIT, self.closed.notified())
            .await
            .map_err(|_| "an MCP connection was still open after the session ended".into())
    }

    /// How many `tools/call` requests were sent.
    pub fn calls(&self) -> usize {
        let messages = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        messages
            .iter()
            .filter(|m| matches!(m, McpMessage::Sent(json) if json["method"] == "tools/call"))
            .count()
    }

    /// The lifecycle, one line per message.
    pub fn lines(&self) -> Vec<String> {
        let messages = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        messages.iter().map(describe).collect()
    }
}

/// One JSON-RPC message in a line: `→` sent, `←` received.
pub fn describe(message: &McpMessage) -> String {
    let (arrow, json) = match message {
        McpMessage::Sent(json) => ("→", json),
        McpMessage::Received(json) => ("←", json),
        McpMessage::Closed => return "× closed".to_owned(),
    };
    let id = match &json["id"] {
        Value::Null => String::new(),
        id => format!(" #{id}"),
    };
    let params = &json["params"];
    if let Some(method) = json["method"].as_str() {
        let detail = match method {
            "initialize" => format!(" (protocol {})", text(&params["protocolVersion"])),
            "tools/call" => format!(" {}({})", text(&params["name"]), params["arguments"]),
            _ => String::new(),
        };
        return format!("{arrow} {method}{id}{detail}");
    }
    if let Some(error) = json.get("error") {
        return format!(
            "{arrow}{id} error {}: {}",
            error["code"],
            text(&error["message"])
        );
    }
    let result = &json["result"];
    let detail = if let Some(info) = result.get("serverInfo") {
        format!(
            "{} {}, protocol {}",
            text(&info["name"]),
            text(&info["version"]),
            text(&result["protocolVersion"])
        )
    } else if let Some(tools) = result["tools"].as_array() {
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        format!("tools {}", names.join(", "))
    } else if let Some(structured) = result.get("structuredContent") {
        format!("structuredContent {structured}")
    } else if let Some(content) = result["content"].as_array() {
        let texts: Vec<&str> = content.iter().filter_map(|c| c["text"].as_str()).collect();
        let error = if result["isError"] == json!(true) {
            " (isError)"
        } else {
            ""
        };
        format!("text {:?}{error}", texts.join("\n"))
    } else {
        result.to_string()
    };
    format!("{arrow}{id} result: {detail}")
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

// ── The session ──

/// What went over the two servers' connections in one run.
#[derive(Debug, Clone, Default)]
pub struct Watched {
    /// The warehouse's connection (stdio).
    pub warehouse: Traffic,
    /// The shipping desk's connection (HTTP).
    pub shipping: Traffic,
}

impl Watched {
    /// Waits until both connections closed (the session's tools dropped).
    pub async fn closed(&self) -> Result<(), Box<dyn Error>> {
        self.warehouse.closed().await?;
        self.shipping.closed().await
    }
}

/// The two servers, and what went over their connections: in the session, and in the
/// replay of its tape.
pub struct Servers {
    program: PathBuf,
    shipping: ShippingServer,
    /// The session's connections.
    pub session: Watched,
    /// The replay's connections.
    pub replay: Watched,
}

impl Servers {
    /// Starts the shipping desk; the warehouse is `program SERVE_STDIO`, started when a
    /// session connects.
    pub async fn start(program: PathBuf) -> Result<Servers, Box<dyn Error>> {
        Ok(Servers {
            program,
            shipping: ShippingServer::start().await?,
            session: Watched::default(),
            replay: Watched::default(),
        })
    }

    /// The session: the warehouse through `.mcp(..)` (this program on stdio, its tools as
    /// `warehouse_…`), the shipping desk connected here and given as `T::mcp(..)` (its
    /// tools as `shipping_…`); both connections watched by `watched`.
    pub async fn assistant(&self, watched: &Watched) -> Result<LiveBuilder, Box<dyn Error>> {
        let warehouse = McpServer::stdio(self.program.display().to_string(), [SERVE_STDIO])
            .prefix("warehouse_");
        let shipping = McpServer::http(&self.shipping.url).prefix("shipping_");
        let shipping = watched.shipping.watch(shipping).connect().await?;
        Ok(Live::builder()
            .model(MODEL)
            .text_only()
            .instruction("You are a shop's assistant. Use the tools; never guess.")
            .mcp(watched.warehouse.watch(warehouse))
            .tools(T::mcp(shipping.into_tools()).dispatcher()?))
    }
}

/// One session against `endpoint` saying the user's lines: its story
/// ([`live::tool_session`]) and wire log (recorded to `wire_file` when given).
pub async fn session(
    agent: LiveBuilder,
    endpoint: ApiEndpoint,
    wire_file: Option<&Path>,
) -> Result<(Vec<String>, Vec<WireEntry>), Box<dyn Error>> {
    live::tool_session::session(agent, endpoint, wire_file, &USER).await
}

/// What the example prints for a session's `story` and its servers' lifecycles.
pub fn report(story: &[String], servers: &Servers) -> String {
    let mut out = String::from("── the session ──\n");
    for line in story {
        out.push_str(&format!("  {line}\n"));
    }
    let lifecycles = [
        (
            "warehouse: this program as a child process, JSON-RPC over stdio (.mcp)",
            &servers.session.warehouse,
        ),
        (
            "shipping: streamable HTTP on loopback (T::mcp)",
            &servers.session.shipping,
        ),
    ];
    for (title, traffic) in lifecycles {
        out.push_str(&format!("── MCP {title} ──\n"));
        for line in traffic.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// The example, as it prints; the warehouse's server is `program` run with
/// [`SERVE_STDIO`].
pub async fn run(target: Target, program: PathBuf) -> Result<String, Box<dyn Error>> {
    // With --live, the key first: no server is started for a run that cannot go on.
    let live_endpoint = match &target {
        Target::Live { .. } => Some(ApiEndpoint::from_env()?),
        Target::Bundled => None,
    };
    let servers = Servers::start(program).await?;
    let agent = servers.assistant(&servers.session).await?;
    let story = match (&target, live_endpoint) {
        (Target::Live { record }, Some(endpoint)) => {
            session(agent, endpoint, record.as_deref()).await?.0
        }
        _ => {
            let tape = live::read_tape(&live::bundled(&format!("{NAME}.wire.jsonl")))?;
            let mut server = live::serve(vec![(NAME.to_owned(), tape)]).await?;
            let session = session(agent, live::endpoint_of(&server), None).await;
            server.shutdown().await;
            session?.0
        }
    };
    servers.session.closed().await?;
    let mut out = report(&story, &servers);
    if target == Target::Bundled {
        let replayed = servers
            .assistant(&servers.replay)
            .await?
            .replay(live::bundled(&format!("{NAME}.wire.jsonl")))
            .await?
            .finish()
            .await;
        servers.replay.shipping.closed().await?;
        out.push_str("── the bundled tape replayed offline through the session tree ──\n");
        out.push_str(&format!("  {}\n", live::verdict(&replayed)));
        let (warehouse, shipping) = (&servers.replay.warehouse, &servers.replay.shipping);
        out.push_str(&format!(
            "  warehouse: {} JSON-RPC messages: never started, its tools answered from the tape\n",
            warehouse.lines().len()
        ));
        out.push_str(&format!(
            "  shipping: connected again, tools/call sent {} time(s): T::mcp tools run as native tools do\n",
            shipping.calls()
        ));
    }
    Ok(out)
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(SERVE_STDIO) {
        let served = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Box::<dyn Error>::from)
            .and_then(|runtime| runtime.block_on(serve_stdio()));
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("error: {NAME} {SERVE_STDIO}: {error}");
                ExitCode::FAILURE
            }
        };
    }
    live::main(NAME, |target| async move {
        run(target, std::env::current_exe()?).await
    })
}
