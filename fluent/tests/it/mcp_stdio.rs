//! MCP tools over stdio, against real Python MCP servers from PyPI: `mcp-server-time` (a
//! third-party server), and a small server written here on the `mcp` SDK it brings. The
//! test installs both itself, once, into a virtual environment under the target folder
//! (`CARGO_TARGET_TMPDIR/mcp-python`); after that it needs no network.

use crate::mcp_support;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mcp_support::{accepted, tool_call, tool_response};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{Live, LiveBuilder, McpServer};
use reel_tools::ToolFunction;
use serde_json::json;
use support::{TempFolder, text, turn_complete, until_turn_complete};

/// The PyPI package the tests install (with its dependencies, among them `mcp`).
const TIME_SERVER: &str = "mcp-server-time==2026.10.19";

/// The virtual environment, installed on first use.
fn venv() -> &'static Path {
    static VENV: OnceLock<PathBuf> = OnceLock::new();
    VENV.get_or_init(|| {
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python");
        let installed = venv.join(format!("reel-installed-{TIME_SERVER}"));
        if !installed.exists() {
            let _ = std::fs::remove_dir_all(&venv);
            run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
            run(Command::new(venv.join("bin/pip")).args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                TIME_SERVER,
            ]));
            std::fs::write(&installed, "").unwrap();
        }
        venv
    })
}

fn run(command: &mut Command) {
    let status = command.status().unwrap();
    assert!(status.success(), "{command:?}: {status}");
}

/// A small MCP server on the Python SDK: `echo`, and `crash`, which kills its own process
/// in the middle of the call. It writes its process id to `REEL_MCP_MARKER` when it starts.
const SCRIPT: &str = r#"
import os
from mcp.server.mcpserver import MCPServer

with open(os.environ["REEL_MCP_MARKER"], "w") as marker:
    marker.write(str(os.getpid()))

server = MCPServer("reel-test")

@server.tool()
def echo(text: str) -> str:
    """Echoes the text back."""
    return text

@server.tool()
def crash() -> str:
    """Kills this server's own process in the middle of the call."""
    os.kill(os.getpid(), 9)
    return "never"

server.run()
"#;

/// The script server in `folder`: the server config, and where its marker goes.
fn script_server(folder: &TempFolder) -> (McpServer, PathBuf) {
    let script = folder.join("server.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let marker = folder.join("started");
    let python = venv().join("bin/python");
    let server = McpServer::stdio(python.display().to_string(), [script.display().to_string()])
        .env("REEL_MCP_MARKER", marker.display().to_string());
    (server, marker)
}

fn text_assistant(server: McpServer) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .mcp(server)
}

#[tokio::test]
async fn a_third_party_server_from_pypi_is_listed_and_called_over_stdio() {
    let time = McpServer::stdio(
        venv().join("bin/mcp-server-time").display().to_string(),
        ["--local-timezone", "UTC"],
    );
    let toolset = time.connect().await.unwrap();
    assert_eq!(toolset.names(), ["convert_time", "get_current_time"]);
    let convert = &toolset.tools()[0];
    assert_eq!(
        convert.parameters().unwrap()["required"],
        json!(["source_timezone", "time", "target_timezone"])
    );
    drop(toolset);

    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup) = accepted(text_assistant(time), &mut server).await;
    let declared = &setup.json().unwrap()["setup"]["tools"][0]["functionDeclarations"];
    assert_eq!(declared[0]["name"], "convert_time");
    assert_eq!(declared[1]["name"], "get_current_time");
    conn.send_json(&tool_call(
        json!([{"id": "call-1", "name": "convert_time", "args": {
            "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"
        }}]),
    ))
    .await;
    let frame = conn.recv_json().await;
    let response = &frame["toolResponse"]["functionResponses"][0];
    assert_eq!(
        (&response["id"], &response["name"]),
        (&json!("call-1"), &json!("convert_time"))
    );
    // Structured content, the response as it is. The date is today's (UTC): taken from
    // the answer, everything else exact.
    let answer = &response["response"];
    let source = answer["source"]["datetime"].as_str().unwrap();
    let (date, _) = source.split_once('T').unwrap();
    let weekday = &answer["source"]["day_of_week"];
    assert_eq!(
        answer,
        &json!({
            "source": {"timezone": "UTC", "datetime": format!("{date}T12:00:00+00:00"),
                       "day_of_week": weekday, "is_dst": false},
            "target": {"timezone": "Asia/Tokyo", "datetime": format!("{date}T21:00:00+09:00"),
                       "day_of_week": weekday, "is_dst": false},
            "time_difference": "+9.0h"
        })
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_server_killed_mid_call_is_an_error_response_and_the_session_goes_on() {
    let folder = TempFolder::new("mcp-stdio-crash");
    let (mcp, marker) = script_server(&folder);
    let label = mcp.label();
    let builder = text_assistant(mcp);
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server).await;
    assert!(marker.exists());
    conn.send_json(&tool_call(
        json!([{"id": "call-1", "name": "echo", "args": {"text": "hi"}}]),
    ))
    .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-1", "name": "echo", "response": {"result": "hi"}}]))
    );
    conn.send_json(&tool_call(json!([{"id": "call-2", "name": "crash"}])))
        .await;
    let unreachable = |id: &str, tool: &str| {
        tool_response(
            json!([{"id": id, "name": tool, "response": {"error": format!(
                "tool `{tool}` could not be reached: the MCP server `{label}` failed: Transport closed"
            )}}]),
        )
    };
    assert_eq!(conn.recv_json().await, unreachable("call-2", "crash"));
    // The server is gone: its tools say so, and the session goes on.
    conn.send_json(&tool_call(
        json!([{"id": "call-3", "name": "echo", "args": {"text": "again"}}]),
    ))
    .await;
    assert_eq!(conn.recv_json().await, unreachable("call-3", "echo"));
    conn.send_json(&text("The tool is down.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_recorded_stdio_session_replays_clean_without_starting_the_server() {
    let folder = TempFolder::new("mcp-stdio-replay");
    let wire = folder.join("echo.wire.jsonl");
    let journal = folder.join("echo.journal.jsonl");
    let (mcp, marker) = script_server(&folder);
    let recording = text_assistant(mcp.clone())
        .record_wire(&wire)
        .journal(&journal);
    let mut events = recording.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(recording, &mut server).await;
    conn.send_json(&tool_call(
        json!([{"id": "call-1", "name": "echo", "args": {"text": "hi"}}]),
    ))
    .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-1", "name": "echo", "response": {"result": "hi"}}]))
    );
    conn.send_json(&text("You said hi.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    // No server to start any more: no script, no marker.
    std::fs::remove_file(folder.join("server.py")).unwrap();
    std::fs::remove_file(&marker).unwrap();
    let outcome = text_assistant(mcp)
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert!(outcome.recorded_journal.is_some());
    assert!(!marker.exists(), "the replay started the MCP server");
}
