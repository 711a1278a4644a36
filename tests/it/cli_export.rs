//! `reel export`: the bundled weather session (a whole recorded session with a tool call)
//! exports to the golden trace and OTLP files, byte for byte, every time; the trace
//! validates against `reel schema trace`; bad input ends with exit code 2 and a line
//! naming the file. After an intended change: `REEL_BLESS=1 cargo test --test it cli_export::`.

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, lines, record, reel, write_lines};
use serde_json::{Value, json};

const WEATHER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/tapes/weather.wire.jsonl"
);

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `actual` with the golden file `name`, or rewrites it under `REEL_BLESS`.
fn assert_golden(name: &str, actual: &str) {
    let path = golden(name);
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        actual, expected,
        "{name} is stale: re-bless it if the change is intended"
    );
}

fn trace_validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&reel_recorder::schema::trace_schema()).unwrap()
}

fn schema_errors(trace: &Value) -> Vec<String> {
    trace_validator()
        .iter_errors(trace)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn the_weather_session_exports_to_the_golden_trace() {
    let (code, stdout, stderr) = reel(&["export", WEATHER, "--format", "trace"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_golden("weather.trace.json", &stdout);
    let trace: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(schema_errors(&trace), Vec::<String>::new());
    // Trace is the default format.
    let (code, default, _) = reel(&["export", WEATHER]);
    assert_eq!((code, default), (0, stdout));
    // The turn with the tool call: its arguments, and the result the runtime sent back.
    assert_eq!(
        trace["entries"][3]["toolCalls"],
        json!([{
            "name": "get_weather",
            "id": "fc-1",
            "arguments": {"city": "London"},
            "result": {"city": "London", "temp_c": 14, "conditions": "cloudy"},
            "timestamp": "2025-06-01T09:00:00.540Z",
            "durationMs": 0
        }])
    );
}

#[test]
fn the_weather_session_exports_to_the_golden_otlp_spans_identically_each_time() {
    let (code, first, stderr) = reel(&["export", WEATHER, "--format", "otlp"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let (_, second, _) = reel(&["export", WEATHER, "--format", "otlp"]);
    assert_eq!(first, second);
    assert_golden("weather.otlp.json", &first);
    let otlp: Value = serde_json::from_str(&first).unwrap();
    let spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let outline: Vec<(&str, Option<&str>)> = spans
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["parentSpanId"].as_str()))
        .collect();
    let (session, turn_2) = (spans[0]["spanId"].as_str(), spans[2]["spanId"].as_str());
    assert_eq!(
        outline,
        [
            ("invoke_agent gemini-live-2.5-flash-preview", None),
            ("chat gemini-live-2.5-flash-preview", session),
            ("chat gemini-live-2.5-flash-preview", session),
            ("execute_tool get_weather", turn_2),
            ("chat gemini-live-2.5-flash-preview", session),
        ]
    );
}

#[test]
fn output_file_names_and_content() {
    let dir = TempDir::new("export-out");
    let out = dir.join("weather.trace.json");
    let (code, stdout, stderr) = reel(&["export", WEATHER, "-o", arg(&out)]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let (_, expected, _) = reel(&["export", WEATHER]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);

    let (code, stdout, _) = reel(&[
        "export",
        WEATHER,
        "--name",
        "demo",
        "--agent",
        "WeatherAgent",
    ]);
    assert_eq!(code, 0);
    let trace: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (trace["traceName"].as_str(), trace["agentName"].as_str()),
        (Some("demo"), Some("WeatherAgent"))
    );
    assert_eq!(trace["model"], "gemini-live-2.5-flash-preview");

    let (code, stdout, _) = reel(&["export", WEATHER, "--format", "otlp", "--content"]);
    assert_eq!(code, 0);
    let otlp: Value = serde_json::from_str(&stdout).unwrap();
    let tool = &otlp["resourceSpans"][0]["scopeSpans"][0]["spans"][3];
    let content: Vec<&Value> = tool["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|kv| {
            kv["key"]
                .as_str()
                .unwrap()
                .starts_with("gen_ai.tool.call.a")
                || kv["key"] == "gen_ai.tool.call.result"
        })
        .collect();
    assert_eq!(
        content,
        [
            &json!({"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "{\"city\":\"London\"}"}}),
            &json!({"key": "gen_ai.tool.call.result", "value": {"stringValue": "{\"city\":\"London\",\"temp_c\":14,\"conditions\":\"cloudy\"}"}}),
        ]
    );
}

/// A session reel records itself (a tool call answered in audio, a goAway and a
/// reconnect) exports to a trace the schema accepts, with the reconnect's turn in it.
#[tokio::test(start_paused = true)]
async fn a_session_reel_records_exports_to_a_valid_trace() {
    let dir = TempDir::new("export-recorded");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    let (code, stdout, stderr) = reel(&["export", arg(&wire)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let trace: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(schema_errors(&trace), Vec::<String>::new());
    assert_eq!(trace["traceName"], "s");
    let prompts: Vec<&str> = trace["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["prompt"].as_str())
        .collect();
    assert_eq!(
        prompts,
        ["Hello!", "What's the weather in London?", "Thanks, bye!"]
    );
    let tool_turn = &trace["entries"][3];
    assert_eq!(
        tool_turn["toolCalls"][0]["result"],
        json!({"city": "London", "temp_c": 22})
    );
    assert_eq!(tool_turn["transcript"], "It is 22C in London.");
    assert_eq!(tool_turn["audioMs"], 300.0);
    assert_eq!(tool_turn["tokenUsage"], json!({"total": 42}));
    assert_eq!(trace["performance"]["turnCount"], 3);
}

#[test]
fn bad_input_ends_with_exit_code_2_naming_the_file() {
    let dir = TempDir::new("export-bad");
    let missing = dir.join("missing.wire.jsonl");
    let (code, stdout, stderr) = reel(&["export", arg(&missing)]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.starts_with(&format!("reel: cannot read {}: ", arg(&missing))),
        "{stderr}"
    );

    // Without its setup line, the log does not start a session.
    let headless = dir.join("headless.wire.jsonl");
    write_lines(&headless, &lines(std::path::Path::new(WEATHER))[1..]);
    let (code, stdout, stderr) = reel(&["export", arg(&headless)]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        format!(
            "reel: {}: no setup frame: the first frame the client sent (seq 4) is not a setup; a session's wire log starts with its setup\n",
            arg(&headless)
        )
    );

    let corrupt = dir.join("corrupt.wire.jsonl");
    let mut log = lines(std::path::Path::new(WEATHER));
    log[2] = "{\"seq\":3,".to_owned();
    write_lines(&corrupt, &log);
    let (code, _, stderr) = reel(&["export", arg(&corrupt), "--format", "otlp"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "reel: {}: corrupt at line 3: not a valid wire log entry",
            arg(&corrupt)
        )),
        "{stderr}"
    );

    let (code, _, stderr) = reel(&["export", WEATHER, "--format", "yaml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'yaml'"), "{stderr}");

    let nowhere = dir.join("no/such/dir/out.json");
    let (code, _, stderr) = reel(&["export", WEATHER, "-o", arg(&nowhere)]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "reel: cannot write the output: {}: ",
            arg(&nowhere)
        )),
        "{stderr}"
    );
}

/// A wire-log line of `dir` (`out`/`in`) carrying PCM16LE `samples` at `rate`.
fn audio_line(seq: u64, ts: u64, out: bool, rate: u32, samples: &[i16]) -> String {
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let data = reel_protocol::Base64Data(bytes.into()).encode();
    let blob = json!({"mimeType": format!("audio/pcm;rate={rate}"), "data": data});
    let payload = if out {
        json!({"realtimeInput": {"audio": blob}})
    } else {
        json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": blob}]}}})
    };
    line(seq, ts, out, &payload.to_string())
}

/// A wire-log line of a text frame.
fn line(seq: u64, ts: u64, out: bool, payload: &str) -> String {
    use reel_recorder::wire_log::{Direction, WireEntry};
    let dir = if out { Direction::Out } else { Direction::In };
    let entry = WireEntry::frame(seq, dir, ts, payload.as_bytes().to_vec(), None, false);
    serde_json::to_string(&entry).unwrap()
}

#[test]
fn a_calls_audio_exports_as_a_stereo_wav_on_the_sessions_time_axis() {
    let dir = TempDir::new("export-wav");
    let log = dir.join("call.wire.jsonl");
    write_lines(
        &log,
        &[
            line(1, 1_000, true, r#"{"setup":{"model":"models/m"}}"#),
            // 10 ms of the user at 16 kHz at t=0; 5 ms of the model at 24 kHz at t=20 ms.
            audio_line(2, 1_000, true, 16_000, &[1_000; 160]),
            audio_line(3, 1_020, false, 24_000, &[-2_000; 120]),
        ],
    );
    let wav = dir.join("call.wav");
    let (code, stdout, stderr) = reel(&["export", arg(&log), "--format", "wav", "-o", arg(&wav)]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "reel export: {}: 0.025 s of audio (1 user chunk, 1 model chunk)\n",
            arg(&wav)
        )
    );
    let bytes = std::fs::read(&wav).unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    assert_eq!(&bytes[8..16], b"WAVEfmt ");
    let frames: Vec<(i16, i16)> = bytes[44..]
        .chunks_exact(4)
        .map(|f| {
            (
                i16::from_le_bytes([f[0], f[1]]),
                i16::from_le_bytes([f[2], f[3]]),
            )
        })
        .collect();
    // 25 ms at 24 kHz: the user's 240 frames first, then silence, the model's 120 at 20 ms.
    assert_eq!(frames.len(), 600);
    assert!(frames[..240].iter().all(|f| *f == (1_000, 0)));
    assert!(frames[240..480].iter().all(|f| *f == (0, 0)));
    assert!(frames[480..].iter().all(|f| *f == (0, -2_000)));

    let (code, _, stderr) = reel(&["export", arg(&log), "--format", "wav"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "reel export: --format wav writes a file: give -o OUT.wav\n"
        )
    );
}

#[test]
fn a_timestamp_jump_is_refused_with_its_place_and_leaves_no_file() {
    let dir = TempDir::new("export-wav-jump");
    for (name, jump) in [("max", u64::MAX), ("hour", 1_000 + 3_600_000)] {
        let log = dir.join(&format!("{name}.wire.jsonl"));
        write_lines(
            &log,
            &[
                line(1, 1_000, true, r#"{"setup":{"model":"models/m"}}"#),
                audio_line(2, 1_000, true, 16_000, &[1_000; 160]),
                // One edited ts_ms: rendered, it would be gigabytes of silence.
                audio_line(3, jump, false, 24_000, &[-2_000; 120]),
            ],
        );
        let wav = dir.join(&format!("{name}.wav"));
        let (code, stdout, stderr) =
            reel(&["export", arg(&log), "--format", "wav", "-o", arg(&wav)]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "reel: {}: cannot render the audio: entry seq 3: its ts_ms jumps {} ms past the \
                 entries before it, over the 1800000 ms of silence a WAV renders; the log's \
                 timestamps are damaged\n",
                arg(&log),
                jump - 1_000
            )
        );
        assert!(!wav.exists(), "a WAV cut short is left behind");
    }
}
