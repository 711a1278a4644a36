//! A tool-using `LlmTextAgent`'s run, recorded as an agent trace, shown by `reel trace show`:
//! each model call as a step of the agent, each tool call under the call that made it, with
//! its arguments, its result (an error response included) and its time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel::agents::{LlmTextAgent, TextAgent};
use reel::llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream, LlmUsage, TraceRecorder};
use reel_actors::clock::TokioClock;
use reel_actors::state::State;
use reel_actors::tools::{ToolContext, ToolDispatcher, ToolError, ToolFunction};
use reel_protocol::FunctionCall;
use serde_json::{Value, json};

/// A model answering each call with the next chunk, after 100 ms of (virtual) thought.
struct Script(Mutex<VecDeque<LlmChunk>>);

impl BaseLlm for Script {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let chunk = self.0.lock().unwrap().pop_front().unwrap();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
        })
    }
}

/// The weather, after 20 ms; a city without a station is the tool's error.
struct Weather;

impl ToolFunction for Weather {
    fn name(&self) -> &str {
        "get_weather"
    }

    fn description(&self) -> &str {
        "The weather in a city."
    }

    fn parameters(&self) -> Option<Value> {
        Some(json!({"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}))
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            match args["city"].as_str() {
                Some("Lisbon") => Ok(json!({"celsius": 21})),
                other => Err(ctx.fail(format!("no station in {}", other.unwrap_or("?")))),
            }
        })
    }
}

fn call(id: &str, city: &str) -> FunctionCall {
    FunctionCall {
        id: Some(id.to_owned()),
        name: Some("get_weather".to_owned()),
        args: Some(json!({"city": city}).into()),
        ..FunctionCall::default()
    }
}

fn usage(prompt: u64, response: u64) -> Option<LlmUsage> {
    Some(LlmUsage {
        prompt_tokens: prompt,
        response_tokens: response,
        total_tokens: prompt + response,
    })
}

#[tokio::test(start_paused = true)]
async fn reel_trace_show_prints_each_model_call_and_each_tool_call_of_the_agent() {
    let model = Arc::new(Script(Mutex::new(VecDeque::from([
        LlmChunk {
            function_calls: vec![call("w1", "Lisbon"), call("w2", "Atlantis")],
            finish_reason: Some("STOP".into()),
            usage: usage(30, 8),
            ..LlmChunk::default()
        },
        LlmChunk {
            text: "Lisbon: 21 °C. Atlantis has no station.".into(),
            finish_reason: Some("STOP".into()),
            usage: usage(60, 12),
            ..LlmChunk::default()
        },
    ]))));
    let recorder = TraceRecorder::new(
        "forecast",
        "forecaster",
        Arc::new(TokioClock::anchored_at(1_764_000_000_000)),
    );
    let traced: Arc<dyn BaseLlm> = Arc::new(recorder.wrap(model));
    let mut tools = ToolDispatcher::new();
    tools.register(Weather).unwrap();
    let agent = LlmTextAgent::new("forecaster", traced).tools(tools);
    let state = State::new();
    state.set("input", "Lisbon and Atlantis?").await.unwrap();
    agent.run(&state).await.unwrap();

    let dir = std::env::temp_dir().join(format!("reel-agent-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("forecast.trace.json");
    recorder.save(&path).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["trace", "show", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8(output.stderr).unwrap()
        ),
        (Some(0), String::new())
    );
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        r#"trace forecast · agent forecaster · captured 2025-11-24T16:00:00.000Z · format 1.0

turn 1  +0.000s  100 ms · STOP
  agent       forecaster
  model       gemini-2.5-flash
  prompt      "Lisbon and Atlantis?"
  tool        get_weather({"city":"Lisbon"}) → {"celsius":21} (20 ms)
  tool        get_weather({"city":"Atlantis"}) → {"error":"tool `get_weather` failed: no station in Atlantis"} (20 ms)
  tokens      30 prompt · 8 completion · 38 total

turn 2  +0.120s  ttft 100 ms · 100 ms · STOP
  agent       forecaster
  model       gemini-2.5-flash
  prompt      "Lisbon and Atlantis?"
  response    "Lisbon: 21 °C. Atlantis has no station."
  tokens      60 prompt · 12 completion · 72 total

performance
  count       2 turns · 2 tool calls · 0 interruptions
  duration    200 ms waiting for the model
  tokens      90 prompt · 20 completion · 110 total
  ttft        mean 100.0 ms · p50 100 ms · max 100 ms
"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
