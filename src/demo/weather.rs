//! The demo's weather assistant: its config, its `get_weather` tool and its phases.
//!
//! The same assistant runs against the bundled tape (`reel demo`), against the real API
//! (`reel demo --live`), and in the replay that checks both.

use reel_actors::phases::{Phase, PhaseError, PhaseMachine};
use reel_protocol::SessionConfig;
use reel_tools::{DispatchError, ToolDispatcher, ToolError, TypedTool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The model the demo talks to (it answers in text, so the report reads well).
pub const MODEL: &str = "gemini-live-2.5-flash-preview";

/// The assistant's setup: a text-answering weather assistant. The system instruction comes
/// from the initial phase.
pub fn config() -> SessionConfig {
    SessionConfig::new(MODEL).text_only().session_resume(true)
}

/// Arguments of `get_weather`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WeatherArgs {
    /// The city, e.g. "London".
    pub city: String,
}

/// Current conditions, as `get_weather` reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conditions {
    /// The city.
    pub city: String,
    /// Temperature in °C.
    pub temp_c: i64,
    /// Sky and weather.
    pub conditions: &'static str,
}

/// The demo's weather data: a small table, so that the demo needs no network and its
/// answers are the same on every run.
pub fn lookup(city: &str) -> Option<Conditions> {
    let (temp_c, conditions) = match city.trim().to_ascii_lowercase().as_str() {
        "london" => (14, "cloudy"),
        "paris" => (17, "sunny"),
        "tokyo" => (21, "clear"),
        "new york" => (19, "light rain"),
        "sydney" => (23, "windy"),
        _ => return None,
    };
    Some(Conditions {
        city: city.trim().to_owned(),
        temp_c,
        conditions,
    })
}

/// The tools: `get_weather`, which looks a city up and remembers it in `app:last_city`.
pub fn tools() -> Result<ToolDispatcher, DispatchError> {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher.register(TypedTool::new::<WeatherArgs, _, _, _>(
        "get_weather",
        "Current weather for a city: temperature in °C and conditions.",
        |args: WeatherArgs, ctx| async move {
            let Some(found) = lookup(&args.city) else {
                return Err(ToolError::ExecutionFailed {
                    tool: ctx.tool.clone(),
                    message: format!("no weather data for {}", args.city),
                });
            };
            ctx.state
                .set("app:last_city", &found.city)
                .map_err(|e| ctx.fail(e))?;
            ctx.state
                .set("app:last_temp_c", found.temp_c)
                .map_err(|e| ctx.fail(e))?;
            let value: Value = json!(found);
            Ok(value)
        },
    ))?;
    Ok(dispatcher)
}

/// The conversation's phases: greet, give the forecast once a city is known, say goodbye
/// once the user has had an answer.
pub fn phases() -> Result<PhaseMachine, PhaseError> {
    PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction(
                    "You are a friendly weather assistant. Greet the user and ask which city \
                     they want the weather for. Use get_weather for every forecast.",
                )
                .transition_with(
                    "forecast",
                    |state| state.contains("app:last_city"),
                    "a city was looked up",
                ),
        )
        .phase(
            Phase::new("forecast")
                .instruction(
                    "Tell the user the weather you looked up, in one sentence, and ask if \
                     they need anything else.",
                )
                .transition_with(
                    "farewell",
                    |state| state.get::<u64>("session:turn_count").unwrap_or(0) >= 2,
                    "the user has had their answer",
                ),
        )
        .phase(
            Phase::new("farewell")
                .instruction("Say a short goodbye.")
                .terminal(),
        )
        .build()
}

/// What the user says, turn by turn.
pub const USER_TURNS: [&str; 3] = [
    "Hello!",
    "What's the weather in London?",
    "Thanks, that's all I needed.",
];
