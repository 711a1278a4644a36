//! The tree's tool engine outside a session: tools registered, declared, run against calls
//! from the model (under paused tokio time: timeouts, cancellation, panics, the phase
//! filter, background modes), answered, and their state writes settled. The tool kinds'
//! own tests are `reel-tools`' (`tools/tests/it/`); the fixtures are shared with them
//! (`tools/tests/support/tool_calls.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};
use reel_actors::clock::ManualClock;
use reel_actors::state::State;
use reel_protocol::{FunctionCall, Scheduling};
use reel_tools::{
    PhaseToolFilter, SimpleTool, ToolContext, ToolDispatcher, ToolError, ToolExecutionMode,
    ToolFunction, run_call, running_ack,
};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep};

use crate::tool_calls::{call, context, dispatcher, get_weather, run, wire};

// ---- fixtures ----

/// A tool that sleeps `secs` seconds of (virtual) time, then writes `app:{name}` and
/// answers `"slept"`.
fn sleeper(name: &str, secs: u64) -> SimpleTool {
    let key = format!("app:{name}");
    SimpleTool::new(name, "Sleeps.", None, move |_args, ctx: ToolContext| {
        let key = key.clone();
        async move {
            sleep(Duration::from_secs(secs)).await;
            ctx.state.set(&key, secs).map_err(|e| ctx.fail(e))?;
            Ok(json!("slept"))
        }
    })
}

// ---- declarations ----

#[test]
fn declarations_are_sorted_by_name_and_background_ones_non_blocking() {
    let mut tools = ToolDispatcher::new();
    for tool in [sleeper("search_flights", 1), sleeper("a_check", 1)] {
        assert_eq!(tools.register(tool), Ok(()));
    }
    assert_eq!(tools.register(get_weather()), Ok(()));
    assert_eq!(
        tools.set_background("search_flights", Scheduling::WhenIdle),
        Ok(())
    );
    let names: Vec<Option<String>> = tools.declarations().into_iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            Some("a_check".to_owned()),
            Some("get_weather".to_owned()),
            Some("search_flights".to_owned())
        ]
    );
    assert_eq!(
        serde_json::to_string(&tools.declarations()).unwrap_or_default(),
        concat!(
            r#"[{"name":"a_check","description":"Sleeps."},"#,
            r#"{"name":"get_weather","description":"The current weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"The city to look up."}},"required":["city"]}},"#,
            r#"{"name":"search_flights","description":"Sleeps.","behavior":"NON_BLOCKING"}]"#
        )
    );
}

// ---- running calls ----

#[tokio::test(start_paused = true)]
async fn missing_args_count_as_an_empty_object() {
    let mut tools = ToolDispatcher::new();
    let echo = SimpleTool::new("echo", "Echoes.", None, |args, _ctx| async move {
        Ok(json!({ "got": args }))
    });
    assert_eq!(tools.register(echo), Ok(()));
    let bare = FunctionCall {
        id: Some("fc_2".into()),
        name: Some("echo".into()),
        ..FunctionCall::default()
    };
    let outcome = run(&tools, &bare, &State::new()).await;
    assert_eq!(outcome.args, json!({}));
    assert_eq!(outcome.result, Ok(json!({ "got": {} })));
}

#[tokio::test(start_paused = true)]
async fn an_unknown_tool_lists_the_available_ones() {
    let tools = dispatcher();
    let outcome = run(
        &tools,
        &call("fc_4", "get_wether", json!({})),
        &State::new(),
    )
    .await;
    assert_eq!(
        outcome.result,
        Err(ToolError::UnknownTool {
            name: "get_wether".into(),
            available: vec!["book_table".into(), "get_weather".into()],
        })
    );
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("get_wether"))),
        r#"{"id":"fc_4","name":"get_wether","response":{"error":"unknown tool `get_wether`; available tools: book_table, get_weather"}}"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_error_is_answered_and_its_writes_rolled_back() {
    let mut tools = ToolDispatcher::new();
    let half_done = SimpleTool::new(
        "transfer",
        "Moves money.",
        None,
        |_args, ctx: ToolContext| async move {
            ctx.state
                .set("app:debited", true)
                .map_err(|e| ctx.fail(e))?;
            Err(ctx.fail("the credit side is down"))
        },
    );
    assert_eq!(tools.register(half_done), Ok(()));
    let state = State::new();
    let outcome = run(&tools, &call("fc_8", "transfer", json!({})), &state).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::ExecutionFailed {
            tool: "transfer".into(),
            message: "the credit side is down".into(),
        })
    );
    assert_eq!(state.get_raw("app:debited"), None);
    assert_eq!(state.recent_mutations(), []);
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("transfer"))),
        r#"{"id":"fc_8","name":"transfer","response":{"error":"tool `transfer` failed: the credit side is down"}}"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_is_reported_and_the_session_goes_on() {
    let mut tools = dispatcher();
    let buggy = SimpleTool::new("buggy", "Panics.", None, |args: Value, _ctx| async move {
        let seats = args["seats"].as_array().map(Vec::len).unwrap_or_default();
        if seats == 0 {
            panic!("no seats configured for {}", args["room"]);
        }
        Ok(json!(seats))
    });
    assert_eq!(tools.register(buggy), Ok(()));
    let state = State::new();
    let outcome = run(
        &tools,
        &call("fc_9", "buggy", json!({ "room": "A" })),
        &state,
    )
    .await;
    assert_eq!(
        outcome.result,
        Err(ToolError::Panicked {
            tool: "buggy".into(),
            message: r#"no seats configured for "A""#.into(),
        })
    );
    let after = run(
        &tools,
        &call("fc_10", "get_weather", json!({ "city": "Oslo" })),
        &state,
    )
    .await;
    assert_eq!(after.result, Ok(json!({ "city": "Oslo", "celsius": 21 })));
}

/// A hand-written tool that panics in `call` itself, before it has a future to return.
struct PanicsEarly;

impl ToolFunction for PanicsEarly {
    fn name(&self) -> &str {
        "panics_early"
    }
    fn description(&self) -> &str {
        "Panics before it starts."
    }
    fn parameters(&self) -> Option<Value> {
        None
    }
    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let limit = args["limit"].as_u64().unwrap_or_default();
        assert!(limit > 0, "limit must be positive, got {limit}");
        async move { Ok(json!(limit)) }.boxed()
    }
}

#[tokio::test(start_paused = true)]
async fn a_tool_panicking_before_its_future_exists_is_caught_too() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(PanicsEarly), Ok(()));
    let outcome = run(
        &tools,
        &call("fc_p", "panics_early", json!({})),
        &State::new(),
    )
    .await;
    assert_eq!(
        outcome.result,
        Err(ToolError::Panicked {
            tool: "panics_early".into(),
            message: "limit must be positive, got 0".into(),
        })
    );
    let fine = run(
        &tools,
        &call("fc_q", "panics_early", json!({ "limit": 3 })),
        &State::new(),
    )
    .await;
    assert_eq!(fine.result, Ok(json!(3)));
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_times_out_after_exactly_the_default_30_s() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(sleeper("slow", 60)), Ok(()));
    let state = State::new();
    let start = Instant::now();
    let outcome = run(&tools, &call("fc_11", "slow", json!({})), &state).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::Timeout {
            tool: "slow".into(),
            after: Duration::from_secs(30),
        })
    );
    assert_eq!(outcome.duration, Duration::from_secs(30));
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    assert_eq!(state.get_raw("app:slow"), None);
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("slow"))),
        r#"{"id":"fc_11","name":"slow","response":{"error":"tool `slow` timed out after 30s"}}"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_overrides_the_default() {
    let mut tools = ToolDispatcher::new().with_timeout(Duration::from_secs(10));
    assert_eq!(tools.register(sleeper("slow", 60)), Ok(()));
    assert_eq!(tools.register(sleeper("patient", 60)), Ok(()));
    assert_eq!(
        tools.set_timeout("patient", Duration::from_secs(90)),
        Ok(())
    );
    let state = State::new();
    let slow = run(&tools, &call("fc_12", "slow", json!({})), &state).await;
    assert_eq!(slow.duration, Duration::from_secs(10));
    assert_eq!(
        slow.result,
        Err(ToolError::Timeout {
            tool: "slow".into(),
            after: Duration::from_secs(10),
        })
    );
    let patient = run(&tools, &call("fc_13", "patient", json!({})), &state).await;
    assert_eq!(patient.duration, Duration::from_secs(60));
    assert_eq!(patient.result, Ok(json!("slept")));
    assert_eq!(state.get_raw("app:patient"), Some(json!(60)));
}

/// Sets its flag when dropped: proof that the tool's future is gone.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_call_aborts_the_tool_task() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let mut tools = ToolDispatcher::new();
    let long = SimpleTool::new(
        "long",
        "Takes a minute.",
        None,
        move |_args, ctx: ToolContext| {
            let guard = DropFlag(flag.clone());
            async move {
                let _guard = guard;
                ctx.state
                    .set("app:half_way", true)
                    .map_err(|e| ctx.fail(e))?;
                sleep(Duration::from_secs(60)).await;
                Ok(json!("done"))
            }
        },
    );
    assert_eq!(tools.register(long), Ok(()));
    let state = State::new();
    let the_call = call("fc_14", "long", json!({}));
    let (ctx, delta) = context(&the_call, &state);
    let cancel = ctx.cancel.clone();
    let start = Instant::now();
    let (outcome, ()) = tokio::join!(run_call(&tools, &the_call, ctx, None), async {
        sleep(Duration::from_secs(3)).await;
        cancel.cancel();
    });
    assert_eq!(
        outcome.result,
        Err(ToolError::Cancelled {
            tool: "long".into()
        })
    );
    assert_eq!(outcome.duration, Duration::from_secs(3));
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future is still alive"
    );
    assert!(delta.is_dirty());
    assert_eq!(outcome.settle(&delta).await, Ok(()));
    assert!(!delta.is_dirty());
    assert_eq!(state.get_raw("app:half_way"), None);
}

#[tokio::test(start_paused = true)]
async fn the_phase_filter_rejects_tools_it_does_not_allow() {
    let tools = dispatcher();
    let state = State::new();
    let allowed = vec!["get_weather".to_owned()];
    let filter = PhaseToolFilter {
        phase: "greeting",
        allowed: &allowed,
    };
    let booking = call(
        "fc_15",
        "book_table",
        json!({ "party_size": 2, "time": "20:00", "seating": "indoor" }),
    );
    let (ctx, _delta) = context(&booking, &state);
    let outcome = run_call(&tools, &booking, ctx, Some(filter)).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::NotAllowed {
            tool: "book_table".into(),
            phase: "greeting".into(),
        })
    );
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("book_table"))),
        r#"{"id":"fc_15","name":"book_table","response":{"error":"tool `book_table` is not available in the current phase `greeting`"}}"#
    );
    assert_eq!(state.get_raw("app:booking_time"), None);

    let typo = call("fc_16", "get_wether", json!({}));
    let (ctx, _delta) = context(&typo, &state);
    let outcome = run_call(&tools, &typo, ctx, Some(filter)).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::UnknownTool {
            name: "get_wether".into(),
            available: vec!["get_weather".into()],
        })
    );

    let weather = call("fc_17", "get_weather", json!({ "city": "Rome" }));
    let (ctx, _delta) = context(&weather, &state);
    let outcome = run_call(&tools, &weather, ctx, Some(filter)).await;
    assert_eq!(outcome.result, Ok(json!({ "city": "Rome", "celsius": 21 })));
}

#[tokio::test(start_paused = true)]
async fn an_empty_phase_filter_allows_nothing() {
    let tools = dispatcher();
    let weather = call("fc_18", "get_weather", json!({ "city": "Rome" }));
    let (ctx, _delta) = context(&weather, &State::new());
    let filter = PhaseToolFilter {
        phase: "goodbye",
        allowed: &[],
    };
    let outcome = run_call(&tools, &weather, ctx, Some(filter)).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::NotAllowed {
            tool: "get_weather".into(),
            phase: "goodbye".into(),
        })
    );
}

#[tokio::test(start_paused = true)]
async fn calls_run_concurrently_and_responses_pair_with_their_ids() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(sleeper("first", 5)), Ok(()));
    assert_eq!(tools.register(sleeper("second", 5)), Ok(()));
    let state = State::new();
    let calls = [
        call("fc_a", "first", json!({})),
        call("fc_b", "second", json!({})),
    ];
    let start = Instant::now();
    let outcomes =
        futures_util::future::join_all(calls.iter().map(|c| run(&tools, c, &state))).await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    let responses: Vec<String> = outcomes
        .iter()
        .map(|outcome| wire(&outcome.to_response(&tools.mode(&outcome.name))))
        .collect();
    assert_eq!(
        responses,
        [
            r#"{"id":"fc_a","name":"first","response":{"result":"slept"}}"#,
            r#"{"id":"fc_b","name":"second","response":{"result":"slept"}}"#,
        ]
    );
    assert_eq!(
        outcomes.iter().map(|o| o.duration).collect::<Vec<_>>(),
        [Duration::from_secs(5), Duration::from_secs(5)]
    );
}

#[tokio::test(start_paused = true)]
async fn writes_reach_the_journal_in_settle_order_not_finish_order() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(sleeper("slow", 8)), Ok(()));
    assert_eq!(tools.register(sleeper("quick", 1)), Ok(()));
    let state = State::new();
    state.set_clock(Arc::new(ManualClock::new(1_718_000_000_000)));
    let slow = call("fc_s", "slow", json!({}));
    let quick = call("fc_q", "quick", json!({}));
    let (slow_ctx, slow_delta) = context(&slow, &state);
    let (quick_ctx, quick_delta) = context(&quick, &state);
    let (slow_outcome, quick_outcome) = tokio::join!(
        run_call(&tools, &slow, slow_ctx, None),
        run_call(&tools, &quick, quick_ctx, None)
    );
    // The quick tool wrote first, but the runtime answers (and settles) in call order.
    assert_eq!(slow_outcome.settle(&slow_delta).await, Ok(()));
    assert_eq!(quick_outcome.settle(&quick_delta).await, Ok(()));
    let journal: Vec<(u64, String, Value, bool)> = state
        .recent_mutations()
        .into_iter()
        .map(|m| (m.sequence, m.key, m.new, m.delta))
        .collect();
    assert_eq!(
        journal,
        [
            (1, "app:slow".to_owned(), json!(8), true),
            (2, "app:quick".to_owned(), json!(1), true),
        ]
    );
}

// ---- background tools ----

#[tokio::test(start_paused = true)]
async fn a_background_tool_acks_at_once_then_delivers_with_its_scheduling() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(sleeper("search_flights", 4)), Ok(()));
    assert_eq!(
        tools.set_background("search_flights", Scheduling::WhenIdle),
        Ok(())
    );
    let mode = tools.mode("search_flights");
    assert!(matches!(
        mode,
        ToolExecutionMode::Background {
            scheduling: Scheduling::WhenIdle,
            formatter: None
        }
    ));
    let search = call("fc_bg", "search_flights", json!({ "to": "LIS" }));
    assert_eq!(
        running_ack(&search, &mode).as_ref().map(wire).as_deref(),
        Some(
            r#"{"id":"fc_bg","name":"search_flights","response":{"status":"running","tool":"search_flights"},"scheduling":"SILENT","willContinue":true}"#
        )
    );
    let outcome = run(&tools, &search, &State::new()).await;
    assert_eq!(outcome.duration, Duration::from_secs(4));
    assert_eq!(
        wire(&outcome.to_response(&mode)),
        r#"{"id":"fc_bg","name":"search_flights","response":{"status":"completed","tool":"search_flights","result":"slept"},"scheduling":"WHEN_IDLE"}"#
    );
    assert_eq!(running_ack(&search, &tools.mode("other")), None);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_background_call_is_answered_as_cancelled() {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(sleeper("search_flights", 60)), Ok(()));
    assert_eq!(
        tools.set_background("search_flights", Scheduling::Interrupt),
        Ok(())
    );
    let search = call("fc_gone", "search_flights", json!({}));
    let (ctx, _delta) = context(&search, &State::new());
    ctx.cancel.cancel();
    let outcome = run_call(&tools, &search, ctx, None).await;
    assert_eq!(outcome.duration, Duration::ZERO);
    assert_eq!(
        wire(&outcome.to_response(&tools.mode("search_flights"))),
        r#"{"id":"fc_gone","name":"search_flights","response":{"status":"cancelled","call_id":"fc_gone"},"scheduling":"INTERRUPT"}"#
    );
}
