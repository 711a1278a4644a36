//! `reel export` on a cassette: the out-of-band calls of a session, recorded through a
//! cassette from a real `GeminiLlm` talking HTTP to the loopback stand-in, export as an
//! agent trace (one request and response per call, valid against `reel schema trace`) and
//! as OpenTelemetry `chat` spans, the same bytes every time.

use crate::cli_support;

use std::sync::Arc;

use cli_support::{TempDir, arg, reel};
use reel_actors::clock::ManualClock;
use reel_actors::llm::{BaseLlm, Cassette, CassetteMode, LlmInterceptor, LlmRequest};
use reel_actors::testing::gemini_standin::{Answer, GeminiStandin};
use serde_json::{Value, json};

const T0: u64 = 1_748_768_400_000;

fn answer(text: &str, prompt: u64, response: u64) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": response, "totalTokenCount": prompt + response}
    })
}

/// Two extractor-like calls recorded into `X.cassette.json` beside `X.wire.jsonl`.
async fn record_cassette(dir: &TempDir) -> std::path::PathBuf {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::sse([
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "{\"city\":"}]}}]}),
        answer("\"London\"}", 40, 6),
    ]));
    standin.push(Answer::sse([answer("{\"mood\":\"calm\"}", 52, 5)]));
    let live: Arc<dyn BaseLlm> = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let cassette = Cassette::builder(
        Cassette::path_beside(dir.join("session.wire.jsonl")),
        CassetteMode::Record,
    )
    .clock(Arc::new(ManualClock::new(T0)))
    .open()
    .unwrap();
    let model = cassette.wrap(live);
    for (system, user) in [
        ("Extract the city.", "What's the weather in London?"),
        ("Extract the mood.", "Thanks, that's all I needed."),
    ] {
        let request = LlmRequest::new("gemini-2.5-flash")
            .system(system)
            .user(user);
        model.generate(request).await.unwrap();
    }
    cassette.path().to_owned()
}

#[tokio::test]
async fn a_cassette_exports_as_a_trace_and_as_spans() {
    let dir = TempDir::new("export-cassette");
    let cassette = record_cassette(&dir).await;
    assert!(cassette.ends_with("session.cassette.json"));

    let (code, stdout, stderr) = reel(&["export", arg(&cassette)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let trace: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&trace["traceName"], &trace["agentName"], &trace["model"]),
        (
            &json!("session"),
            &json!("gemini-2.5-flash"),
            &json!("gemini-2.5-flash")
        )
    );
    let entries = trace["entries"].as_array().unwrap();
    let summary: Vec<(String, u64, Value)> = entries
        .iter()
        .map(|e| {
            let what = match e["type"].as_str().unwrap() {
                "Request" => e["prompt"].clone(),
                _ => e["text"].clone(),
            };
            (
                e["type"].as_str().unwrap().to_owned(),
                e["index"].as_u64().unwrap(),
                what,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "Request".to_owned(),
                0,
                json!("What's the weather in London?")
            ),
            ("Response".to_owned(), 0, json!("{\"city\":\"London\"}")),
            (
                "Request".to_owned(),
                1,
                json!("Thanks, that's all I needed.")
            ),
            ("Response".to_owned(), 1, json!("{\"mood\":\"calm\"}")),
        ]
    );
    assert_eq!(entries[0]["timestamp"], "2025-06-01T09:00:00.000Z");
    assert_eq!(
        entries[0]["body"]["systemInstruction"],
        json!("Extract the city.")
    );
    assert_eq!(entries[1]["chunks"], json!(["{\"city\":", "\"London\"}"]));
    assert_eq!(entries[1]["finishReason"], "STOP");
    assert_eq!(
        entries[1]["tokenUsage"],
        json!({"prompt": 40, "completion": 6, "total": 46})
    );
    assert_eq!(trace["performance"]["totalPromptTokens"], 92);
    assert_eq!(trace["performance"]["totalCompletionTokens"], 11);
    let validator = jsonschema::draft202012::new(&reel_recorder::schema::trace_schema()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&trace)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, Vec::<String>::new());

    // OTLP: one `chat` span per call under the session span; the same bytes twice.
    let (code, otlp, stderr) = reel(&["export", arg(&cassette), "--format", "otlp"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let (_, again, _) = reel(&["export", arg(&cassette), "--format", "otlp"]);
    assert_eq!(otlp, again);
    let otlp: Value = serde_json::from_str(&otlp).unwrap();
    let spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("chat")).count(),
        2,
        "{names:?}"
    );

    // A cassette that is not one: a clear line naming the file and the path, exit 2.
    let broken = dir.join("broken.cassette.json");
    std::fs::write(&broken, r#"{"version":1,"interactions":[{"request":{}}]}"#).unwrap();
    let (code, stdout, stderr) = reel(&["export", arg(&broken)]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("broken.cassette.json") && stderr.contains("interactions[0]"),
        "{stderr}"
    );
}

/// Issue 25, §6: a cassette is read once, so a FIFO (or `<(cat X.cassette.json)`) exports
/// as the file does (it was read twice: the second read found the pipe empty).
#[tokio::test]
async fn a_cassette_through_a_fifo_exports_as_the_file_does() {
    let dir = TempDir::new("export-cassette-fifo");
    let cassette = record_cassette(&dir).await;
    let (code, from_file, stderr) = reel(&["export", arg(&cassette)]);
    assert_eq!((code, stderr.as_str()), (0, ""));

    let fifo = dir.join("piped.cassette.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let bytes = std::fs::read(&cassette).unwrap();
    let writer = {
        let fifo = fifo.clone();
        // Opening a FIFO for writing waits for its reader: `reel export` below.
        std::thread::spawn(move || std::fs::write(fifo, bytes))
    };
    let (code, from_fifo, stderr) = reel(&["export", arg(&fifo), "--name", "session"]);
    writer.join().unwrap().unwrap();
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(from_fifo, from_file);
}
