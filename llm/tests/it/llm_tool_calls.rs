//! Tool declarations and function calls through `BaseLlm`: the Gemini REST client sends
//! `tools` and the conversation's `functionCall` / `functionResponse` parts and reads the
//! model's function calls; a cassette (format 2) records them and matches on them, and a
//! format 1 cassette still replays.

use crate::llm_support;

use std::sync::Arc;

use llm_support::{Answer, ScriptedLlm, Step, TempDir, ms, read_json};
use reel_llm::testing::gemini_standin::{Answer as HttpAnswer, GeminiStandin};
use reel_llm::{
    BaseLlm, Cassette, CassetteError, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest,
    LlmResponse, LlmUsage,
};
use reel_protocol::{FunctionCall, FunctionDeclaration, FunctionResponse};
use reel_recorder::clock::ManualClock;
use serde_json::{Value, json};

const MODEL: &str = "gemini-2.5-flash";

fn weather() -> FunctionDeclaration {
    FunctionDeclaration {
        name: Some("get_weather".to_owned()),
        description: Some("The weather in a city.".to_owned()),
        parameters: Some(json!({
            "type": "OBJECT",
            "properties": {"city": {"type": "STRING"}},
            "required": ["city"]
        })),
        ..FunctionDeclaration::default()
    }
}

fn call(id: Option<&str>, city: &str) -> FunctionCall {
    FunctionCall {
        id: id.map(str::to_owned),
        name: Some("get_weather".to_owned()),
        args: Some(json!({"city": city}).into()),
        ..FunctionCall::default()
    }
}

fn reply(id: Option<&str>, celsius: i64) -> FunctionResponse {
    FunctionResponse {
        id: id.map(str::to_owned),
        name: Some("get_weather".to_owned()),
        response: Some(json!({"celsius": celsius})),
        ..FunctionResponse::default()
    }
}

fn first_request() -> LlmRequest {
    LlmRequest::new(MODEL)
        .system("Use the tools.")
        .user("Weather in Lisbon and Porto?")
        .functions(vec![weather()])
}

/// The first request, the model's calls and their responses: the second round.
fn second_request(calls: &LlmResponse, responses: Vec<FunctionResponse>) -> LlmRequest {
    first_request()
        .content(calls.model_content())
        .function_responses(responses)
}

const TOOLS_JSON: &str = r#"[{"functionDeclarations":[{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}]"#;

fn tools_json() -> Value {
    serde_json::from_str(TOOLS_JSON).unwrap()
}

#[tokio::test]
async fn the_rest_client_sends_tools_and_function_responses_and_reads_function_calls() {
    let standin = GeminiStandin::bind().await;
    standin.push(HttpAnswer::json(&json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}}},
            {"functionCall": {"name": "get_weather", "args": {"city": "Porto"}}}
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 10, "totalTokenCount": 40}
    })));
    standin.push(HttpAnswer::sse([
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "21 °C and 18 °C."}]},
                               "finishReason": "STOP"}]}),
    ]));
    let llm = standin.llm_builder(MODEL).build().unwrap();

    let calls = llm.generate(first_request()).await.unwrap();
    assert_eq!(
        calls,
        LlmResponse {
            text: String::new(),
            finish_reason: Some("STOP".into()),
            usage: Some(LlmUsage {
                prompt_tokens: 30,
                response_tokens: 10,
                total_tokens: 40
            }),
            function_calls: vec![call(Some("c1"), "Lisbon"), call(None, "Porto")],
        }
    );

    let second = second_request(&calls, vec![reply(Some("c1"), 21), reply(None, 18)]);
    let answer = llm.generate_stream(second).await.unwrap();
    assert_eq!(
        reel_llm::collect_stream(answer).await.unwrap().text,
        "21 °C and 18 °C."
    );

    let bodies: Vec<Value> = standin.requests().into_iter().map(|r| r.body).collect();
    let first_contents = json!([
        {"role": "user", "parts": [{"text": "Weather in Lisbon and Porto?"}]}
    ]);
    assert_eq!(
        bodies[0],
        json!({
            "contents": first_contents,
            "tools": tools_json(),
            "systemInstruction": {"parts": [{"text": "Use the tools."}]}
        })
    );
    assert_eq!(
        bodies[1],
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Lisbon and Porto?"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}}},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Porto"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"celsius": 21}}},
                    {"functionResponse": {"name": "get_weather", "response": {"celsius": 18}}}
                ]}
            ],
            "tools": tools_json(),
            "systemInstruction": {"parts": [{"text": "Use the tools."}]}
        })
    );
}

#[tokio::test]
async fn a_streamed_function_call_comes_on_its_chunk() {
    let standin = GeminiStandin::bind().await;
    standin.push(HttpAnswer::sse([
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Checking."}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "c9", "name": "get_weather", "args": {"city": "Faro"}}}
        ]}, "finishReason": "STOP"}]}),
    ]));
    let llm = standin.llm_builder(MODEL).build().unwrap();
    let stream = llm.generate_stream(first_request()).await.unwrap();
    let answer = reel_llm::collect_stream(stream).await.unwrap();
    assert_eq!(answer.text, "Checking.");
    assert_eq!(answer.function_calls, [call(Some("c9"), "Faro")]);
    assert_eq!(
        serde_json::to_value(answer.model_content()).unwrap(),
        json!({"role": "model", "parts": [
            {"text": "Checking."},
            {"functionCall": {"id": "c9", "name": "get_weather", "args": {"city": "Faro"}}}
        ]})
    );
}

fn calls_chunk() -> LlmChunk {
    LlmChunk {
        finish_reason: Some("STOP".into()),
        function_calls: vec![call(Some("c1"), "Lisbon"), call(None, "Porto")],
        ..LlmChunk::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_cassette_records_tools_and_function_calls_and_matches_on_them() {
    let dir = TempDir::new("tool-calls-cassette");
    let path = dir.join("tools.cassette.json");
    let live = ScriptedLlm::new(
        MODEL,
        [
            Answer::Steps(vec![Step::Chunk(ms(2), calls_chunk())]),
            Answer::Steps(vec![Step::Chunk(ms(3), LlmChunk::text("21 and 18."))]),
        ],
    );
    let cassette = Cassette::builder(&path, CassetteMode::Record)
        .clock(Arc::new(ManualClock::new(1_765_389_600_000)))
        .open()
        .unwrap();
    let model = cassette.wrap(live.clone());
    let calls = model.generate(first_request()).await.unwrap();
    assert_eq!(calls.function_calls, calls_chunk().function_calls);
    let second = second_request(&calls, vec![reply(Some("c1"), 21), reply(None, 18)]);
    assert_eq!(
        model.generate(second.clone()).await.unwrap().text,
        "21 and 18."
    );

    let file = read_json(&path);
    assert_eq!(file["version"], json!(2));
    assert_eq!(
        file["interactions"][0]["request"],
        json!({
            "model": MODEL,
            "systemInstruction": "Use the tools.",
            "contents": [{"role": "user", "parts": [{"text": "Weather in Lisbon and Porto?"}]}],
            "tools": tools_json()
        })
    );
    assert_eq!(
        file["interactions"][0]["response"],
        json!([{"delayNs": 2_000_000, "text": "", "finishReason": "STOP", "functionCalls": [
            {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}},
            {"name": "get_weather", "args": {"city": "Porto"}}
        ]}])
    );
    assert_eq!(
        file["interactions"][1]["request"]["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"celsius": 21}}},
            {"functionResponse": {"name": "get_weather", "response": {"celsius": 18}}}
        ]})
    );

    // Replayed: the same calls come back, and the conversation built on them matches.
    let replay = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let offline = replay.model(MODEL);
    let replayed = offline.generate(first_request()).await.unwrap();
    assert_eq!(replayed, calls);
    assert_eq!(
        offline.generate(second.clone()).await.unwrap().text,
        "21 and 18."
    );
    assert!(replay.unused().await.is_empty());

    // The cassette matches on them: other declarations, or another tool result, miss.
    let replay = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let offline = replay.model(MODEL);
    let mut other_tools = first_request();
    other_tools.tools[0].function_declarations.as_mut().unwrap()[0].description =
        Some("Changed.".to_owned());
    let miss = |error: LlmError| match error {
        LlmError::Cassette(CassetteError::Miss { nearest, .. }) => {
            nearest.map(|(index, mismatch)| (index, mismatch.path.to_string()))
        }
        other => panic!("expected a miss, got {other}"),
    };
    assert_eq!(
        miss(offline.generate(other_tools).await.unwrap_err()),
        Some((0, "tools[0].functionDeclarations[0].description".to_owned()))
    );
    // (The nearest recorded request named is the first to the same model: the first
    // round, which ends before the model's turn.)
    let other_result = second_request(&calls, vec![reply(Some("c1"), 22), reply(None, 18)]);
    assert_eq!(
        miss(offline.generate(other_result).await.unwrap_err()),
        Some((0, "contents[1]".to_owned()))
    );
    assert_eq!(live.calls(), 2);
}

#[tokio::test]
async fn a_format_1_cassette_still_replays() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.cassette.json");
    let dir = TempDir::new("v1-cassette");
    let path = dir.join("old.cassette.json");
    std::fs::copy(&fixture, &path).unwrap();

    let replay = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let answer = replay
        .model(MODEL)
        .generate(
            LlmRequest::new(MODEL)
                .system("Answer in one word.")
                .user("Sky colour?"),
        )
        .await
        .unwrap();
    assert_eq!(
        answer,
        LlmResponse {
            text: "Blue.".into(),
            finish_reason: Some("STOP".into()),
            usage: Some(LlmUsage {
                prompt_tokens: 5,
                response_tokens: 2,
                total_tokens: 7
            }),
            function_calls: Vec::new(),
        }
    );
    assert!(replay.unused().await.is_empty());
    // Replaying writes nothing: the file is as it was.
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&fixture).unwrap()
    );
}

#[tokio::test(start_paused = true)]
async fn a_trace_records_the_calls_and_their_results_and_replays_the_calls() {
    use reel_llm::{TraceRecorder, TraceReplayLlm};
    use reel_recorder::clock::TokioClock;

    let live = ScriptedLlm::new(
        MODEL,
        [
            Answer::Steps(vec![Step::Chunk(ms(100), calls_chunk())]),
            Answer::Steps(vec![Step::Chunk(ms(50), LlmChunk::text("21 and 18."))]),
        ],
    );
    let recorder = TraceRecorder::new("weather", "agent", Arc::new(TokioClock::anchored_at(0)));
    let model = recorder.wrap(live);
    let calls = model.generate(first_request()).await.unwrap();
    tokio::time::sleep(ms(30)).await; // the tools' time
    let second = second_request(&calls, vec![reply(Some("c1"), 21), reply(None, 18)]);
    model.generate(second.clone()).await.unwrap();

    let trace = recorder.trace();
    let turns = trace.turns();
    let recorded: Vec<Value> = turns[0]
        .response
        .unwrap()
        .tool_calls
        .iter()
        .map(|call| serde_json::to_value(call).unwrap())
        .collect();
    assert_eq!(
        recorded,
        [
            json!({"name": "get_weather", "id": "c1", "arguments": {"city": "Lisbon"},
                   "result": {"celsius": 21}, "timestamp": "1970-01-01T00:00:00.100Z",
                   "durationMs": 30}),
            json!({"name": "get_weather", "arguments": {"city": "Porto"},
                   "result": {"celsius": 18}, "timestamp": "1970-01-01T00:00:00.100Z",
                   "durationMs": 30}),
        ]
    );
    assert!(turns[1].response.unwrap().tool_calls.is_empty());

    // Replayed from the trace: the first call's answer is its function calls again.
    let replay = TraceReplayLlm::new(trace);
    let answer = replay.generate(first_request()).await.unwrap();
    assert_eq!(answer.function_calls, calls.function_calls);
    assert_eq!(replay.generate(second).await.unwrap().text, "21 and 18.");
}
