//! Agent traces of out-of-band model calls: a wrapped model's calls are recorded exactly
//! (times from a paused tokio clock), saved when the recorder is dropped, and replayed by
//! index: same chunks, same failures, recorded pacing, and clear errors past the end or on
//! a malformed entry.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use reel_llm::{
    BaseLlm, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream, LlmUsage,
    MalformedResponse, TraceRecorder, TraceReplayError, TraceReplayLlm,
};
use reel_recorder::clock::TokioClock;
use reel_recorder::trace::{AgentTrace, read_trace};
use serde_json::json;

/// 2026-01-07T10:30:00Z.
const T0: u64 = 1_767_781_800_000;

/// One scripted call: chunks each after a delay, or a failure.
enum Script {
    Chunks(Vec<(u64, LlmChunk)>),
    Fails(LlmError),
}

/// A model that plays its scripts in order, in tokio time.
struct Scripted {
    id: &'static str,
    scripts: Mutex<VecDeque<Script>>,
}

impl Scripted {
    fn new(id: &'static str, scripts: Vec<Script>) -> Arc<Scripted> {
        Arc::new(Scripted {
            id,
            scripts: Mutex::new(scripts.into()),
        })
    }
}

impl BaseLlm for Scripted {
    fn model_id(&self) -> &str {
        self.id
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let script = self
            .scripts
            .lock()
            .unwrap()
            .pop_front()
            .expect("a script per call");
        Box::pin(async move {
            match script {
                Script::Fails(error) => Err(error),
                Script::Chunks(chunks) => {
                    let stream =
                        futures_util::stream::iter(chunks).then(|(delay, chunk)| async move {
                            tokio::time::sleep(Duration::from_millis(delay)).await;
                            Ok(chunk)
                        });
                    Ok(Box::pin(stream) as LlmStream)
                }
            }
        })
    }
}

fn chunk(text: &str) -> LlmChunk {
    LlmChunk::text(text)
}

fn last(text: &str, usage: Option<LlmUsage>) -> LlmChunk {
    LlmChunk {
        text: text.to_owned(),
        finish_reason: Some("STOP".to_owned()),
        usage,
        ..LlmChunk::default()
    }
}

fn usage() -> LlmUsage {
    LlmUsage {
        prompt_tokens: 10,
        response_tokens: 4,
        total_tokens: 14,
    }
}

fn temp_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "reel-llm-trace-{}-{name}.trace.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn model() -> Arc<Scripted> {
    Scripted::new(
        "gemini-2.5-flash",
        vec![
            Script::Chunks(vec![
                (120, chunk("It is ")),
                (30, last("sunny.", Some(usage()))),
            ]),
            Script::Fails(LlmError::Http {
                status: 503,
                url: "https://example.invalid/v1beta/models/gemini-2.5-flash".to_owned(),
                message: "overloaded".to_owned(),
            }),
            Script::Chunks(vec![(50, last("ok", None))]),
            Script::Chunks(vec![(10, chunk("first")), (10, chunk(" second"))]),
        ],
    )
}

/// Makes the four calls of [`model`] through `llm`, 1 s apart: a streamed answer, a
/// failure, a one-chunk answer, and an answer the caller stops reading after one chunk.
async fn four_calls(llm: &dyn BaseLlm) {
    let request = |text: &str| {
        LlmRequest::new("gemini-2.5-flash")
            .system("Be brief.")
            .user(text)
    };
    let answer = llm.generate(request("Weather in Paris?")).await.unwrap();
    assert_eq!(answer.text, "It is sunny.");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let error = llm.generate(request("And Rome?")).await.unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 503, .. }),
        "{error}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(llm.generate(request("Thanks")).await.unwrap().text, "ok");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut stream = llm.generate_stream(request("Tell me more")).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap().text, "first");
    drop(stream);
}

fn body(text: &str) -> serde_json::Value {
    json!({
        "model": "gemini-2.5-flash",
        "systemInstruction": "Be brief.",
        "contents": [{"role": "user", "parts": [{"text": text}]}]
    })
}

fn expected_trace() -> serde_json::Value {
    json!({
        "version": "1.0",
        "traceName": "weather",
        "capturedAt": "2026-01-07T10:30:00.000Z",
        "agentName": "helper",
        "entries": [
            {"type": "Request", "index": 0, "timestamp": "2026-01-07T10:30:00.000Z",
             "prompt": "Weather in Paris?", "model": "gemini-2.5-flash", "body": body("Weather in Paris?")},
            {"type": "Response", "index": 0, "timestamp": "2026-01-07T10:30:00.150Z",
             "text": "It is sunny.", "durationMs": 150, "timeToFirstTokenMs": 120,
             "tokenUsage": {"prompt": 10, "completion": 4, "total": 14},
             "finishReason": "STOP", "chunks": ["It is ", "sunny."]},
            {"type": "Request", "index": 1, "timestamp": "2026-01-07T10:30:01.150Z",
             "prompt": "And Rome?", "model": "gemini-2.5-flash", "body": body("And Rome?")},
            {"type": "Response", "index": 1, "timestamp": "2026-01-07T10:30:01.150Z",
             "durationMs": 0,
             "error": "the model API answered 503 for https://example.invalid/v1beta/models/gemini-2.5-flash: overloaded"},
            {"type": "Request", "index": 2, "timestamp": "2026-01-07T10:30:02.150Z",
             "prompt": "Thanks", "model": "gemini-2.5-flash", "body": body("Thanks")},
            {"type": "Response", "index": 2, "timestamp": "2026-01-07T10:30:02.200Z",
             "text": "ok", "durationMs": 50, "timeToFirstTokenMs": 50, "finishReason": "STOP"},
            {"type": "Request", "index": 3, "timestamp": "2026-01-07T10:30:03.200Z",
             "prompt": "Tell me more", "model": "gemini-2.5-flash", "body": body("Tell me more")},
            {"type": "Response", "index": 3, "timestamp": "2026-01-07T10:30:03.210Z",
             "text": "first", "durationMs": 10, "timeToFirstTokenMs": 10, "incomplete": true}
        ],
        "performance": {
            "totalDurationMs": 210,
            "totalPromptTokens": 10,
            "totalCompletionTokens": 4,
            "totalTokens": 14,
            "turnCount": 4,
            "toolCallCount": 0,
            "interruptionCount": 0,
            "meanTimeToFirstTokenMs": 60.0,
            "p50TimeToFirstTokenMs": 50,
            "maxTimeToFirstTokenMs": 120
        }
    })
}

/// Records [`four_calls`] and returns the trace, also saved to `path` on drop.
async fn record(path: &PathBuf) -> AgentTrace {
    let clock = Arc::new(TokioClock::anchored_at(T0));
    let recorder = TraceRecorder::new("weather", "helper", clock).save_on_drop(path);
    let llm = recorder.wrap(model());
    assert_eq!(llm.model_id(), "gemini-2.5-flash");
    four_calls(&llm).await;
    recorder.trace()
}

#[tokio::test(start_paused = true)]
async fn calls_are_recorded_exactly_and_saved_on_drop() {
    let path = temp_path("record");
    let trace = record(&path).await;
    assert_eq!(serde_json::to_value(&trace).unwrap(), expected_trace());
    // Everything holding the recording is gone: it was saved, and reads back the same.
    assert_eq!(read_trace(&path).unwrap(), trace);
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test(start_paused = true)]
async fn save_writes_the_trace_so_far() {
    let path = temp_path("save");
    let recorder = TraceRecorder::new("weather", "helper", Arc::new(TokioClock::anchored_at(T0)));
    let llm = recorder.wrap(model());
    llm.generate(LlmRequest::new("gemini-2.5-flash").user("Weather in Paris?"))
        .await
        .unwrap();
    recorder.save(&path).unwrap();
    let saved = read_trace(&path).unwrap();
    assert_eq!(saved.entries.len(), 2);
    assert_eq!(saved.performance.total_duration_ms, 150);
    std::fs::remove_file(&path).unwrap();
    drop((llm, recorder));
    assert!(
        !path.exists(),
        "a recorder without save_on_drop saves nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_trace_replays_call_by_call_then_runs_out() {
    let path = temp_path("replay");
    record(&path).await;
    let replay = TraceReplayLlm::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(replay.model_id(), "helper");
    let request = || LlmRequest::new("anything").user("whatever was asked");

    let chunks: Vec<LlmChunk> = replay
        .generate_stream(request())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(chunks, [chunk("It is "), last("sunny.", Some(usage()))]);

    let error = replay.generate(request()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "could not read the model's answer (replaying call 1 of trace `weather`): call 1 of trace \
         `weather` failed when recorded: the model API answered 503 for \
         https://example.invalid/v1beta/models/gemini-2.5-flash: overloaded"
    );
    let answer = replay.generate(request()).await.unwrap();
    assert_eq!(
        (answer.text.as_str(), answer.finish_reason.as_deref()),
        ("ok", Some("STOP"))
    );
    assert_eq!(replay.generate(request()).await.unwrap().text, "first");
    assert_eq!(replay.calls(), 4);

    assert_eq!(
        replay.next_call().unwrap_err(),
        TraceReplayError::Exhausted {
            trace: "weather".into(),
            call: 4,
            requests: 4
        }
    );
    let error = replay.generate(request()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "could not read the model's answer (replaying call 5 of trace `weather`): call 5 of trace \
         `weather`: the trace records only calls 0 to 3"
    );
}

#[tokio::test(start_paused = true)]
async fn paced_replay_keeps_the_recorded_timing() {
    let path = temp_path("paced");
    let trace = record(&path).await;
    std::fs::remove_file(&path).unwrap();
    let replay = TraceReplayLlm::new(trace).paced();
    let start = tokio::time::Instant::now();
    let mut stream = replay.generate_stream(LlmRequest::new("m")).await.unwrap();
    let mut arrivals = Vec::new();
    while let Some(chunk) = stream.next().await {
        arrivals.push((chunk.unwrap().text, start.elapsed().as_millis()));
    }
    let ended = start.elapsed().as_millis();
    // Both chunks at the recorded time to first token; the stream ends at the duration.
    assert_eq!(
        arrivals,
        [("It is ".to_owned(), 120), ("sunny.".to_owned(), 120)]
    );
    assert_eq!(ended, 150);
    // Unpaced, the same trace answers at once.
    let at_once = TraceReplayLlm::new(replay.trace().clone());
    let start = tokio::time::Instant::now();
    at_once.generate(LlmRequest::new("m")).await.unwrap();
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_or_malformed_entry_is_a_clear_error() {
    let mut value = expected_trace();
    // Call 0's pieces no longer add up to its text; call 3 lost its response.
    value["entries"][1]["chunks"] = json!(["It was ", "sunny."]);
    value["entries"].as_array_mut().unwrap().pop();
    value["entries"][5]["timeToFirstTokenMs"] = json!(60);
    let trace: AgentTrace = serde_json::from_value(value).unwrap();
    let replay = TraceReplayLlm::new(trace);
    let malformed = |call, problem| TraceReplayError::Malformed {
        trace: "weather".into(),
        call,
        problem,
    };
    assert_eq!(
        replay.next_call().unwrap_err(),
        malformed(0, MalformedResponse::ChunksDisagreeWithText)
    );
    assert!(matches!(
        replay.next_call(),
        Err(TraceReplayError::RecordedFailure { call: 1, .. })
    ));
    assert_eq!(
        replay.next_call().unwrap_err(),
        malformed(2, MalformedResponse::FirstTokenAfterEnd)
    );
    let error = replay.next_call().unwrap_err();
    assert_eq!(
        error,
        TraceReplayError::NoResponse {
            trace: "weather".into(),
            call: 3
        }
    );
    assert_eq!(
        error.to_string(),
        "call 3 of trace `weather`: the trace records the request but no response"
    );
    assert_eq!(
        malformed(0, MalformedResponse::ChunksDisagreeWithText).to_string(),
        "call 0 of trace `weather`: the recorded response is malformed: its chunks do not add up to its text"
    );
}

#[tokio::test(start_paused = true)]
async fn as_interceptors_they_record_and_replay_every_model_of_a_session() {
    let recorder = TraceRecorder::new("session", "app", Arc::new(TokioClock::anchored_at(T0)));
    let flash = LlmInterceptor::wrap(
        &recorder,
        Scripted::new(
            "gemini-2.5-flash",
            vec![Script::Chunks(vec![(20, last("A", None))])],
        ),
    );
    let pro = LlmInterceptor::wrap(
        &recorder,
        Scripted::new(
            "gemini-2.5-pro",
            vec![Script::Chunks(vec![(40, last("B", None))])],
        ),
    );
    assert_eq!(
        flash
            .generate(LlmRequest::new("gemini-2.5-flash").user("a"))
            .await
            .unwrap()
            .text,
        "A"
    );
    assert_eq!(
        pro.generate(LlmRequest::new("gemini-2.5-pro").user("b"))
            .await
            .unwrap()
            .text,
        "B"
    );
    let trace = recorder.trace();
    let turns = trace.turns();
    let models: Vec<_> = turns.iter().map(|t| trace.model_of(t.request)).collect();
    assert_eq!(models, [Some("gemini-2.5-flash"), Some("gemini-2.5-pro")]);
    assert_eq!(trace.performance.total_duration_ms, 60);

    let replay = TraceReplayLlm::new(trace);
    let first = LlmInterceptor::wrap(&replay, Scripted::new("unused", vec![]));
    let second = LlmInterceptor::wrap(&replay, Scripted::new("unused", vec![]));
    // Whichever model makes a call, calls are answered in recorded order.
    assert_eq!(
        second.generate(LlmRequest::new("x")).await.unwrap().text,
        "A"
    );
    assert_eq!(
        first.generate(LlmRequest::new("x")).await.unwrap().text,
        "B"
    );
}

#[tokio::test(start_paused = true)]
async fn save_on_drop_may_be_asked_for_after_wrapping() {
    let path = temp_path("late");
    let recorder = TraceRecorder::new("weather", "helper", Arc::new(TokioClock::anchored_at(T0)));
    let llm = recorder.wrap(model());
    let recorder = recorder.save_on_drop(&path);
    llm.generate(LlmRequest::new("gemini-2.5-flash").user("Weather in Paris?"))
        .await
        .unwrap();
    drop(recorder);
    assert!(
        !path.exists(),
        "the wrapped model still holds the recording"
    );
    drop(llm);
    let saved = read_trace(&path).unwrap();
    assert_eq!(
        saved.turns()[0].response.unwrap().text.as_deref(),
        Some("It is sunny.")
    );
    std::fs::remove_file(&path).unwrap();
}
