//! Streaming tools: results reach the model while the tool runs (`willContinue` responses
//! after the running acknowledgement, then the completion), a cancellation mid-stream stops
//! them, and a recorded session replays with no divergence (the tool runs again and sends
//! the same results in the same places).

use crate::support;

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_actors::testing::ScriptedServer;
use reel_actors::tools::{StreamingTool, ToolContext, ToolError, ToolStream};
use reel_fluent::Live;
use serde_json::{Value, json};
use support::{TempFolder, accepted};

/// Follows an order: a status a second, three of them.
struct TrackOrder;

impl StreamingTool for TrackOrder {
    fn name(&self) -> &str {
        "track_order"
    }
    fn description(&self) -> &str {
        "Follows an order until it is delivered."
    }
    fn parameters(&self) -> Option<Value> {
        None
    }
    fn run(
        &self,
        _args: Value,
        _ctx: ToolContext,
        results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>> {
        async move {
            for status in ["packed", "shipped", "delivered"] {
                tokio::time::sleep(Duration::from_secs(1)).await;
                results.send(json!({ "status": status }));
            }
            Ok(())
        }
        .boxed()
    }
}

fn response(id: &str, body: Value, scheduling: &str, more: bool) -> Value {
    let mut response =
        json!({"id": id, "name": "track_order", "response": body, "scheduling": scheduling});
    if more {
        response["willContinue"] = json!(true);
    }
    json!({"toolResponse": {"functionResponses": [response]}})
}

#[tokio::test(start_paused = true)]
async fn results_reach_the_model_as_they_come_and_a_cancellation_stops_them_and_it_replays() {
    let folder = TempFolder::new("streaming");
    let log = folder.join("streaming.wire.jsonl");
    let chain = || Live::builder().text_only().streaming_tool(TrackOrder);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup) =
        accepted(chain().record_wire(&log), &mut server, Duration::ZERO).await;
    assert_eq!(
        setup.json().unwrap()["setup"]["tools"],
        json!([{"functionDeclarations": [{
            "name": "track_order",
            "description": "Follows an order until it is delivered.",
            "behavior": "NON_BLOCKING"
        }]}])
    );

    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "c1", "name": "track_order", "args": {}}]}}),
    )
    .await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c1",
            json!({"status": "running", "tool": "track_order"}),
            "SILENT",
            true
        )
    );
    for status in ["packed", "shipped", "delivered"] {
        assert_eq!(
            conn.recv_json().await,
            response("c1", json!({"status": status}), "WHEN_IDLE", true),
            "{status}"
        );
    }
    assert_eq!(
        conn.recv_json().await,
        response(
            "c1",
            json!({"status": "completed", "tool": "track_order", "result": {"results_sent": 3}}),
            "WHEN_IDLE",
            false
        )
    );

    // A second call, cancelled by the model after its first result: nothing more of it.
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "c2", "name": "track_order", "args": {}}]}}),
    )
    .await;
    conn.recv_json().await; // running
    assert_eq!(
        conn.recv_json().await,
        response("c2", json!({"status": "packed"}), "WHEN_IDLE", true)
    );
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["c2"]}}))
        .await;
    // Time passes (the tool would have sent two more results): nothing comes.
    assert!(
        tokio::time::timeout(Duration::from_secs(5), conn.recv())
            .await
            .is_err()
    );
    let (end, closed) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    assert!(closed.is_some());

    let outcome = chain().replay(&log).await.unwrap().finish().await;
    assert_eq!(outcome.divergences, vec![]);
}
