// src/lib.rs
use reel::fluent::{Live, LiveBuilder};
use reel::tools::{ToolContext, ToolError, TypedTool};
use serde_json::{Value, json};

/// Arguments of `get_weather`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct WeatherArgs {
    /// The city, e.g. "London".
    pub city: String,
}

/// Looks a city up and remembers it, so the conversation can move on.
async fn get_weather(args: WeatherArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    let (temp_c, conditions) = match args.city.as_str() {
        "London" => (14, "cloudy"),
        "Paris" => (18, "sunny"),
        _ => return Err(ctx.fail(format!("no weather data for {}", args.city))),
    };
    ctx.state
        .set("app:last_city", &args.city)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"city": args.city, "temp_c": temp_c, "conditions": conditions}))
}

/// The assistant: text answers, one tool, two phases.
pub fn assistant() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(TypedTool::new(
            "get_weather",
            "Current weather for a city: temperature in °C and conditions.",
            get_weather,
        ))
        .phase("greeting", |p| {
            p.instruction(
                "You are a friendly weather assistant. Ask which city the user wants the \
                 weather for, and use get_weather for every forecast.",
            )
            .transition_with(
                "farewell",
                |s| s.contains("app:last_city"),
                "a city was looked up",
            )
        })
        .phase("farewell", |p| {
            p.instruction("Say a short goodbye.").terminal()
        })
}
