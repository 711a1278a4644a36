//! The tool-call round trip: from the moment the link hands a `toolCall` frame to the
//! transport to the moment the session writes the `toolResponse` frame to the link, with a
//! trivial tool that answers at once (issue 28, item 3).
//!
//! A plain `main` (`harness = false`): criterion does not do percentiles. One session on a
//! tokio runtime with 2 workers, over an in-memory link (a bench `Connector`). The bench
//! feeds one `toolCall` (a fresh id each time) and waits for its `toolResponse` before the
//! next, so each sample is one round trip through the tree with nothing else queued. The
//! link's `recv` writes the hand-off time; its `send` notes when a `toolResponse` frame is
//! written. The first 200 round trips warm up and are not counted; 2,000 are.
//!
//! Run with `cargo bench -p reel-actors --bench tool_round_trip` (a few seconds).

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use reel_actors::transport::LinkFrame;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;

use support::{Fed, MemoryConnector, Stamps, load_average, memory_builder, runtime, summarize};

const WARMUP: usize = 200;
const MEASURED: usize = 2_000;
const TOTAL: usize = WARMUP + MEASURED;

/// Round trip `i`'s `toolCall`: the tool `echo` with call id `call-i`.
fn tool_call_frame(i: usize) -> LinkFrame {
    let value = json!({"toolCall": {"functionCalls": [
        {"id": format!("call-{i}"), "name": "echo", "args": {"n": i}}
    ]}});
    LinkFrame::text(value.to_string())
}

fn main() {
    let frames: Vec<LinkFrame> = (0..TOTAL).map(tool_call_frame).collect();
    let runtime = runtime();
    println!(
        "tool_round_trip: 1 session, 2 workers, in-memory link; {TOTAL} toolCall → toolResponse \
         round trips one at a time, first {WARMUP} not counted; load average {}",
        load_average()
    );
    let summary = runtime.block_on(async {
        let base = Instant::now();
        let handed = Arc::new(Stamps::new(base, TOTAL));
        let (connector, link) = MemoryConnector::fed(Some(Arc::clone(&handed) as _));
        let mut responses = connector.tool_responses();
        let mut tools = ToolDispatcher::new();
        let registered = tools.register(SimpleTool::new(
            "echo",
            "Answers its arguments.",
            None,
            |args, _ctx| async move { Ok(json!({"echo": args})) },
        ));
        assert!(registered.is_ok(), "the tool registers");
        let handle = match memory_builder(connector).dispatcher(tools).connect().await {
            Ok(handle) => handle,
            Err(error) => panic!("the bench session did not go live: {error}"),
        };
        let mut samples = Vec::with_capacity(MEASURED);
        for (i, frame) in frames.iter().enumerate() {
            if link
                .send(Fed {
                    index: Some(i),
                    frame: frame.clone(),
                })
                .is_err()
            {
                panic!("the link's receiver is gone");
            }
            let written =
                match tokio::time::timeout(Duration::from_secs(10), responses.recv()).await {
                    Ok(Some(written)) => written,
                    other => panic!("no toolResponse for round trip {i}: {}", other.is_ok()),
                };
            let handed_ns = handed.get(i);
            assert!(handed_ns != 0, "round trip {i}'s toolCall was handed over");
            let written_ns =
                u64::try_from(written.duration_since(base).as_nanos()).unwrap_or(u64::MAX);
            if i >= WARMUP {
                samples.push(written_ns.saturating_sub(handed_ns));
            }
        }
        let end = tokio::time::timeout(Duration::from_secs(30), handle.disconnect()).await;
        assert!(
            matches!(&end, Ok(end) if !end.failed),
            "the session ended cleanly"
        );
        summarize(samples)
    });
    println!("  link hand-off of toolCall → toolResponse written   {summary}");
}
