//! Fixtures of the tool tests, shared by `reel-tools`' tests and the tree's engine tests
//! (`actors/tests/it/tools.rs`, through `#[path]`): a restaurant's typed tools, calls
//! from the model, and one call run and settled outside a session.

use reel_actors::state::{DeltaState, State};
use reel_protocol::{FunctionCall, FunctionResponse};
use reel_tools::{ToolContext, ToolDispatcher, ToolOutcome, TypedTool, run_call};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Book a table at the restaurant.
#[derive(Debug, Deserialize, JsonSchema)]
struct BookTableArgs {
    /// Number of guests.
    party_size: u8,
    /// Time in 24-hour format, e.g. "19:30".
    time: String,
    /// Where to sit.
    seating: Seating,
    /// Anything the restaurant should know.
    note: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Seating {
    Indoor,
    Terrace,
}

#[derive(Serialize)]
struct Booking {
    confirmation: String,
    seating: Seating,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city to look up.
    city: String,
}

pub(crate) fn book_table() -> TypedTool {
    TypedTool::new(
        "book_table",
        "Books a table.",
        |args: BookTableArgs, ctx: ToolContext| async move {
            if args.party_size > 12 {
                return Err(ctx.fail(format!("no table for {} guests", args.party_size)));
            }
            ctx.state
                .set("app:booking_time", &args.time)
                .map_err(|e| ctx.fail(e))?;
            Ok(Booking {
                confirmation: format!("T-{}-{}", args.party_size, args.time),
                seating: args.seating,
                note: args.note,
            })
        },
    )
}

pub(crate) fn get_weather() -> TypedTool {
    TypedTool::new(
        "get_weather",
        "The current weather in a city.",
        |args: WeatherArgs, _ctx| async move { Ok(json!({ "city": args.city, "celsius": 21 })) },
    )
}

pub(crate) fn call(id: &str, name: &str, args: Value) -> FunctionCall {
    FunctionCall {
        id: Some(id.into()),
        name: Some(name.into()),
        args: Some(args.into()),
        ..FunctionCall::default()
    }
}

/// A context for `call` over a fresh delta view of `state`; the view is returned too, to
/// settle it.
pub(crate) fn context(call: &FunctionCall, state: &State) -> (ToolContext, DeltaState) {
    let delta = state.with_delta();
    let ctx = ToolContext::for_call(call, delta.clone(), CancellationToken::new());
    (ctx, delta)
}

pub(crate) async fn run(tools: &ToolDispatcher, call: &FunctionCall, state: &State) -> ToolOutcome {
    let (ctx, delta) = context(call, state);
    let outcome = run_call(tools, call, ctx, None).await;
    assert_eq!(outcome.settle(&delta).await, Ok(()));
    outcome
}

pub(crate) fn wire(response: &FunctionResponse) -> String {
    serde_json::to_string(response).unwrap_or_default()
}

pub(crate) fn dispatcher() -> ToolDispatcher {
    let mut tools = ToolDispatcher::new();
    assert_eq!(tools.register(book_table()), Ok(()));
    assert_eq!(tools.register(get_weather()), Ok(()));
    tools
}
