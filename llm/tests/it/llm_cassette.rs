//! Cassettes: record forwards and saves every call, replay never forwards and names what it
//! misses, auto replays hits and records misses; answers are whole on disk before the first
//! chunk is returned, so a consumer that stops early cannot truncate them; the size cap,
//! live failures, concurrent callers and broken files each end in an exact state.

use crate::llm_support;

use std::sync::Arc;

use futures_util::StreamExt;
use llm_support::{Answer, ScriptedLlm, Step, TempDir, last_chunk, ms, read_json, texts, timed};
use reel_llm::testing::gemini_standin::{Answer as HttpAnswer, GeminiStandin, STANDIN_API_KEY};
use reel_llm::{
    Cassette, CassetteError, CassetteMode, ChunkPacing, LlmChunk, LlmError, LlmInterceptor,
    LlmRequest, MatchRules, RequestMismatch, UnknownCassetteMode,
};
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES};
use reel_recorder::clock::{ManualClock, SharedClock};
use reel_recorder::llm_tape::DocumentError;
use serde_json::json;
use tokio::time::Instant;

/// 2025-12-10T18:00:00Z.
fn fixed_clock() -> SharedClock {
    Arc::new(ManualClock::new(1_765_389_600_000))
}

fn request(text: &str) -> LlmRequest {
    LlmRequest::new("gemini-2.5-flash").user(text)
}

fn read_cassette(path: &std::path::Path) -> CassetteFile {
    CassetteFile::read(path, DEFAULT_MAX_CASSETTE_BYTES).unwrap()
}

/// The texts of each interaction's chunks, joined.
fn answers(file: &CassetteFile) -> Vec<String> {
    file.interactions
        .iter()
        .map(|i| i.response.iter().map(|c| c.text.as_str()).collect())
        .collect()
}

/// Opens `path` in `mode` with the fixed clock.
fn open(path: &std::path::Path, mode: CassetteMode) -> Cassette {
    Cassette::builder(path, mode)
        .clock(fixed_clock())
        .open()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn record_mode_forwards_and_saves_every_call_and_replay_answers_from_the_file() {
    let dir = TempDir::new("record-replay");
    let path = dir.join("session.cassette.json");
    std::fs::write(&path, "an older recording").unwrap();
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [
            Answer::Steps(vec![
                Step::Chunk(ms(3), LlmChunk::text("Hel")),
                Step::Chunk(ms(4), last_chunk("lo", 5, 2)),
            ]),
            texts(&[(2, "Bye")]),
        ],
    );
    let cassette = open(&path, CassetteMode::Record);
    // Record mode starts a new cassette at once.
    assert_eq!(read_cassette(&path), CassetteFile::new());
    let model = cassette.wrap(live.clone());
    assert_eq!(model.model_id(), "gemini-2.5-flash");

    let start = Instant::now();
    let items = timed(start, model.generate_stream(request("hi")).await.unwrap()).await;
    // Collected whole first: both chunks come when the answer is complete, at once.
    assert_eq!(
        items,
        [
            (ms(7), Ok(LlmChunk::text("Hel"))),
            (ms(7), Ok(last_chunk("lo", 5, 2)))
        ]
    );
    assert_eq!(model.generate(request("bye")).await.unwrap().text, "Bye");
    assert_eq!(live.calls(), 2);

    assert_eq!(
        read_json(&path),
        json!({
            "version": 2,
            "interactions": [
                {
                    "request": {"model": "gemini-2.5-flash",
                                "contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                    "response": [
                        {"delayNs": 3_000_000, "text": "Hel"},
                        {"delayNs": 4_000_000, "text": "lo", "finishReason": "STOP",
                         "usage": {"promptTokens": 5, "responseTokens": 2, "totalTokens": 7}}
                    ],
                    "recordedAt": "2025-12-10T18:00:00.000Z",
                    "usage": {"promptTokens": 5, "responseTokens": 2, "totalTokens": 7},
                    "durationNs": 7_000_000
                },
                {
                    "request": {"model": "gemini-2.5-flash",
                                "contents": [{"role": "user", "parts": [{"text": "bye"}]}]},
                    "response": [{"delayNs": 2_000_000, "text": "Bye"}],
                    "recordedAt": "2025-12-10T18:00:00.000Z",
                    "durationNs": 2_000_000
                }
            ]
        })
    );
    assert_eq!(dir.names(), ["session.cassette.json"]);

    // Replay: the live model is never asked (it has no answers left anyway).
    let replay = open(&path, CassetteMode::Replay);
    let model = replay.wrap(live.clone());
    assert_eq!(replay.unused().await, [0, 1]);
    let start = Instant::now();
    let replayed = timed(start, model.generate_stream(request("hi")).await.unwrap()).await;
    assert_eq!(
        replayed,
        [
            (ms(0), Ok(LlmChunk::text("Hel"))),
            (ms(0), Ok(last_chunk("lo", 5, 2)))
        ]
    );
    assert_eq!(replay.unused().await, [1]);
    assert_eq!(model.generate(request("bye")).await.unwrap().text, "Bye");
    assert_eq!(replay.unused().await, Vec::<usize>::new());
    assert_eq!(live.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn replay_can_pace_answers_as_recorded() {
    let dir = TempDir::new("paced");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(3, "a"), (4, "b")])]);
    open(&path, CassetteMode::Record)
        .wrap(live)
        .generate(request("hi"))
        .await
        .unwrap();
    let replay = Cassette::builder(&path, CassetteMode::Replay)
        .pacing(ChunkPacing::Recorded)
        .open()
        .unwrap();
    let model = replay.model("gemini-2.5-flash");
    let start = Instant::now();
    assert_eq!(
        timed(start, model.generate_stream(request("hi")).await.unwrap()).await,
        [
            (ms(3), Ok(LlmChunk::text("a"))),
            (ms(7), Ok(LlmChunk::text("b")))
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_replay_miss_names_the_request_and_where_the_nearest_recording_differs() {
    let dir = TempDir::new("miss");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(1, "Sunny")])]);
    open(&path, CassetteMode::Record)
        .wrap(live)
        .generate(request("Weather in Paris?"))
        .await
        .unwrap();

    let replay = open(&path, CassetteMode::Replay);
    let model = replay.model("gemini-2.5-flash");
    let error = model
        .generate_stream(request("Weather in Rome?"))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    let LlmError::Cassette(CassetteError::Miss {
        path: p,
        model: m,
        prompt,
        nearest,
    }) = &error
    else {
        panic!("expected a miss, got {error:?}");
    };
    assert_eq!((p, m.as_str()), (&path, "gemini-2.5-flash"));
    assert_eq!(prompt.as_deref(), Some("Weather in Rome?"));
    let (index, mismatch) = nearest.as_ref().unwrap();
    assert_eq!(*index, 0);
    assert_eq!(
        **mismatch,
        RequestMismatch {
            path: "contents[0].parts[0].text".to_owned(),
            recorded: Some(json!("Weather in Paris?")),
            actual: Some(json!("Weather in Rome?")),
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` has no recorded answer for a request to gemini-2.5-flash (\"Weather in Rome?\"); the nearest recorded request (interaction 0) differs at `contents[0].parts[0].text`: recorded \"Weather in Paris?\", got \"Weather in Rome?\"",
            path.display()
        )
    );

    // A miss on an empty cassette names only the request.
    let empty = dir.join("empty.json");
    CassetteFile::new()
        .write(&empty, DEFAULT_MAX_CASSETTE_BYTES)
        .unwrap();
    let error = open(&empty, CassetteMode::Replay)
        .model("gemini-2.5-flash")
        .generate(request("Weather in Rome?"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` has no recorded answer for a request to gemini-2.5-flash (\"Weather in Rome?\")",
            empty.display()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn repeated_identical_requests_are_answered_in_recorded_order() {
    let dir = TempDir::new("repeated");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [
            texts(&[(1, "first")]),
            texts(&[(1, "other")]),
            texts(&[(1, "second")]),
        ],
    );
    let recording = open(&path, CassetteMode::Record).wrap(live);
    for text in ["same", "different", "same"] {
        recording.generate(request(text)).await.unwrap();
    }
    assert_eq!(answers(&read_cassette(&path)), ["first", "other", "second"]);

    let model = open(&path, CassetteMode::Replay).model("gemini-2.5-flash");
    assert_eq!(model.generate(request("same")).await.unwrap().text, "first");
    assert_eq!(
        model.generate(request("same")).await.unwrap().text,
        "second"
    );
    let error = model.generate(request("same")).await.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Cassette(CassetteError::Exhausted { recorded: 2, .. })
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` answered this request to gemini-2.5-flash (\"same\") all 2 times it was recorded",
            path.display()
        )
    );
    assert_eq!(
        model.generate(request("different")).await.unwrap().text,
        "other"
    );
}

#[tokio::test(start_paused = true)]
async fn auto_mode_replays_a_hit_and_forwards_and_records_a_miss() {
    let dir = TempDir::new("auto");
    let path = dir.join("c.json");
    // No file yet: auto starts empty and writes nothing until it records.
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [texts(&[(2, "Sunny")]), texts(&[(2, "Rainy")])],
    );
    let cassette = open(&path, CassetteMode::Auto);
    assert!(!path.exists());
    let model = cassette.wrap(live.clone());
    assert_eq!(
        model.generate(request("Paris?")).await.unwrap().text,
        "Sunny"
    );
    assert_eq!(live.calls(), 1);
    assert_eq!(answers(&read_cassette(&path)), ["Sunny"]);

    // A new run: Paris is a hit (not forwarded), Rome a miss (forwarded and recorded).
    let cassette = open(&path, CassetteMode::Auto);
    let model = cassette.wrap(live.clone());
    assert_eq!(
        model.generate(request("Paris?")).await.unwrap().text,
        "Sunny"
    );
    assert_eq!(live.calls(), 1);
    assert_eq!(
        model.generate(request("Rome?")).await.unwrap().text,
        "Rainy"
    );
    assert_eq!(live.calls(), 2);
    assert_eq!(live.requests()[1], request("Rome?"));
    assert_eq!(answers(&read_cassette(&path)), ["Sunny", "Rainy"]);
    assert_eq!(cassette.snapshot().await, read_cassette(&path));
    assert_eq!(cassette.unused().await, Vec::<usize>::new());

    // Without a live model behind it, a miss cannot be forwarded.
    let error = cassette
        .model("gemini-2.5-flash")
        .generate(request("Oslo?"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` must forward a request to gemini-2.5-flash, but no live model is behind it",
            path.display()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_consumer_that_stops_after_one_chunk_still_leaves_the_whole_answer_recorded() {
    let dir = TempDir::new("early-stop");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [texts(&[(5, "one "), (5, "two "), (5, "three")])],
    );
    let model = open(&path, CassetteMode::Record).wrap(live.clone());
    let start = Instant::now();
    let mut stream = model.generate_stream(request("count")).await.unwrap();
    // The whole answer was read and saved before the stream was handed over.
    assert_eq!(start.elapsed(), ms(15));
    assert_eq!(live.produced(), 3);
    assert_eq!(answers(&read_cassette(&path)), ["one two three"]);
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        LlmChunk::text("one ")
    );
    drop(stream);
    let file = read_cassette(&path);
    assert_eq!(
        file.interactions[0]
            .response
            .iter()
            .map(|c| c.delay_ns)
            .collect::<Vec<_>>(),
        [5_000_000, 5_000_000, 5_000_000]
    );
}

#[tokio::test(start_paused = true)]
async fn an_interaction_past_the_size_cap_is_refused_and_the_file_kept() {
    let dir = TempDir::new("cap");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [texts(&[(1, "short")]), texts(&[(1, &"long ".repeat(100))])],
    );
    let model = Cassette::builder(&path, CassetteMode::Record)
        .max_bytes(900)
        .open()
        .unwrap()
        .wrap(live.clone());
    model.generate(request("a")).await.unwrap();
    let before = std::fs::read(&path).unwrap();
    assert!(before.len() < 900);

    let error = model
        .generate_stream(request("b"))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    let LlmError::Cassette(CassetteError::File(DocumentError::TooLarge {
        path: p,
        size,
        limit,
        ..
    })) = &error
    else {
        panic!("expected too large, got {error:?}");
    };
    assert_eq!((p, *limit), (&path, 900));
    assert_eq!(
        error.to_string(),
        format!(
            "the cassette `{}` would be {size} bytes, over its cap of 900 bytes; raise the cap or record less into one file",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(live.calls(), 2);

    // Reading refuses a file over the cap too.
    let error = Cassette::builder(&path, CassetteMode::Replay)
        .max_bytes(100)
        .open()
        .unwrap_err();
    assert!(
        matches!(
            error,
            CassetteError::File(DocumentError::TooLarge { limit: 100, .. })
        ),
        "{error:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_live_failure_is_returned_as_it_is_and_nothing_is_recorded() {
    let dir = TempDir::new("live-failure");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [
            Answer::Steps(vec![
                Step::Chunk(ms(1), LlmChunk::text("par")),
                Step::Fail(ms(1), "overloaded"),
            ]),
            Answer::Refuse("down"),
        ],
    );
    let model = open(&path, CassetteMode::Auto).wrap(live);
    let error = model
        .generate_stream(request("a"))
        .await
        .map(|_| "a stream")
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 503, ref message, .. } if message == "overloaded")
    );
    let error = model.generate(request("a")).await.unwrap_err();
    assert!(matches!(error, LlmError::Http { status: 500, .. }));
    assert!(!path.exists());
}

#[tokio::test(start_paused = true)]
async fn a_cassette_keeping_failures_records_them_and_a_replay_fails_the_same_way() {
    let dir = TempDir::new("kept-failures");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [
            Answer::Steps(vec![
                Step::Chunk(ms(1), LlmChunk::text("par")),
                Step::Fail(ms(1), "overloaded"),
            ]),
            Answer::Refuse("down"),
        ],
    );
    let recording = Cassette::builder(&path, CassetteMode::Record)
        .clock(fixed_clock())
        .keep_failures(true)
        .open()
        .unwrap();
    let model = recording.wrap(live);
    // Live, each failure is returned as it is.
    let mid_stream = model.generate(request("a")).await.unwrap_err();
    assert!(
        matches!(mid_stream, LlmError::Http { status: 503, ref message, .. } if message == "overloaded"),
        "{mid_stream:?}"
    );
    let refused = model.generate(request("b")).await.unwrap_err();
    assert!(
        matches!(refused, LlmError::Http { status: 500, .. }),
        "{refused:?}"
    );
    let file = read_cassette(&path);
    assert_eq!(answers(&file), ["par", ""]);
    assert_eq!(
        file.interactions
            .iter()
            .map(|i| i.failure.clone())
            .collect::<Vec<_>>(),
        [Some(mid_stream.to_string()), Some(refused.to_string())]
    );

    // Replayed: the chunks before the failure, then the failure's message.
    let replay = open(&path, CassetteMode::Replay);
    let model = replay.model("gemini-2.5-flash");
    let items: Vec<_> = model
        .generate_stream(request("a"))
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap().text, "par");
    assert!(
        matches!(&items[1], Err(LlmError::Recorded { message }) if *message == mid_stream.to_string()),
        "{:?}",
        items[1]
    );
    let error = model.generate(request("b")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("the recorded call failed: {refused}")
    );
    assert_eq!(replay.unused().await, Vec::<usize>::new());
}

/// Records "Paris?" (answered slowly) and "Rome?" (answered at once), asked together.
async fn record_two_at_once(path: &std::path::Path, sorted: bool) -> Vec<String> {
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        [texts(&[(50, "Sunny")]), texts(&[(0, "Rainy")])],
    );
    let cassette = Cassette::builder(path, CassetteMode::Record)
        .clock(fixed_clock())
        .sorted_by_request(sorted)
        .open()
        .unwrap();
    let model = cassette.wrap(live);
    let (paris, rome) = tokio::join!(
        model.generate(request("Paris?")),
        model.generate(request("Rome?"))
    );
    assert_eq!(
        (paris.unwrap().text, rome.unwrap().text),
        ("Sunny".into(), "Rainy".into())
    );
    answers(&read_cassette(path))
}

#[tokio::test(start_paused = true)]
async fn a_sorted_cassette_holds_calls_made_at_once_in_request_order_not_finishing_order() {
    let dir = TempDir::new("sorted");
    // Rome's answer came first: a plain cassette holds it first.
    assert_eq!(
        record_two_at_once(&dir.join("plain.json"), false).await,
        ["Rainy", "Sunny"]
    );
    // Sorted, the file is in request order: Paris, then Rome.
    let path = dir.join("sorted.json");
    assert_eq!(record_two_at_once(&path, true).await, ["Sunny", "Rainy"]);

    // Auto mode puts an existing file in order and records a miss in its place.
    let plain = dir.join("plain.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(0, "Windy")])]);
    let cassette = Cassette::builder(&plain, CassetteMode::Auto)
        .clock(fixed_clock())
        .sorted_by_request(true)
        .open()
        .unwrap();
    let model = cassette.wrap(live.clone());
    assert_eq!(
        model.generate(request("Rome?")).await.unwrap().text,
        "Rainy"
    );
    assert_eq!(
        model.generate(request("Oslo?")).await.unwrap().text,
        "Windy"
    );
    assert_eq!(live.calls(), 1);
    assert_eq!(answers(&read_cassette(&plain)), ["Windy", "Sunny", "Rainy"]);
    assert_eq!(cassette.snapshot().await, read_cassette(&plain));
    // Every one of them replays, and each was used once.
    assert_eq!(
        model.generate(request("Paris?")).await.unwrap().text,
        "Sunny"
    );
    assert_eq!(cassette.unused().await, Vec::<usize>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_from_many_tasks_are_all_saved() {
    let dir = TempDir::new("concurrent");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new(
        "gemini-2.5-flash",
        (0..16).map(|i| texts(&[(0, if i % 2 == 0 { "even" } else { "odd" })])),
    );
    let cassette = open(&path, CassetteMode::Record);
    let model = cassette.wrap(live);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let model = Arc::clone(&model);
            tokio::spawn(async move { model.generate(request(&format!("call {i}"))).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let file = read_cassette(&path);
    assert_eq!(file, cassette.snapshot().await);
    let mut asked: Vec<String> = file
        .interactions
        .iter()
        .map(|i| {
            i.request["contents"][0]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    asked.sort();
    let mut expected: Vec<String> = (0..16).map(|i| format!("call {i}")).collect();
    expected.sort();
    assert_eq!(asked, expected);

    // And every one replays, from many tasks at once.
    let replay = open(&path, CassetteMode::Replay);
    let model = replay.model("gemini-2.5-flash");
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let model = Arc::clone(&model);
            tokio::spawn(async move { model.generate(request(&format!("call {i}"))).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(replay.unused().await, Vec::<usize>::new());
}

#[tokio::test(start_paused = true)]
async fn loose_rules_match_requests_that_differ_only_in_ids_and_dates() {
    let dir = TempDir::new("loose");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(1, "done")])]);
    open(&path, CassetteMode::Record)
        .wrap(live)
        .generate(request(
            "Close ticket 550e8400-e29b-41d4-a716-446655440000 on 2025-12-10",
        ))
        .await
        .unwrap();
    let rules: MatchRules =
        serde_json::from_value(json!({"normalize": [{"kind": "uuids"}, {"kind": "isoDateTimes"}]}))
            .unwrap();
    let today = request("Close ticket 123e4567-e89b-12d3-a456-426614174000 on 2026-01-02");
    let strict = open(&path, CassetteMode::Replay).model("gemini-2.5-flash");
    assert!(matches!(
        strict.generate(today.clone()).await.unwrap_err(),
        LlmError::Cassette(CassetteError::Miss { .. })
    ));
    let loose = Cassette::builder(&path, CassetteMode::Replay)
        .rules(rules)
        .open()
        .unwrap()
        .model("gemini-2.5-flash");
    assert_eq!(loose.generate(today).await.unwrap().text, "done");
}

#[tokio::test]
async fn broken_or_missing_cassette_files_fail_to_open_with_exact_errors() {
    let dir = TempDir::new("broken");
    let missing = dir.join("missing.json");
    let error = Cassette::open(&missing, CassetteMode::Replay).unwrap_err();
    let CassetteError::File(DocumentError::Io { source, .. }) = &error else {
        panic!("expected an I/O error, got {error:?}");
    };
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    assert!(error.to_string().starts_with(&format!(
        "cannot access the cassette `{}`: ",
        missing.display()
    )));

    let cases = [
        ("empty.json", "", "is empty"),
        (
            "not-json.json",
            "{\"version\": 1,",
            "is not JSON: EOF while parsing a value at line 1 column 14",
        ),
        (
            "version.json",
            "{\"version\": 3, \"interactions\": []}",
            "has format version 3; this reader knows versions 1 to 2",
        ),
        (
            "delay.json",
            r#"{"version": 1, "interactions": [{"request": {"model": "m"}, "recordedAt": "2025-12-10T18:00:00Z", "response": [{"delayNs": -3, "text": ""}]}]}"#,
            "is invalid at `interactions[0].response[0].delayNs`: invalid value: integer `-3`, expected u64",
        ),
        (
            "no-response.json",
            r#"{"version": 1, "interactions": [{"request": {"model": "m"}, "recordedAt": "2025-12-10T18:00:00Z"}]}"#,
            "is invalid at `interactions[0].response`: missing field `response`",
        ),
    ];
    for (name, content, problem) in cases {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        for mode in [CassetteMode::Replay, CassetteMode::Auto] {
            let error = Cassette::open(&path, mode).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("the cassette `{}` {problem}", path.display()),
                "{name} in {mode}"
            );
        }
        // Record mode starts over: the broken file is replaced by an empty cassette.
        Cassette::open(&path, CassetteMode::Record).unwrap();
        assert_eq!(read_cassette(&path), CassetteFile::new());
    }
}

#[test]
fn modes_read_from_text() {
    assert_eq!("record".parse(), Ok(CassetteMode::Record));
    assert_eq!("replay".parse(), Ok(CassetteMode::Replay));
    assert_eq!("auto".parse(), Ok(CassetteMode::Auto));
    assert_eq!(
        "Replay".parse::<CassetteMode>(),
        Err(UnknownCassetteMode {
            given: "Replay".to_owned()
        })
    );
    assert_eq!(
        UnknownCassetteMode {
            given: "x".to_owned()
        }
        .to_string(),
        "unknown cassette mode `x`: use record, replay or auto"
    );
    assert_eq!(CassetteMode::Auto.to_string(), "auto");
    assert_eq!(
        serde_json::to_value(CassetteMode::Replay).unwrap(),
        json!("replay")
    );
}

#[tokio::test(start_paused = true)]
async fn a_cassette_is_an_interceptor_for_any_model() {
    let dir = TempDir::new("interceptor");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(1, "hello")])]);
    let interceptor: Arc<dyn LlmInterceptor> = Arc::new(open(&path, CassetteMode::Record));
    let model = interceptor.wrap(live);
    assert_eq!(model.generate(request("hi")).await.unwrap().text, "hello");
    assert_eq!(answers(&read_cassette(&path)), ["hello"]);
}

#[tokio::test(start_paused = true)]
async fn a_caller_that_gives_up_waiting_does_not_cut_the_recording_short() {
    let dir = TempDir::new("caller-gives-up");
    let path = dir.join("c.json");
    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(5, "slow "), (5, "answer")])]);
    let model = open(&path, CassetteMode::Record).wrap(live.clone());
    let gave_up = tokio::time::timeout(ms(3), model.generate(request("hi"))).await;
    assert!(gave_up.is_err());
    assert!(read_cassette(&path).interactions.is_empty());
    // The forward goes on in its own task and lands in the cassette.
    tokio::time::sleep(ms(20)).await;
    assert_eq!(live.produced(), 2);
    assert_eq!(answers(&read_cassette(&path)), ["slow answer"]);
}

#[tokio::test(start_paused = true)]
async fn a_cassette_records_the_gemini_rest_client_and_keeps_its_key_out() {
    let dir = TempDir::new("gemini");
    let path = dir.join("c.json");
    let standin = GeminiStandin::bind().await;
    standin.push(HttpAnswer::sse([
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Dark"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " blue."}]},
                               "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 3,
                                 "totalTokenCount": 24}}),
    ]));
    let live = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let ask = || request("What colour is the sea at night?").system("Answer in three words.");

    let recorded = open(&path, CassetteMode::Record)
        .wrap(live.clone())
        .generate(ask())
        .await
        .unwrap();
    assert_eq!(recorded.text, "Dark blue.");
    assert_eq!(standin.requests().len(), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(STANDIN_API_KEY));
    let file = read_cassette(&path);
    assert_eq!(
        serde_json::Value::Object(file.interactions[0].request.clone()),
        json!({
            "model": "gemini-2.5-flash",
            "systemInstruction": "Answer in three words.",
            "contents": [{"role": "user", "parts": [{"text": "What colour is the sea at night?"}]}]
        })
    );
    assert_eq!(answers(&file), ["Dark blue."]);
    assert_eq!(file.interactions[0].usage.map(|u| u.total_tokens), Some(24));

    // Replayed with the live client still behind it: the stand-in is not asked again.
    let replayed = open(&path, CassetteMode::Replay)
        .wrap(live)
        .generate(ask())
        .await
        .unwrap();
    assert_eq!(replayed, recorded);
    assert_eq!(standin.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_session_keeps_its_cassette_beside_its_wire_log() {
    let dir = TempDir::new("beside");
    let wire_log = dir.join("weather.wire.jsonl");
    assert_eq!(
        Cassette::path_beside(&wire_log),
        dir.join("weather.cassette.json")
    );
    assert_eq!(
        Cassette::path_beside(dir.join("run.log")),
        dir.join("run.cassette.json")
    );
    assert_eq!(
        Cassette::path_beside(dir.join("bare")),
        dir.join("bare.cassette.json")
    );

    let live = ScriptedLlm::new("gemini-2.5-flash", [texts(&[(1, "hello")])]);
    let recording = Cassette::beside(&wire_log, CassetteMode::Record).unwrap();
    let model = recording.interceptor().wrap(live);
    model.generate(request("hi")).await.unwrap();
    assert_eq!(dir.names(), ["weather.cassette.json"]);

    let replay = Cassette::beside(&wire_log, CassetteMode::Replay).unwrap();
    assert_eq!(replay.path(), dir.join("weather.cassette.json"));
    assert_eq!(replay.mode(), CassetteMode::Replay);
    let offline = replay.model("gemini-2.5-flash");
    assert_eq!(offline.generate(request("hi")).await.unwrap().text, "hello");
    assert_eq!(replay.unused().await, Vec::<usize>::new());
}
