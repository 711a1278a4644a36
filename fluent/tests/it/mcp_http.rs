//! MCP tools over streamable HTTP, against a small MCP server written in the test (rmcp):
//! declared in the setup, called from the control lane, cancelled, timed out, refused at
//! connect, recorded and replayed without the server.

use crate::mcp_support;
use crate::support;

use std::time::Duration;

use mcp_support::{HttpMcp, Seen, accepted, tool_call, tool_response};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{BuildError, ConnectError, Live, LiveBuilder, McpError, McpServer};
use reel_recorder::wire_read::read_wire_log;
use reel_replayer::Tape;
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::{OfflineSinks, replay_offline};
use reel_replayer::recorded_tools::RecordedToolResponses;
use reel_tools::mcp::McpMessage;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;
use support::{TempFolder, text, turn_complete, until_turn_complete};

/// A text assistant with one native tool and the test server's tools under `calc_`.
fn assistant(url: &str) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(SimpleTool::new(
            "get_time",
            "The time.",
            None,
            |_, _| async { Ok(json!({"time": "19:30"})) },
        ))
        .mcp(McpServer::http(url).prefix("calc_"))
}

#[tokio::test]
async fn mcp_tools_are_declared_in_the_setup_and_answer_the_model() {
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup) = accepted(assistant(&mcp.url), &mut server).await;
    assert_eq!(
        setup.json().unwrap(),
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-preview",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "tools": [{"functionDeclarations": [
                {"name": "calc_add", "description": "Adds two integers.", "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "format": "int64", "description": "The first addend."},
                        "b": {"type": "integer", "format": "int64", "description": "The second addend."}
                    },
                    "required": ["a", "b"]
                }},
                {"name": "calc_fail", "description": "Always fails."},
                {"name": "calc_lookup", "description": "The weather in a city.", "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "The city, e.g. \"London\"."}},
                    "required": ["city"]
                }},
                {"name": "calc_wait", "description": "Runs until cancelled."},
                {"name": "get_time", "description": "The time."}
            ]}]
        }})
    );

    // Two calls in one frame, MCP and native: one response frame, in call order.
    conn.send_json(&tool_call(json!([
        {"id": "call-1", "name": "calc_add", "args": {"a": 2, "b": 3}},
        {"id": "call-2", "name": "get_time", "args": {}},
        {"id": "call-3", "name": "calc_lookup", "args": {"city": "London"}}
    ])))
    .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([
            {"id": "call-1", "name": "calc_add", "response": {"result": "5"}},
            {"id": "call-2", "name": "get_time", "response": {"time": "19:30"}},
            {"id": "call-3", "name": "calc_lookup", "response": {"city": "London", "temp_c": 21}}
        ]))
    );
    let mut seen = vec![mcp.next().await, mcp.next().await];
    seen.sort_by_key(|seen| format!("{seen:?}"));
    assert_eq!(
        seen,
        [
            Seen::Called("add", json!({"a": 2, "b": 3})),
            Seen::Called("lookup", json!({"city": "London"}))
        ]
    );

    // An isError result is the tool's failure, told to the model.
    conn.send_json(&tool_call(json!([{"id": "call-4", "name": "calc_fail"}])))
        .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-4", "name": "calc_fail", "response": {
            "error": "tool `calc_fail` failed: no table free at 19:00"
        }}]))
    );
    assert_eq!(mcp.next().await, Seen::Called("fail", json!({})));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_cancelled_mcp_call_cancels_its_request_and_is_not_answered() {
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(assistant(&mcp.url), &mut server).await;
    conn.send_json(&tool_call(json!([{"id": "call-1", "name": "calc_wait"}])))
        .await;
    assert_eq!(mcp.next().await, Seen::Called("wait", json!({})));
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["call-1"]}}))
        .await;
    // The MCP request is cancelled on the server...
    assert_eq!(mcp.next().await, Seen::Cancelled("wait"));
    // ...and the model gets no response for it: the next frame answers the next call.
    conn.send_json(&tool_call(json!([
        {"id": "call-2", "name": "calc_add", "args": {"a": 40, "b": 2}}
    ])))
    .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-2", "name": "calc_add", "response": {"result": "42"}}]))
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_timed_out_mcp_call_is_answered_with_the_timeout_and_cancelled_on_the_server() {
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    // A setting may name an MCP tool: it applies once the server's tools are known.
    let builder = assistant(&mcp.url).tool_timeout("calc_wait", Duration::from_millis(300));
    let (handle, mut conn, _) = accepted(builder, &mut server).await;
    conn.send_json(&tool_call(json!([{"id": "call-1", "name": "calc_wait"}])))
        .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-1", "name": "calc_wait", "response": {
            "error": "tool `calc_wait` timed out after 300ms"
        }}]))
    );
    assert_eq!(mcp.next().await, Seen::Called("wait", json!({})));
    assert_eq!(mcp.next().await, Seen::Cancelled("wait"));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn servers_that_cannot_be_used_fail_the_connect_naming_them() {
    let mcp = HttpMcp::start().await;
    let endpoint = ScriptedServer::bind().await.endpoint();

    // A program that does not exist.
    let error = Live::builder()
        .mcp(McpServer::stdio(
            "/nonexistent/reel-mcp-server",
            ["--stdio"],
        ))
        .connect(endpoint.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ConnectError::Mcp(McpError::Spawn { .. })),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "could not start the MCP server `/nonexistent/reel-mcp-server --stdio`: \
         No such file or directory (os error 2)"
    );

    // A URL where nothing listens.
    let free = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nowhere = format!("http://{}/mcp", free.local_addr().unwrap());
    drop(free);
    let error = Live::builder()
        .mcp(McpServer::http(&nowhere).connect_timeout(Duration::from_secs(10)))
        .connect(endpoint.clone())
        .await
        .unwrap_err();
    match &error {
        ConnectError::Mcp(McpError::Initialize { server, .. }) => assert_eq!(server, &nowhere),
        other => panic!("{other:?}"),
    }

    // An allow-list naming a tool the server does not have.
    let error = Live::builder()
        .mcp(McpServer::http(&mcp.url).allow(["add", "divide"]))
        .connect(endpoint.clone())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the MCP server `{}` offers no tool named `divide`; it offers: add, fail, lookup, wait",
            mcp.url
        )
    );

    // A native tool with an MCP tool's name.
    let error = assistant(&mcp.url)
        .tool(SimpleTool::new("calc_add", "Adds.", None, |_, _| async {
            Ok(json!({}))
        }))
        .connect(endpoint)
        .await
        .unwrap_err();
    assert!(
        matches!(error, ConnectError::Build(BuildError::Tool { .. })),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "`.mcp({})`: a tool named `calc_add` is already registered; tool names must be unique",
            mcp.url
        )
    );
}

#[tokio::test]
async fn an_allow_list_takes_only_the_named_tools() {
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    let builder = Live::builder()
        .text_only()
        .mcp(McpServer::http(&mcp.url).allow(["add"]));
    let (handle, mut conn, setup) = accepted(builder, &mut server).await;
    let declared = &setup.json().unwrap()["setup"]["tools"][0]["functionDeclarations"];
    assert_eq!(
        declared
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["add"]
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_recorded_session_replays_clean_without_the_mcp_server() {
    let folder = TempFolder::new("mcp-http-replay");
    let wire = folder.join("calc.wire.jsonl");
    let journal = folder.join("calc.journal.jsonl");
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    let recording = assistant(&mcp.url).record_wire(&wire).journal(&journal);
    let mut events = recording.subscribe();
    let (handle, mut conn, _) = accepted(recording, &mut server).await;
    conn.send_json(&tool_call(json!([
        {"id": "call-1", "name": "calc_add", "args": {"a": 2, "b": 3}},
        {"id": "call-2", "name": "get_time"}
    ])))
    .await;
    conn.recv_json().await;
    conn.send_json(&tool_call(json!([{"id": "call-3", "name": "calc_fail"}])))
        .await;
    conn.recv_json().await;
    conn.send_json(&text("5, and no table.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    // The server is gone: its port is closed.
    mcp.stop();
    let connections = mcp.connections();
    let outcome = assistant(&mcp.url)
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert!(outcome.recorded_journal.is_some());
    assert_eq!(outcome.divergences, []);
    assert_eq!(
        mcp.connections(),
        connections,
        "the replay reached the MCP server"
    );

    // A native tool dropped since the recording is not taken for an MCP tool (its name has
    // no `calc_` prefix): the setup and its call's response drift.
    let without_native = Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .mcp(McpServer::http(&mcp.url).prefix("calc_"));
    let outcome = without_native.replay(&wire).await.unwrap().finish().await;
    assert!(!outcome.is_clean());
    assert_eq!(outcome.divergences.len(), 2, "{:?}", outcome.divergences);

    // `reel replay`'s way (no application code at all) is clean too.
    let entries = read_wire_log(&wire).unwrap();
    let mut stats = LogStats::new();
    let mut answers = RecordedToolResponses::new();
    for entry in &entries {
        stats.observe(entry);
        answers.observe(entry);
    }
    let offline = replay_offline(
        Tape::from_entries(entries),
        stats.setup.unwrap(),
        answers.into_control_callbacks(),
        OfflineSinks::default(),
    )
    .await
    .unwrap();
    assert_eq!(offline.divergences, []);
}

#[tokio::test]
async fn phases_may_allow_mcp_tools() {
    let mcp = HttpMcp::start().await;
    let builder = Live::builder()
        .text_only()
        .mcp(McpServer::http(&mcp.url))
        .phase("greeting", |p| {
            p.instruction("Greet the caller.").tools(["add"])
        });
    // Checked without connecting: the phase's tools wait for the server's.
    assert!(builder.validate().is_ok());
    assert_eq!(
        builder.session_config().unwrap().setup().system_instruction,
        Live::builder()
            .instruction("Greet the caller.")
            .session_config()
            .unwrap()
            .setup()
            .system_instruction
    );
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server).await;
    conn.send_json(&tool_call(json!([
        {"id": "call-1", "name": "add", "args": {"a": 1, "b": 1}},
        {"id": "call-2", "name": "lookup", "args": {"city": "Paris"}}
    ])))
    .await;
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([
            {"id": "call-1", "name": "add", "response": {"result": "2"}},
            {"id": "call-2", "name": "lookup", "response": {
                "error": "tool `lookup` is not available in the current phase `greeting`"
            }}
        ]))
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn the_sessions_concurrency_limit_holds_mcp_calls_too() {
    let mcp = HttpMcp::start().await;
    let mut server = ScriptedServer::bind().await;
    // One call at a time in the session: `calc_add` waits for `calc_wait`'s slot.
    let builder = Live::builder()
        .text_only()
        .tools(ToolDispatcher::new().max_concurrent(1))
        .mcp(McpServer::http(&mcp.url).prefix("calc_"));
    let (handle, mut conn, _) = accepted(builder, &mut server).await;
    conn.send_json(&tool_call(json!([
        {"id": "call-1", "name": "calc_wait"},
        {"id": "call-2", "name": "calc_add", "args": {"a": 1, "b": 2}}
    ])))
    .await;
    assert_eq!(mcp.next().await, Seen::Called("wait", json!({})));
    // `add` has not reached the server while `wait` holds the slot (a check that cannot
    // fail with the limit in place).
    assert_eq!(mcp.try_next().await, None);
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["call-1"]}}))
        .await;
    // Once `wait` is cancelled, `add` runs. (The cancellation and the call are separate
    // requests: the server may see them in either order.)
    let mut seen = vec![mcp.next().await, mcp.next().await];
    seen.sort_by_key(|seen| format!("{seen:?}"));
    assert_eq!(
        seen,
        [
            Seen::Called("add", json!({"a": 1, "b": 2})),
            Seen::Cancelled("wait")
        ]
    );
    assert_eq!(
        conn.recv_json().await,
        tool_response(json!([{"id": "call-2", "name": "calc_add", "response": {"result": "3"}}]))
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn on_message_shows_each_json_rpc_message_in_order_then_the_close() {
    let mcp = HttpMcp::start().await;
    let (seen, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let builder = Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .mcp(
            McpServer::http(&mcp.url)
                .allow(["add", "fail"])
                .on_message(move |message| {
                    let _ = seen.send(message.clone());
                }),
        );
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server).await;
    conn.send_json(&tool_call(
        json!([{"id": "call-1", "name": "add", "args": {"a": 2, "b": 3}}]),
    ))
    .await;
    conn.recv_json().await;
    conn.send_json(&tool_call(
        json!([{"id": "call-2", "name": "fail", "args": {}}]),
    ))
    .await;
    conn.recv_json().await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    // Everything up to the close, which comes when the session's tools are dropped.
    let mut lines = Vec::new();
    let mut calls = Vec::new();
    while let Some(message) = messages.recv().await {
        let line = match &message {
            McpMessage::Sent(json) => format!("→ {} #{}", json["method"], json["id"]),
            McpMessage::Received(json) if json.get("result").is_some() => {
                format!("← result #{}", json["id"])
            }
            McpMessage::Received(json) => format!("← {json}"),
            McpMessage::Closed => "closed".to_owned(),
        };
        lines.push(line);
        match &message {
            McpMessage::Sent(json) if json["method"] == "tools/call" => calls.push(json.clone()),
            McpMessage::Received(json) if json["id"] == 2 || json["id"] == 3 => {
                calls.push(json["result"].clone())
            }
            McpMessage::Closed => break,
            _ => {}
        }
    }
    assert_eq!(
        lines,
        [
            r#"→ "initialize" #0"#,
            "← result #0",
            r#"→ "notifications/initialized" #null"#,
            r#"→ "tools/list" #1"#,
            "← result #1",
            r#"→ "tools/call" #2"#,
            "← result #2",
            r#"→ "tools/call" #3"#,
            "← result #3",
            "closed",
        ]
    );
    assert_eq!(
        calls,
        [
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"_meta": {"progressToken": 1}, "name": "add", "arguments": {"a": 2, "b": 3}}}),
            json!({"content": [{"type": "text", "text": "5"}], "isError": false}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"_meta": {"progressToken": 2}, "name": "fail", "arguments": {}}}),
            json!({"content": [{"type": "text", "text": "no table free at 19:00"}], "isError": true}),
        ]
    );
    assert_eq!(
        mcp.next().await,
        Seen::Called("add", json!({"a": 2, "b": 3}))
    );
}
