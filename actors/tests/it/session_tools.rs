//! Tool calls through the whole session tree: exact `toolResponse` frames, concurrency,
//! cancellation, and the state writes they commit.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_protocol::SessionConfig;
use reel_tools::{SimpleTool, ToolDispatcher, ToolError, TypedTool};
use serde::Deserialize;
use serde_json::{Value, json};
use support::{kinds, settle, start};

#[derive(Deserialize, schemars::JsonSchema)]
struct WeatherArgs {
    /// City name.
    city: String,
}

fn weather_dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(TypedTool::new::<WeatherArgs, _, _, _>(
            "get_weather",
            "Get the current weather for a city.",
            |args: WeatherArgs, ctx| async move {
                ctx.state
                    .set("app:last_city", &args.city)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"city": args.city, "temp_c": 21}))
            },
        ))
        .unwrap();
    dispatcher
        .register(SimpleTool::new(
            "slow_lookup",
            "Takes a while.",
            None,
            |_args, _ctx| async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(json!({"found": true}))
            },
        ))
        .unwrap();
    dispatcher
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_round_trip_sends_the_exact_response_and_commits_state() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup, mut events) = start(
        &mut server,
        |b| b.dispatcher(weather_dispatcher()),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    // Declarations join the setup, sorted by name, with their generated schemas.
    assert_eq!(
        setup["setup"]["tools"],
        json!([{"functionDeclarations": [
            {"name": "get_weather", "description": "Get the current weather for a city.",
             "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name."}}, "required": ["city"]}},
            {"name": "slow_lookup", "description": "Takes a while."}
        ]}])
    );

    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "get_weather", "args": {"city": "London"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "call-1", "name": "get_weather", "response": {"city": "London", "temp_c": 21}}
        ]}})
    );
    let seen = settle(&mut events).await;
    assert_eq!(
        kinds(&seen, Lane::Control),
        [
            "tool_call",
            "tool_started",
            "phase_changed",
            "tool_finished",
            "phase_changed"
        ]
    );
    assert_eq!(
        handle.state().get::<String>("app:last_city").as_deref(),
        Some("London")
    );
    let journal: Vec<(String, Value, bool)> = handle
        .state()
        .recent_mutations()
        .into_iter()
        .filter(|m| m.key.starts_with("app:"))
        .map(|m| (m.key, m.new, m.delta))
        .collect();
    assert_eq!(
        journal,
        [("app:last_city".to_owned(), json!("London"), true)]
    );
    assert_eq!(handle.telemetry().tool_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn two_calls_in_one_frame_run_concurrently_and_answer_in_call_order() {
    let mut server = ScriptedServer::bind().await;
    let (_handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.dispatcher(weather_dispatcher()),
        SessionConfig::default(),
    )
    .await;
    let started = tokio::time::Instant::now();
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "a", "name": "slow_lookup", "args": {}},
        {"id": "b", "name": "get_weather", "args": {"city": "Paris"}},
        {"id": "c", "name": "no_such_tool", "args": {}}
    ]}}))
    .await;
    // One frame, in call order, once the slowest call is done: 5 s, not 5 s + the others.
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "a", "name": "slow_lookup", "response": {"found": true}},
            {"id": "b", "name": "get_weather", "response": {"city": "Paris", "temp_c": 21}},
            {"id": "c", "name": "no_such_tool", "response": {"error": "unknown tool `no_such_tool`; available tools: get_weather, slow_lookup"}}
        ]}})
    );
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    let seen = settle(&mut events).await;
    let finished: Vec<(String, bool)> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::ToolFinished { call_id, ok, .. } => Some((call_id.clone(), *ok)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [("a".into(), true), ("b".into(), true), ("c".into(), false)]
    );
}

#[tokio::test(start_paused = true)]
async fn a_cancellation_really_stops_the_running_tool() {
    let mut server = ScriptedServer::bind().await;
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let mut dispatcher = weather_dispatcher();
    dispatcher
        .register(SimpleTool::new(
            "forever",
            "Never ends.",
            None,
            move |_args, ctx| {
                let flag = Arc::clone(&flag);
                async move {
                    struct Guard(Arc<AtomicBool>);
                    impl Drop for Guard {
                        fn drop(&mut self) {
                            self.0.store(true, Ordering::SeqCst);
                        }
                    }
                    let _guard = Guard(flag);
                    ctx.state
                        .set("app:partial", true)
                        .map_err(|e| ctx.fail(e))?;
                    std::future::pending::<()>().await;
                    Err::<Value, ToolError>(ctx.fail("unreachable"))
                }
            },
        ))
        .unwrap();
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.dispatcher(dispatcher),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "f1", "name": "forever", "args": {}}
    ]}}))
    .await;
    settle(&mut events).await;
    assert!(!dropped.load(Ordering::SeqCst), "still running");
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["f1"]}}))
        .await;
    let seen = settle(&mut events).await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    assert_eq!(
        kinds(&seen, Lane::Control),
        ["tool_call_cancelled", "tool_cancelled", "phase_changed"]
    );
    assert_eq!(
        handle.state().get_raw("app:partial"),
        None,
        "its writes were rolled back"
    );
    // No response is sent for a cancelled call: the next frame the server reads is ours.
    handle.send_text("still there?").unwrap();
    assert_eq!(
        conn.recv_json().await["clientContent"]["turns"][0]["parts"][0]["text"],
        "still there?"
    );
}

#[tokio::test(start_paused = true)]
async fn a_background_tool_is_acknowledged_at_once_and_answered_when_done() {
    let mut server = ScriptedServer::bind().await;
    let mut dispatcher = weather_dispatcher();
    dispatcher
        .set_background("slow_lookup", reel_protocol::Scheduling::WhenIdle)
        .unwrap();
    let (_handle, mut conn, setup, mut events) = start(
        &mut server,
        |b| b.dispatcher(dispatcher),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    // Declared non-blocking, so the model keeps talking while it runs.
    assert_eq!(
        setup["setup"]["tools"][0]["functionDeclarations"][1]["behavior"],
        "NON_BLOCKING"
    );
    let started = tokio::time::Instant::now();
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "bg-1", "name": "slow_lookup", "args": {}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "bg-1", "name": "slow_lookup",
            "response": {"status": "running", "tool": "slow_lookup"},
            "scheduling": "SILENT", "willContinue": true}]}})
    );
    assert_eq!(started.elapsed(), Duration::ZERO, "acknowledged at once");
    // The model talks on while the tool runs; the lanes keep handling its frames.
    conn.send_json(
        &json!({"serverContent": {"modelTurn": {"parts": [{"text": "Looking it up…"}]}}}),
    )
    .await;
    let seen = settle(&mut events).await;
    assert!(kinds(&seen, Lane::Fast).contains(&"text"));
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "bg-1", "name": "slow_lookup",
            "response": {"status": "completed", "tool": "slow_lookup", "result": {"found": true}},
            "scheduling": "WHEN_IDLE"}]}})
    );
    assert_eq!(started.elapsed(), Duration::from_secs(5));
}
