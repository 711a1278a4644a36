//! Per-call tapes: recording passes a model's stream through untouched and tapes exact
//! delays; replay yields exact chunks at exact times (or at once, or scaled), checks the
//! request first (strictly, or by rules), and repeats recorded failures; a consumer that
//! stops early still leaves a whole tape; broken tape files fail with exact errors.

use crate::llm_support;

use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use llm_support::{Answer, ScriptedLlm, Step, TempDir, last_chunk, ms, read_json, texts, timed};
use reel_llm::{
    BaseLlm, ChunkPacing, LlmChunk, LlmError, LlmRequest, LlmStream, MatchRules, RecordingLlm,
    ReplayLlm, RequestMismatch, TapeError, TapeSink,
};
use reel_recorder::clock::{ManualClock, SharedClock};
use reel_recorder::llm_tape::{LlmTape, TapeEnd, read_tape};
use serde_json::json;
use tokio::time::Instant;

/// 2025-12-10T18:00:00Z.
fn fixed_clock() -> SharedClock {
    Arc::new(ManualClock::new(1_765_389_600_000))
}

fn request(text: &str) -> LlmRequest {
    LlmRequest::new("gemini-2.5-flash")
        .system("SYSTEM ROLE: forecaster")
        .user(text)
}

/// The scripted answer most tests record: four chunks, 5, 12, 0 and 8 ms apart.
fn smoke_answer() -> Answer {
    Answer::Steps(vec![
        Step::Chunk(ms(5), LlmChunk::text("[{\"type\":")),
        Step::Chunk(ms(12), LlmChunk::text("")),
        Step::Chunk(ms(0), LlmChunk::text("\"news\"")),
        Step::Chunk(ms(8), last_chunk("}]", 10, 4)),
    ])
}

/// The chunks of [`smoke_answer`] with the times they come, from the call's start.
fn smoke_items() -> Vec<(std::time::Duration, Result<LlmChunk, String>)> {
    vec![
        (ms(5), Ok(LlmChunk::text("[{\"type\":"))),
        (ms(17), Ok(LlmChunk::text(""))),
        (ms(17), Ok(LlmChunk::text("\"news\""))),
        (ms(25), Ok(last_chunk("}]", 10, 4))),
    ]
}

/// Records `answer` to `request` into a fresh single-file tape and returns it.
async fn record_one(dir: &TempDir, name: &str, text: &str, answer: Answer) -> LlmTape {
    let path = dir.join(name);
    let live = ScriptedLlm::new("gemini-2.5-flash", [answer]);
    let recorder = RecordingLlm::new(live, TapeSink::File(path.clone())).clock(fixed_clock());
    if let Ok(stream) = recorder.generate_stream(request(text)).await {
        stream.for_each(|_| async {}).await;
    }
    recorder.settled().await;
    read_tape(&path).unwrap()
}

#[tokio::test(start_paused = true)]
async fn recording_passes_the_stream_through_and_tapes_exact_delays() {
    let dir = TempDir::new("record-exact");
    let live = ScriptedLlm::new("gemini-2.5-flash", [smoke_answer()]);
    let recorder = RecordingLlm::new(live.clone(), TapeSink::folder(dir.path(), "smoke"))
        .clock(fixed_clock())
        .comment("first smoke test");
    assert_eq!(recorder.model_id(), "gemini-2.5-flash");

    let start = Instant::now();
    let stream = recorder.generate_stream(request("news?")).await.unwrap();
    assert_eq!(timed(start, stream).await, smoke_items());
    recorder.settled().await;

    let path = dir.join("smoke-001.json");
    assert_eq!(recorder.written(), std::slice::from_ref(&path));
    assert!(recorder.take_failures().is_empty());
    assert_eq!(
        read_json(&path),
        json!({
            "meta": {
                "label": "smoke-001",
                "model": "gemini-2.5-flash",
                "recordedAt": "2025-12-10T18:00:00.000Z",
                "sdk": concat!("reel ", env!("CARGO_PKG_VERSION")),
                "comment": "first smoke test"
            },
            "request": {
                "model": "gemini-2.5-flash",
                "systemInstruction": "SYSTEM ROLE: forecaster",
                "contents": [{"role": "user", "parts": [{"text": "news?"}]}]
            },
            "stream": [
                {"delayNs": 5_000_000, "text": "[{\"type\":"},
                {"delayNs": 12_000_000, "text": ""},
                {"delayNs": 0, "text": "\"news\""},
                {"delayNs": 8_000_000, "text": "}]", "finishReason": "STOP",
                 "usage": {"promptTokens": 10, "responseTokens": 4, "totalTokens": 14}}
            ]
        })
    );
    assert_eq!(live.requests(), [request("news?")]);
}

#[tokio::test(start_paused = true)]
async fn a_folder_sink_numbers_the_calls_in_order() {
    let dir = TempDir::new("record-folder");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [texts(&[(1, "one")]), texts(&[(2, "two")])],
    );
    let recorder =
        RecordingLlm::new(live, TapeSink::folder(dir.path(), "extractor")).sdk("reel tests");
    assert_eq!(recorder.generate(request("a")).await.unwrap().text, "one");
    assert_eq!(recorder.generate(request("b")).await.unwrap().text, "two");
    recorder.settled().await;
    assert_eq!(dir.names(), ["extractor-001.json", "extractor-002.json"]);
    let second = read_tape(dir.join("extractor-002.json")).unwrap();
    assert_eq!(second.meta.label, "extractor-002");
    assert_eq!(second.meta.sdk, "reel tests");
    assert_eq!(second.request["contents"][0]["parts"][0]["text"], "b");
    assert_eq!(second.stream[0].delay_ns, 2_000_000);
}

#[tokio::test(start_paused = true)]
async fn a_single_file_sink_refuses_a_second_call_before_the_model_sees_it() {
    let dir = TempDir::new("record-single");
    let path = dir.join("one.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(1, "only")])]);
    let recorder = RecordingLlm::new(live.clone(), TapeSink::File(path.clone()));
    recorder.generate(request("a")).await.unwrap();
    let error = recorder.generate(request("b")).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::Tape(TapeError::AlreadyRecorded { path: p }) if *p == path),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the tape `{}` already holds a call; record each call to its own file (TapeSink::Folder)",
            path.display()
        )
    );
    assert_eq!(live.calls(), 1);
    recorder.settled().await;
    assert_eq!(read_tape(&path).unwrap().meta.label, "one");
}

#[tokio::test(start_paused = true)]
async fn replay_yields_the_exact_chunks_at_the_recorded_times() {
    let dir = TempDir::new("replay-exact");
    let tape = record_one(&dir, "t.json", "news?", smoke_answer()).await;
    let replay = ReplayLlm::open(dir.join("t.json")).unwrap();
    assert_eq!(replay.model_id(), "gemini-2.5-flash");
    assert_eq!(replay.tape(), &tape);

    let start = Instant::now();
    let stream = replay.generate_stream(request("news?")).await.unwrap();
    assert_eq!(timed(start, stream).await, smoke_items());

    // Again, immediately: every call replays the same tape.
    let start = Instant::now();
    let replay = replay.pacing(ChunkPacing::Immediate);
    let stream = replay.generate_stream(request("news?")).await.unwrap();
    let at_once: Vec<_> = smoke_items()
        .into_iter()
        .map(|(_, chunk)| (ms(0), chunk))
        .collect();
    assert_eq!(timed(start, stream).await, at_once);

    // Half as fast (tokio's timer counts whole milliseconds, so the test keeps to them).
    let start = Instant::now();
    let replay = replay.pacing(ChunkPacing::Scaled { speed: 0.5 });
    let stream = replay.generate_stream(request("news?")).await.unwrap();
    let doubled: Vec<_> = smoke_items()
        .into_iter()
        .map(|(at, chunk)| (at * 2, chunk))
        .collect();
    assert_eq!(timed(start, stream).await, doubled);

    // A speed that is not a positive number is refused before any chunk.
    for speed in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let replay = replay.clone().pacing(ChunkPacing::Scaled { speed });
        match replay.generate_stream(request("news?")).await {
            Err(LlmError::Tape(TapeError::InvalidSpeed { speed: s })) => {
                assert!(s == speed || (s.is_nan() && speed.is_nan()))
            }
            other => panic!("speed {speed}: {:?}", other.map(|_| "a stream")),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_different_request_is_refused_with_its_path_and_both_values_before_any_chunk() {
    let dir = TempDir::new("replay-strict");
    let tape = record_one(&dir, "t.json", "news?", smoke_answer()).await;
    let path = dir.join("t.json");
    let replay = ReplayLlm::open(&path).unwrap();
    let error = replay
        .generate_stream(request("news!"))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    let LlmError::Tape(TapeError::Mismatch {
        tape: name,
        mismatch,
    }) = &error
    else {
        panic!("expected a mismatch, got {error:?}");
    };
    assert_eq!(name, &format!("`{}`", path.display()));
    assert_eq!(
        **mismatch,
        RequestMismatch {
            path: "contents[0].parts[0].text".to_owned(),
            recorded: Some(json!("news?")),
            actual: Some(json!("news!")),
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the request does not match the tape `{}`: at `contents[0].parts[0].text`: recorded \"news?\", got \"news!\"",
            path.display()
        )
    );

    // A field the recording did not have, on an in-memory tape (named by its label).
    let replay = ReplayLlm::new(tape);
    let error = replay
        .generate_stream(request("news?").setting("temperature", json!(0.5)))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the request does not match the tape labelled \"t\": at `generationConfig`: recorded nothing, got {\"temperature\":0.5}"
    );
}

#[tokio::test(start_paused = true)]
async fn loose_rules_let_ids_dates_and_ignored_fields_differ_and_nothing_else() {
    let dir = TempDir::new("replay-loose");
    let recorded_text =
        "Summarize call 550e8400-e29b-41d4-a716-446655440000 of 2025-12-10T18:00:00Z (3 items)";
    let recorded_request = request(recorded_text).setting("seed", json!(7));
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(4, "ok")])]);
    let recorder = RecordingLlm::new(live, TapeSink::File(dir.join("t.json")));
    recorder.generate(recorded_request).await.unwrap();
    recorder.settled().await;

    let rules: MatchRules = serde_json::from_value(json!({
        "ignore": ["generationConfig.seed"],
        "normalize": [{"kind": "uuids"}, {"kind": "isoDateTimes"}]
    }))
    .unwrap();
    let strict = ReplayLlm::open(dir.join("t.json")).unwrap();
    let loose = strict.clone().rules(rules);

    let today = "Summarize call 123e4567-e89b-12d3-a456-426614174000 of 2026-01-02T09:30:15.250+01:00 (3 items)";
    let now = request(today).setting("seed", json!(8));
    let error = strict
        .generate_stream(now.clone())
        .await
        .map(|_| "a stream")
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Tape(TapeError::Mismatch { mismatch, .. }) if mismatch.path == "contents[0].parts[0].text"),
        "{error}"
    );
    let start = Instant::now();
    let stream = loose.generate_stream(now).await.unwrap();
    assert_eq!(
        timed(start, stream).await,
        [(ms(4), Ok(LlmChunk::text("ok")))]
    );

    // Anything the rules do not cover still has to match; the values shown are the
    // originals.
    let other = today.replace("(3 items)", "(4 items)");
    let error = loose
        .generate_stream(request(&other))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    let LlmError::Tape(TapeError::Mismatch { mismatch, .. }) = error else {
        panic!("expected a mismatch");
    };
    assert_eq!(
        *mismatch,
        RequestMismatch {
            path: "contents[0].parts[0].text".to_owned(),
            recorded: Some(json!(recorded_text)),
            actual: Some(json!(other)),
        }
    );
}

#[tokio::test(start_paused = true)]
async fn what_is_recorded_replays_equal() {
    let dir = TempDir::new("round-trip");
    let path = dir.join("t.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [smoke_answer(), smoke_answer()]);
    let recorder = RecordingLlm::new(live.clone(), TapeSink::File(path.clone()));
    let start = Instant::now();
    let live_items = timed(
        start,
        recorder.generate_stream(request("news?")).await.unwrap(),
    )
    .await;
    recorder.settled().await;
    let live_answer = live.generate(request("news?")).await.unwrap();

    let replay = ReplayLlm::open(&path).unwrap();
    let start = Instant::now();
    let replayed = timed(
        start,
        replay.generate_stream(request("news?")).await.unwrap(),
    )
    .await;
    assert_eq!(replayed, live_items);
    assert_eq!(
        replay.generate(request("news?")).await.unwrap(),
        live_answer
    );
    assert_eq!(live_answer.text, "[{\"type\":\"news\"}]");
}

#[tokio::test(start_paused = true)]
async fn a_failure_mid_stream_is_passed_through_taped_and_replayed_at_the_same_point() {
    let dir = TempDir::new("failure");
    let path = dir.join("t.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [Answer::Steps(vec![
            Step::Chunk(ms(5), LlmChunk::text("par")),
            Step::Chunk(ms(2), LlmChunk::text("tial")),
            Step::Fail(ms(3), "overloaded"),
            Step::Chunk(ms(1), LlmChunk::text("never read")),
        ])],
    );
    let recorder = RecordingLlm::new(live, TapeSink::File(path.clone()));
    let start = Instant::now();
    let items = timed(
        start,
        recorder.generate_stream(request("news?")).await.unwrap(),
    )
    .await;
    let failure = "the model API answered 503 for http://scripted/: overloaded";
    assert_eq!(
        items,
        [
            (ms(5), Ok(LlmChunk::text("par"))),
            (ms(7), Ok(LlmChunk::text("tial"))),
            (ms(10), Err(failure.to_owned())),
        ]
    );
    recorder.settled().await;
    let tape = read_tape(&path).unwrap();
    assert_eq!(tape.stream.len(), 2);
    assert_eq!(
        tape.end,
        Some(TapeEnd::Error {
            delay_ns: 3_000_000,
            message: failure.to_owned()
        })
    );

    let start = Instant::now();
    let replay = ReplayLlm::open(&path).unwrap();
    let replayed = timed(
        start,
        replay.generate_stream(request("news?")).await.unwrap(),
    )
    .await;
    assert_eq!(
        replayed,
        [
            (ms(5), Ok(LlmChunk::text("par"))),
            (ms(7), Ok(LlmChunk::text("tial"))),
            (ms(10), Err(format!("the recorded call failed: {failure}"))),
        ]
    );
    let error = replay.generate(request("news?")).await.unwrap_err();
    assert!(matches!(error, LlmError::Recorded { ref message } if message == failure));
}

#[tokio::test(start_paused = true)]
async fn a_call_refused_before_any_stream_is_taped_as_a_failure() {
    let dir = TempDir::new("refused");
    let tape = record_one(&dir, "t.json", "news?", Answer::Refuse("boom")).await;
    assert_eq!(tape.stream, []);
    let message = "the model API answered 500 for http://scripted/: boom";
    assert_eq!(
        tape.end,
        Some(TapeEnd::Error {
            delay_ns: 0,
            message: message.to_owned()
        })
    );
    let replay = ReplayLlm::new(tape);
    let start = Instant::now();
    let replayed = timed(
        start,
        replay.generate_stream(request("news?")).await.unwrap(),
    )
    .await;
    assert_eq!(
        replayed,
        [(ms(0), Err(format!("the recorded call failed: {message}")))]
    );
}

#[tokio::test(start_paused = true)]
async fn a_consumer_that_stops_early_still_leaves_a_whole_tape() {
    let dir = TempDir::new("early-drop");
    let path = dir.join("t.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [smoke_answer()]);
    let recorder = RecordingLlm::new(live.clone(), TapeSink::File(path.clone()));
    let mut stream = recorder.generate_stream(request("news?")).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, LlmChunk::text("[{\"type\":"));
    drop(stream);
    assert_eq!(live.produced(), 1);

    recorder.settled().await;
    assert_eq!(live.produced(), 4);
    let tape = read_tape(&path).unwrap();
    assert_eq!(tape.end, None);
    assert_eq!(
        tape.stream
            .iter()
            .map(|chunk| (chunk.delay_ns, chunk.text.as_str()))
            .collect::<Vec<_>>(),
        [
            (5_000_000, "[{\"type\":"),
            (12_000_000, ""),
            (0, "\"news\""),
            (8_000_000, "}]")
        ]
    );
    assert_eq!(tape.stream[3].finish_reason.as_deref(), Some("STOP"));
}

#[test]
fn a_stream_dropped_outside_any_runtime_leaves_a_tape_marked_abandoned() {
    let dir = TempDir::new("abandoned");
    let path = dir.join("t.json");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let live = ScriptedLlm::new("gemini-2.5-flash", [smoke_answer()]);
    let recorder = RecordingLlm::new(live, TapeSink::File(path.clone()));
    let stream = runtime.block_on(async {
        let mut stream = recorder.generate_stream(request("news?")).await.unwrap();
        stream.next().await.unwrap().unwrap();
        stream
    });
    // Outside the runtime: the rest cannot be read, so the tape says so.
    drop(stream);
    let reason = "the consumer dropped the stream outside a tokio runtime, so the rest of the answer could not be read";
    let tape = read_tape(&path).unwrap();
    assert_eq!(tape.stream.len(), 1);
    assert_eq!(
        tape.end,
        Some(TapeEnd::Abandoned {
            reason: reason.to_owned()
        })
    );
    assert_eq!(
        read_json(&path)["end"],
        json!({"kind": "abandoned", "reason": reason})
    );

    // Replaying it gives the recorded chunk, then says the tape is incomplete.
    runtime.block_on(async {
        let replay = ReplayLlm::open(&path)
            .unwrap()
            .pacing(ChunkPacing::Immediate);
        let start = Instant::now();
        let items = timed(
            start,
            replay.generate_stream(request("news?")).await.unwrap(),
        )
        .await;
        assert_eq!(
            items,
            [
                (ms(0), Ok(LlmChunk::text("[{\"type\":"))),
                (
                    ms(0),
                    Err(format!(
                        "the tape `{}` is incomplete after 1 chunks: {reason}",
                        path.display()
                    ))
                ),
            ]
        );
    });
}

#[tokio::test]
async fn broken_tape_files_fail_with_exact_errors() {
    let dir = TempDir::new("broken");
    let good = json!({
        "meta": {"label": "x", "model": "m", "recordedAt": "2025-12-10T18:00:00Z", "sdk": "s"},
        "request": {"model": "m"},
        "stream": [{"delayNs": 0, "text": "a"}]
    });
    let mut no_stream = good.clone();
    no_stream.as_object_mut().unwrap().remove("stream");
    let mut negative = good.clone();
    negative["stream"][0]["delayNs"] = json!(-1);
    let mut fractional = good.clone();
    fractional["stream"][0]["delayNs"] = json!(0.5);
    let mut wrong_text = good.clone();
    wrong_text["stream"][0]["text"] = json!(["a"]);
    let cases = [
        ("empty.json", String::new(), "is empty".to_owned()),
        (
            "not-json.json",
            "<tape/>".to_owned(),
            "is not JSON: expected value at line 1 column 1".to_owned(),
        ),
        (
            "torn.json",
            "{\"meta\": {\"label\": \"x\"".to_owned(),
            "is not JSON: EOF while parsing an object at line 1 column 22".to_owned(),
        ),
        (
            "no-stream.json",
            no_stream.to_string(),
            "is invalid at `stream`: missing field `stream`".to_owned(),
        ),
        (
            "negative.json",
            negative.to_string(),
            "is invalid at `stream[0].delayNs`: invalid value: integer `-1`, expected u64"
                .to_owned(),
        ),
        (
            "fractional.json",
            fractional.to_string(),
            "is invalid at `stream[0].delayNs`: invalid type: floating point `0.5`, expected u64"
                .to_owned(),
        ),
        (
            "wrong-text.json",
            wrong_text.to_string(),
            "is invalid at `stream[0].text`: invalid type: sequence, expected a string".to_owned(),
        ),
    ];
    for (name, content, problem) in cases {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let error = ReplayLlm::open(&path).unwrap_err();
        assert!(
            matches!(error, LlmError::Tape(TapeError::File(_))),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("the tape `{}` {problem}", path.display()),
            "{name}"
        );
    }
    let missing = dir.join("missing.json");
    let LlmError::Tape(TapeError::File(error)) = ReplayLlm::open(&missing).unwrap_err() else {
        panic!("expected a file error");
    };
    assert_eq!(error.path(), missing);
    std::fs::write(dir.join("good.json"), good.to_string()).unwrap();
    let opened = ReplayLlm::open(dir.join("good.json")).unwrap();
    assert_eq!(
        opened.tape(),
        &serde_json::from_value::<LlmTape>(good).unwrap()
    );
}

/// A model that never answers.
struct Silent;

impl BaseLlm for Silent {
    fn model_id(&self) -> &str {
        "silent"
    }

    fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_before_the_model_answered_leaves_a_tape_marked_abandoned() {
    let dir = TempDir::new("cancelled");
    let path = dir.join("t.json");
    let recorder = RecordingLlm::new(Arc::new(Silent), TapeSink::File(path.clone()));
    let gave_up = tokio::time::timeout(ms(50), recorder.generate_stream(request("news?"))).await;
    assert!(gave_up.is_err());
    recorder.settled().await;
    let tape = read_tape(&path).unwrap();
    assert_eq!(tape.stream, []);
    assert_eq!(
        tape.end,
        Some(TapeEnd::Abandoned {
            reason: "the call was cancelled before the model answered".to_owned()
        })
    );
}
