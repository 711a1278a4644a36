//! The trace gaps seed 001 names, on the weather session's trace: its cost from a price
//! table (`reel trace show --prices`), and `reel diff` on two traces, turn by turn.

use crate::cli_support::{TempDir, arg, reel};

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/weather.trace.json"
);

const PRICES: &str = r#"{"currency": "USD", "models": {"gemini-live-2.5-flash-preview": {"promptPerMillion": 1, "completionPerMillion": 10}}}"#;

#[test]
fn trace_show_prices_the_tokens() {
    let dir = TempDir::new("trace-cost");
    let prices = dir.join("prices.json");
    std::fs::write(&prices, PRICES).unwrap();
    let (code, out, err) = reel(&["trace", "show", TRACE, "--prices", arg(&prices)]);
    assert_eq!((code, err.as_str()), (0, ""));
    // 329 prompt tokens at 1 per million, 45 completion at 10: 0.000779.
    assert!(
        out.ends_with(
            "  tokens      329 prompt · 45 completion · 374 total\n  ttft        mean 180.0 ms · p50 180 ms · max 180 ms\n  cost        0.000779 USD\n"
        ),
        "{out}"
    );
    let (code, out, _) = reel(&["trace", "show", TRACE, "--prices", arg(&prices), "--json"]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["cost"],
        serde_json::json!({"amount": 0.000779, "currency": "USD", "pricedAnswers": 3, "unpricedAnswers": 0})
    );
    // A model the table does not hold: the figure says it is a lower bound.
    std::fs::write(&prices, r#"{"currency": "EUR", "models": {}}"#).unwrap();
    let (_, out, _) = reel(&["trace", "show", TRACE, "--prices", arg(&prices)]);
    assert!(
        out.ends_with(
            "  cost        0.000000 EUR (at least: 3 answers unpriced, no price for gemini-live-2.5-flash-preview)\n"
        ),
        "{out}"
    );
    std::fs::write(
        &prices,
        r#"{"currency": "EUR", "models": {"m": {"prompt": 1}}}"#,
    )
    .unwrap();
    let (code, out, err) = reel(&["trace", "show", TRACE, "--prices", arg(&prices)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "reel: {}: not a price table: unknown field `prompt`, expected `promptPerMillion` or `completionPerMillion` (at `models.m.prompt`)\n",
            prices.display()
        )
    );
}

#[test]
fn diff_compares_two_traces_turn_by_turn_ignoring_timing() {
    let dir = TempDir::new("trace-diff");
    let mut trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(TRACE).unwrap()).unwrap();
    // Timing and tokens differ between any two runs: not a difference.
    trace["entries"][1]["durationMs"] = 999.into();
    trace["entries"][1]["tokenUsage"]["prompt"] = 1.into();
    trace["entries"][3]["toolCalls"][0]["id"] = "other-id".into();
    let retimed = dir.join("retimed.trace.json");
    std::fs::write(&retimed, serde_json::to_string(&trace).unwrap()).unwrap();
    let (code, out, err) = reel(&["diff", TRACE, arg(&retimed)]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "SAME — 3 turns: the same requests, answers and tool calls (timing and tokens not compared)\n",
            ""
        )
    );

    trace["entries"][3]["toolCalls"][0]["arguments"]["city"] = "Paris".into();
    trace["entries"][3]["text"] = "It's 21°C in Paris.".into();
    let paris = dir.join("paris.trace.json");
    std::fs::write(&paris, serde_json::to_string(&trace).unwrap()).unwrap();
    let (code, out, _) = reel(&["diff", TRACE, arg(&paris)]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "DIFFERENT — first divergence at turn 2 of 3: what was asked, answered or called
  before it:
    turn 1  \"Hello!\" → \"Hi! I'm your weather assistant. Which city would you like t…
  A turn 2  \"What's the weather in London?\" → \"It's 14°C and cloudy in London right now. Anything else I c…
  B turn 2  \"What's the weather in London?\" → \"It's 21°C in Paris.\"
  differences:
    response.toolCalls[0].arguments.city: A \"London\", B \"Paris\"
    response.text: A \"It's 14°C and cloudy in London right now. Anything else I can help with?\", B \"It's 21°C in Paris.\"
"
    );
    let (_, out, _) = reel(&["diff", TRACE, arg(&paris), "--json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (json["same"].clone(), json["turn"].clone()),
        (false.into(), 2.into())
    );
    assert_eq!(
        json["differences"][0],
        serde_json::json!({"path": "response.toolCalls[0].arguments.city", "a": "London", "b": "Paris"})
    );

    // One turn fewer.
    let entries = trace["entries"].as_array_mut().unwrap();
    entries.truncate(4);
    let short = dir.join("short.trace.json");
    std::fs::write(&short, serde_json::to_string(&trace).unwrap()).unwrap();
    let (code, out, _) = reel(&["diff", arg(&paris), arg(&short)]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("DIFFERENT — first divergence at turn 3 of 3: B ends after 2 turns\n"),
        "{out}"
    );
    assert!(out.contains("  B (no more turns)\n"), "{out}");
}

/// `bytes` gzip-compressed, as `gzip` writes them.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` Zstandard-compressed, as `zstd` writes them.
fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

#[test]
fn compressed_logs_and_traces_read_as_plain_ones() {
    let dir = TempDir::new("compressed");
    let log = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/tapes/weather.wire.jsonl"
    ))
    .unwrap();
    let trace = std::fs::read(TRACE).unwrap();
    let (plain_log, gz_log, zst_log) = (
        dir.join("weather.wire.jsonl"),
        dir.join("gz/weather.wire.jsonl.gz"),
        dir.join("zst/weather.wire.jsonl.zst"),
    );
    std::fs::create_dir_all(dir.join("gz")).unwrap();
    std::fs::create_dir_all(dir.join("zst")).unwrap();
    std::fs::write(&plain_log, &log).unwrap();
    std::fs::write(&gz_log, gzip(&log)).unwrap();
    // Two frames: a stream written in pieces (`zstd` on a pipe, concatenated files).
    let half = log.len() / 2;
    let cut = half + log[half..].iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut two_frames = zstd(&log[..cut]);
    two_frames.extend(zstd(&log[cut..]));
    std::fs::write(&zst_log, two_frames).unwrap();
    let zst_trace = dir.join("weather.trace.json.zst");
    std::fs::write(&zst_trace, zstd(&trace)).unwrap();

    // show, replay, export read each as the plain log.
    let shown = reel(&["show", arg(&plain_log)]);
    for compressed in [&gz_log, &zst_log] {
        assert_eq!(
            reel(&["show", arg(compressed)]),
            shown,
            "{}",
            compressed.display()
        );
        let (code, out, _) = reel(&["replay", arg(compressed)]);
        assert_eq!(code, 0);
        assert!(
            out.ends_with(
                "  CLEAN — every runtime frame as recorded; no journal given to compare.\n"
            ),
            "{out}"
        );
        let (code, out, _) = reel(&["export", arg(compressed)]);
        assert_eq!((code, out), (0, String::from_utf8(trace.clone()).unwrap()));
    }
    // A replay farm finds compressed logs in a directory.
    let (code, out, _) = reel(&["replay", arg(&dir.join("gz")), arg(&dir.join("zst"))]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2 sessions"), "{out}");
    // trace show and diff read a compressed trace.
    assert_eq!(
        reel(&["trace", "show", arg(&zst_trace)]),
        reel(&["trace", "show", TRACE])
    );
    let (code, out, _) = reel(&["diff", arg(&zst_trace), TRACE]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "SAME — 3 turns: the same requests, answers and tool calls (timing and tokens not compared)\n"
        )
    );

    // A damaged compressed file is bad input, named.
    let mut damaged = gzip(&log);
    damaged.truncate(damaged.len() / 2);
    let broken = dir.join("broken.wire.jsonl.gz");
    std::fs::write(&broken, damaged).unwrap();
    let (code, out, err) = reel(&["show", arg(&broken)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with(&format!("reel: cannot read {}: ", broken.display())),
        "{err}"
    );
}

const TAPE: &str = r#"{
  "meta": {"label": "smoke-001", "model": "gemini-2.5-flash", "recordedAt": "2025-12-10T18:00:00Z", "sdk": "reel 0.1.0"},
  "request": {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "Name one planet."}]}]},
  "stream": [
    {"delayNs": 150000000, "text": "Mar"},
    {"delayNs": 12000000, "text": "s", "finishReason": "STOP", "usage": {"promptTokens": 4, "responseTokens": 1, "totalTokens": 5}}
  ],
  "end": {"kind": "error", "delayNs": 3000000, "message": "the model API answered 503"}
}"#;

#[test]
fn a_per_call_tape_is_shown_and_exported() {
    let dir = TempDir::new("tape");
    let tape = dir.join("smoke-001.json");
    std::fs::write(&tape, TAPE).unwrap();
    let (code, out, err) = reel(&["show", arg(&tape)]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "tape smoke-001 · model gemini-2.5-flash · recorded 2025-12-10T18:00:00.000Z · sdk reel 0.1.0
  prompt    \"Name one planet.\"
  chunk 1   +0.150s  \"Mar\"
  chunk 2   +0.162s  \"s\" · STOP
  answer    \"Mars\"
  end       failed 0.003s after the last chunk: the model API answered 503
"
    );
    let (code, out, _) = reel(&["export", arg(&tape)]);
    assert_eq!(code, 0);
    let trace: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(trace["traceName"], "smoke-001");
    let response = &trace["entries"][1];
    assert_eq!(
        (
            &response["text"],
            &response["chunks"],
            &response["timeToFirstTokenMs"],
            &response["error"]
        ),
        (
            &serde_json::json!("Mars"),
            &serde_json::json!(["Mar", "s"]),
            &serde_json::json!(150),
            &serde_json::json!("failed 0.003s after the last chunk: the model API answered 503")
        )
    );
    assert_eq!(trace["entries"][0]["prompt"], "Name one planet.");
}
