//! 01 — foundations (Crawl): one agent, built with `AgentBuilder` and run. It shows the
//! builder (model, sampling, thinking, copy-on-write: a derived builder leaves its parent
//! as it was), a data contract (`.reads("city")`, `.output_key("forecast")`, checked by
//! `check_contracts` before anything runs), a simple tool (`T::simple`) and a typed tool
//! (`TypedTool`, its arguments a Rust type) that the model calls, and `M::` middleware
//! around the model call (`M::audit` keeps every call's input and outcome, `M::metrics`
//! counts them).
//!
//! ```text
//! cargo run --example 01_foundations                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 01_foundations -- --live
//! GEMINI_API_KEY=… cargo run --example 01_foundations -- --live --record foundations.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/01_foundations.cassette.json`), offline; the tools run again in a
//! replay, and a tool result that differs from the recorded one is a cassette miss. The
//! bundled cassette was recorded with a scripted model standing in for Gemini
//! (`tests/it/cookbook/ex01_foundations.rs` holds the script).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::{MODEL, Models};
use reel::actors::state::State;
use reel::agents::TextAgent;
use reel::compose::{AgentBuilder, AuditLog, M, Metrics, P, S, T, check_contracts};
use reel::llm::BaseLlm;
use reel::tools::{ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/01_foundations.cassette.json`.
pub const NAME: &str = "01_foundations";
/// The city the forecast is for.
pub const CITY: &str = "Lisbon";

/// The typed tool's arguments: the schema the model sees comes from this type.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The city to look up.
    pub city: String,
    /// How many days ahead (0 = today).
    #[serde(default)]
    pub days_ahead: u8,
}

/// Every tool call made, as `name(args) -> result`.
type ToolLog = Arc<Mutex<Vec<String>>>;

fn note(log: &ToolLog, line: String) {
    // A poisoned log only means a panicking thread held it; the lines are whole.
    log.lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(line);
}

/// The forecaster's template: model, sampling, thinking, instruction, contract, tools and
/// middleware. Clone it to derive another agent from it.
pub fn forecaster(tools: &ToolLog, audit: &AuditLog, metrics: &Metrics) -> AgentBuilder {
    let weather_log = tools.clone();
    let weather = TypedTool::new(
        "get_weather",
        "The weather forecast for a city.",
        move |args: WeatherArgs, _ctx| {
            let log = weather_log.clone();
            async move {
                let result = json!({"city": args.city, "sky": "sunny", "high_c": 24, "low_c": 16});
                note(
                    &log,
                    format!(
                        "get_weather(city={}, days_ahead={}) -> {result}",
                        args.city, args.days_ahead
                    ),
                );
                Ok::<Value, ToolError>(result)
            }
        },
    );
    let clock_log = tools.clone();
    let local_time = T::simple(
        "local_time",
        "The local time in a city.",
        move |args: Value| {
            let log = clock_log.clone();
            async move {
                let result = json!({"time": "09:30"});
                note(&log, format!("local_time({args}) -> {result}"));
                Ok(result)
            }
        },
    );
    AgentBuilder::new("forecaster")
        .model(MODEL)
        .instruction(
            P::role("a weather presenter")
                + P::task("Give tomorrow's forecast for the city in the input in one sentence")
                + P::constraint("Use the tools; never guess the weather"),
        )
        .temperature(0.2)
        .thinking(256)
        .reads("city")
        .output_key("forecast")
        .tools(T::function(Arc::new(weather)) | local_time)
        .middleware(M::audit(audit) | M::metrics(metrics))
}

/// The `generationConfig` the agent `builder` would send for `state` (built, not sent).
fn settings(
    builder: &AgentBuilder,
    model: &Arc<dyn BaseLlm>,
    state: &State,
) -> Result<String, Box<dyn Error>> {
    let request = builder.clone().build(model.clone()).request(state)?;
    Ok(serde_json::to_string(
        &request.generation_config.unwrap_or(Value::Null),
    )?)
}

/// The example: build, check, derive, run, and print what happened.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let tools: ToolLog = Arc::default();
    let (audit, metrics) = (AuditLog::new(), Metrics::new());
    let base = forecaster(&tools, &audit, &metrics);
    // Copy-on-write: the derived builder changes its own copy, never `base`.
    let brief = base.clone().temperature(0.9).max_output_tokens(40);

    let model = models.default_model()?;
    let mut out = String::new();
    let state = State::new();
    state.set("city", CITY).await?;
    state.set("input", format!("Tomorrow in {CITY}?")).await?;
    out.push_str("builders (copy-on-write):\n");
    out.push_str(&format!(
        "  base  generationConfig {}\n",
        settings(&base, &model, &state)?
    ));
    out.push_str(&format!(
        "  brief generationConfig {}\n",
        settings(&brief, &model, &state)?
    ));
    out.push_str("  base instruction (P:: sections):\n");
    for line in base.config().instruction.render_static().lines() {
        if !line.is_empty() {
            out.push_str(&format!("    {line}\n"));
        }
    }

    // The data contract: `forecaster` reads `city`, which the `S::set` before it writes.
    let wired = S::set("city", json!(CITY)) >> base.clone();
    let unwired = reel::compose::Composable::from(base.clone());
    out.push_str("contracts:\n");
    out.push_str(&format!(
        "  {}: {} violation(s)\n",
        wired.label(),
        check_contracts(&wired).len()
    ));
    for violation in check_contracts(&unwired) {
        out.push_str(&format!("  {} alone: {violation}\n", unwired.label()));
    }

    let agent = base.build(model);
    let answer = agent.run(&state).await?;
    out.push_str("tool calls (sorted; one round runs them at once):\n");
    let mut calls = tools
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    calls.sort();
    for call in calls {
        out.push_str(&format!("  {call}\n"));
    }
    out.push_str(&format!("answer: {answer}\n"));
    out.push_str(&format!(
        "state forecast: {}\n",
        state.get::<String>("forecast").unwrap_or_default()
    ));
    out.push_str("M::audit:\n");
    for entry in audit.entries() {
        let outcome = match &entry.outcome {
            Ok(output) => format!("ok: {output}"),
            Err(error) => format!("failed: {error}"),
        };
        out.push_str(&format!(
            "  {} <- {:?}: {outcome}\n",
            entry.agent, entry.input
        ));
    }
    let counts = metrics.snapshot();
    out.push_str(&format!(
        "M::metrics: {} call(s), {} succeeded, {} failed\n",
        counts.calls, counts.succeeded, counts.failed
    ));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
