//! LlmTextAgent's tool loop: the model's calls run at once and are answered in call order,
//! a tool's failure goes back to the model, the bound of rounds is a typed error, and a
//! pipeline with a tool-using agent recorded against the REST stand-in replays offline
//! identically with no model call, its trace showing each model call and each tool call.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::clock::TokioClock;
use reel_actors::state::State;
use reel_actors::tools::{ToolContext, ToolDispatcher, ToolError, ToolFunction};
use reel_agents::{AgentError, LlmTextAgent, SequentialTextAgent, SharedAgent, TextAgent};
use reel_llm::testing::gemini_standin::{Answer, GeminiStandin};
use reel_llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream,
    TraceRecorder,
};
use reel_protocol::FunctionCall;
use serde_json::{Value, json};
use tokio::sync::Notify;

type ToolFn =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync;

/// A tool made of a closure.
struct FnTool {
    name: &'static str,
    run: Box<ToolFn>,
}

impl FnTool {
    fn new(
        name: &'static str,
        run: impl Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        FnTool {
            name,
            run: Box::new(run),
        }
    }
}

impl ToolFunction for FnTool {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "A test tool."
    }

    fn parameters(&self) -> Option<Value> {
        Some(json!({"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}))
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        (self.run)(args, ctx)
    }
}

/// A model answering each call with the next scripted chunk, keeping the requests.
struct ToolScript {
    answers: Mutex<VecDeque<LlmChunk>>,
    requests: Mutex<Vec<LlmRequest>>,
}

impl ToolScript {
    fn new(answers: impl IntoIterator<Item = LlmChunk>) -> Arc<Self> {
        Arc::new(ToolScript {
            answers: Mutex::new(answers.into_iter().collect()),
            requests: Mutex::default(),
        })
    }

    fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl BaseLlm for ToolScript {
    fn model_id(&self) -> &str {
        "scripted"
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.requests.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().pop_front();
        Box::pin(async move {
            let chunk = answer.unwrap_or_else(|| LlmChunk::text("no answer left"));
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
        })
    }
}

fn call(id: &str, name: &str, city: &str) -> FunctionCall {
    FunctionCall {
        id: (!id.is_empty()).then(|| id.to_owned()),
        name: Some(name.to_owned()),
        args: Some(json!({"city": city}).into()),
        ..FunctionCall::default()
    }
}

fn calling(calls: Vec<FunctionCall>) -> LlmChunk {
    LlmChunk {
        function_calls: calls,
        ..LlmChunk::default()
    }
}

/// The function responses of the last turn of `request`, as JSON.
fn responses_sent(request: &LlmRequest) -> Value {
    serde_json::to_value(request.contents.last().unwrap()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_rounds_calls_run_at_once_and_are_answered_in_call_order_failures_included() {
    // `slow` finishes only once `fast` has run: were the calls run one after the other, in
    // call order, `slow` would wait until its timeout.
    let fast_done = Arc::new(Notify::new());
    let mut tools = ToolDispatcher::new().with_timeout(Duration::from_secs(5));
    let waited = fast_done.clone();
    tools
        .register(FnTool::new("slow", move |args, _ctx| {
            let waited = waited.clone();
            Box::pin(async move {
                waited.notified().await;
                Ok(json!({"slow": args["city"]}))
            })
        }))
        .unwrap();
    let done = fast_done.clone();
    tools
        .register(FnTool::new("fast", move |args, ctx| {
            let done = done.clone();
            Box::pin(async move {
                ctx.state
                    .set("app:fast_city", &args["city"])
                    .map_err(|e| ctx.fail(e))?;
                done.notify_one();
                Ok(json!("fast done"))
            })
        }))
        .unwrap();
    tools
        .register(FnTool::new("broken", |_args, ctx| {
            Box::pin(async move {
                ctx.state.set("app:broken", true).map_err(|e| ctx.fail(e))?;
                Err(ctx.fail("the service is down"))
            })
        }))
        .unwrap();
    let model = ToolScript::new([
        calling(vec![
            call("c1", "slow", "Lisbon"),
            call("c2", "fast", "Porto"),
            call("", "broken", "Faro"),
            call("c4", "missing", "Braga"),
        ]),
        LlmChunk::text("Lisbon is slow, Porto fast."),
    ]);
    let agent = LlmTextAgent::new("weather", model.clone())
        .instruction("Use the tools.")
        .tools(tools);
    let state = State::new();
    state.set("input", "Weather?").await.unwrap();

    assert_eq!(
        agent.run(&state).await.unwrap(),
        "Lisbon is slow, Porto fast."
    );
    assert_eq!(
        state.get::<String>("output").as_deref(),
        Some("Lisbon is slow, Porto fast.")
    );
    // A successful call's writes are committed; a failed call's rolled back.
    assert_eq!(
        state.get::<String>("app:fast_city").as_deref(),
        Some("Porto")
    );
    assert_eq!(state.get::<bool>("app:broken"), None);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let declared: Vec<_> = requests[0].tools[0]
        .function_declarations
        .iter()
        .flatten()
        .map(|declaration| declaration.name.clone().unwrap())
        .collect();
    assert_eq!(declared, ["broken", "fast", "slow"]);
    assert_eq!(
        serde_json::to_value(&requests[1].contents[1]).unwrap(),
        json!({"role": "model", "parts": [
            {"functionCall": {"id": "c1", "name": "slow", "args": {"city": "Lisbon"}}},
            {"functionCall": {"id": "c2", "name": "fast", "args": {"city": "Porto"}}},
            {"functionCall": {"name": "broken", "args": {"city": "Faro"}}},
            {"functionCall": {"id": "c4", "name": "missing", "args": {"city": "Braga"}}}
        ]})
    );
    assert_eq!(
        responses_sent(&requests[1]),
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "slow", "response": {"slow": "Lisbon"}}},
            {"functionResponse": {"id": "c2", "name": "fast", "response": {"result": "fast done"}}},
            {"functionResponse": {"name": "broken",
                "response": {"error": "tool `broken` failed: the service is down"}}},
            {"functionResponse": {"id": "c4", "name": "missing",
                "response": {"error": "unknown tool `missing`; available tools: broken, fast, slow"}}}
        ]})
    );
}

#[tokio::test]
async fn a_model_still_calling_tools_after_the_bound_is_a_typed_error_naming_agent_and_bound() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let mut tools = ToolDispatcher::new();
    tools
        .register(FnTool::new("lookup", move |_args, _ctx| {
            counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(json!({"found": false})) })
        }))
        .unwrap();
    let model = ToolScript::new((0..5).map(|_| calling(vec![call("", "lookup", "X")])));
    let agent = LlmTextAgent::new("searcher", model.clone())
        .tools(tools)
        .max_tool_rounds(2);
    let error = agent.run(&State::new()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `searcher`: the model still called tools (lookup) after 2 rounds, \
         the agent's max_tool_rounds"
    );
    assert!(
        matches!(&error, AgentError::ToolRounds { agent, bound: 2, calls } if agent == "searcher" && calls == &["lookup"])
    );
    assert_eq!(error.agent(), "searcher");
    // Three model calls: two rounds of tools, then the answer that broke the bound.
    assert_eq!(model.requests().len(), 3);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// Counts the calls that reach the live model.
struct Counting {
    inner: Arc<dyn BaseLlm>,
    calls: AtomicUsize,
}

impl BaseLlm for Counting {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.generate_stream(request)
    }
}

fn weather_tools(runs: Arc<AtomicUsize>) -> ToolDispatcher {
    let mut tools = ToolDispatcher::new();
    tools
        .register(FnTool::new("get_weather", move |args, _ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                match args["city"].as_str() {
                    Some("Lisbon") => Ok(json!({"celsius": 21, "sky": "clear"})),
                    Some(other) => Err(ToolError::ExecutionFailed {
                        tool: "get_weather".to_owned(),
                        message: format!("no station in {other}"),
                    }),
                    None => Err(ToolError::InvalidArgs {
                        tool: "get_weather".to_owned(),
                        message: "missing field `city`".to_owned(),
                    }),
                }
            })
        }))
        .unwrap();
    tools
}

/// A forecaster that uses the weather tool, then an editor that shortens its text.
fn pipeline(model: &Arc<dyn BaseLlm>, runs: Arc<AtomicUsize>) -> SequentialTextAgent {
    let forecaster: SharedAgent = Arc::new(
        LlmTextAgent::new("forecaster", model.clone())
            .instruction("Forecast with the tool.")
            .tools(weather_tools(runs)),
    );
    let editor: SharedAgent =
        Arc::new(LlmTextAgent::new("editor", model.clone()).instruction("Shorten it."));
    SequentialTextAgent::new("forecast", vec![forecaster, editor])
}

fn sse(parts: Value) -> Answer {
    Answer::sse([json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25}
    })])
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-agents-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Each model call of a trace: the agent, the tool calls its answer made (name, arguments,
/// result) and its text.
fn steps(trace: &reel_recorder::trace::AgentTrace) -> Vec<(String, Vec<Value>, Option<String>)> {
    trace
        .turns()
        .iter()
        .map(|turn| {
            let response = turn.response.unwrap();
            let tools = response
                .tool_calls
                .iter()
                .map(|call| json!([call.name, call.arguments, call.result]))
                .collect();
            (
                turn.request.agent.clone().unwrap(),
                tools,
                response.text.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_pipeline_with_a_tool_using_agent_records_and_replays_identically_with_no_model_call() {
    let dir = temp_dir("tool-replay");
    let cassette_path = dir.join("forecast.cassette.json");

    let standin = GeminiStandin::bind().await;
    standin.push(sse(json!([
        {"functionCall": {"id": "w1", "name": "get_weather", "args": {"city": "Lisbon"}}},
        {"functionCall": {"id": "w2", "name": "get_weather", "args": {"city": "Atlantis"}}}
    ])));
    standin.push(sse(
        json!([{"text": "Lisbon: 21 °C and clear; Atlantis has no station."}]),
    ));
    standin.push(sse(json!([{"text": "Lisbon 21 °C, clear."}])));
    let live: Arc<dyn BaseLlm> = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let cassette = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let recorder = TraceRecorder::new("forecast", "forecast", Arc::new(TokioClock::anchored_at(0)));
    let recording: Arc<dyn BaseLlm> = Arc::new(recorder.wrap(cassette.wrap(live)));
    let recorded_runs = Arc::new(AtomicUsize::new(0));
    let state = State::new();
    state.set("input", "Lisbon and Atlantis").await.unwrap();
    let recorded = pipeline(&recording, recorded_runs.clone())
        .run(&state)
        .await
        .unwrap();
    assert_eq!(recorded, "Lisbon 21 °C, clear.");
    assert_eq!(recorded_runs.load(Ordering::SeqCst), 2);
    let bodies: Vec<Value> = standin.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 3);
    assert_eq!(
        bodies[0]["tools"],
        json!([{"functionDeclarations": [{"name": "get_weather", "description": "A test tool.",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}])
    );
    assert_eq!(
        bodies[1]["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "w1", "name": "get_weather",
                "response": {"celsius": 21, "sky": "clear"}}},
            {"functionResponse": {"id": "w2", "name": "get_weather",
                "response": {"error": "tool `get_weather` failed: no station in Atlantis"}}}
        ]})
    );
    assert_eq!(bodies[2].get("tools"), None);
    drop(standin);
    let recorded_trace = recorder.trace();

    // Offline: the cassette answers every call; the live model behind it is never asked.
    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let never = Arc::new(Counting {
        inner: Arc::new(NoModel),
        calls: AtomicUsize::new(0),
    });
    let recorder = TraceRecorder::new("forecast", "forecast", Arc::new(TokioClock::anchored_at(0)));
    let replaying: Arc<dyn BaseLlm> = Arc::new(recorder.wrap(cassette.wrap(never.clone())));
    let replayed_runs = Arc::new(AtomicUsize::new(0));
    let replay_state = State::new();
    replay_state
        .set("input", "Lisbon and Atlantis")
        .await
        .unwrap();
    let replayed = pipeline(&replaying, replayed_runs.clone())
        .run(&replay_state)
        .await
        .unwrap();
    assert_eq!(replayed, recorded);
    assert_eq!(never.calls.load(Ordering::SeqCst), 0);
    assert_eq!(replayed_runs.load(Ordering::SeqCst), 2);
    assert!(cassette.unused().await.is_empty());
    assert_eq!(
        replay_state.get::<String>("output"),
        state.get::<String>("output")
    );

    // The trace, live and replayed: each model call, and each tool call with its result.
    let expected = vec![
        (
            "forecaster".to_owned(),
            vec![
                json!(["get_weather", {"city": "Lisbon"}, {"celsius": 21, "sky": "clear"}]),
                json!(["get_weather", {"city": "Atlantis"},
                    {"error": "tool `get_weather` failed: no station in Atlantis"}]),
            ],
            None,
        ),
        (
            "forecaster".to_owned(),
            vec![],
            Some("Lisbon: 21 °C and clear; Atlantis has no station.".to_owned()),
        ),
        (
            "editor".to_owned(),
            vec![],
            Some("Lisbon 21 °C, clear.".to_owned()),
        ),
    ];
    assert_eq!(steps(&recorded_trace), expected);
    assert_eq!(steps(&recorder.trace()), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A live model that must never be reached.
struct NoModel;

impl BaseLlm for NoModel {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async {
            Err(LlmError::Http {
                status: 599,
                url: "http://nowhere/".to_owned(),
                message: "the replay reached the live model".to_owned(),
            })
        })
    }
}
