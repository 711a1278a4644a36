//! `SimpleTool`: raw JSON in, JSON out, from a closure; run by the tree's engine.

use std::time::Duration;

use reel_actors::state::State;
use reel_tools::{SimpleTool, ToolContext, ToolDispatcher, ToolOutcome};
use serde_json::json;

use crate::tool_calls::{call, run, wire};

#[tokio::test(start_paused = true)]
async fn a_simple_tool_answers_with_its_object() {
    let mut tools = ToolDispatcher::new();
    let echo = SimpleTool::new(
        "echo",
        "Echoes.",
        None,
        |args, ctx: ToolContext| async move {
            Ok(json!({ "echo": args, "call_id": ctx.call_id, "tool": ctx.tool }))
        },
    );
    assert_eq!(tools.register(echo), Ok(()));
    let state = State::new();
    let outcome = run(&tools, &call("fc_1", "echo", json!({ "x": 1 })), &state).await;
    assert_eq!(
        outcome,
        ToolOutcome {
            call_id: "fc_1".into(),
            name: "echo".into(),
            args: json!({ "x": 1 }).into(),
            result: Ok(json!({ "echo": { "x": 1 }, "call_id": "fc_1", "tool": "echo" })),
            duration: Duration::ZERO,
        }
    );
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("echo"))),
        r#"{"id":"fc_1","name":"echo","response":{"echo":{"x":1},"call_id":"fc_1","tool":"echo"}}"#
    );
}
