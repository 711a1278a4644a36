//! `reel trace show`: an agent trace turn by turn, as text or JSON; a trace that cannot be
//! read ends with exit code 2 and one line naming the file and the JSON path.

use crate::cli_support;

use cli_support::{TempDir, arg, reel};
use serde_json::{Value, json};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/weather.trace.json"
);

/// Seed 001's example trace, its elided tool calls written out.
const SEED_TRACE: &str = r#"{"version":"1.0","traceName":"weather_test","capturedAt":"2026-01-07T10:30:00Z",
"agentName":"WeatherAgent","entries":[
{"type":"Request","index":0,"timestamp":"2026-01-07T10:30:00.000Z","prompt":"What's the weather in Paris?"},
{"type":"Response","index":0,"timestamp":"2026-01-07T10:30:00.500Z","text":"The weather in Paris is 22°C and sunny.",
 "durationMs":500,"toolCalls":[{"name":"get_weather","arguments":{"city":"Paris"}}],"tokenUsage":{"prompt":50,"completion":30}}],
"performance":{"totalDurationMs":500,"totalPromptTokens":50,"totalCompletionTokens":30}}"#;

#[test]
fn the_weather_trace_shows_turn_by_turn() {
    let (code, stdout, stderr) = reel(&["trace", "show", GOLDEN]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        r#"trace weather · agent gemini-live-2.5-flash-preview · captured 2025-06-01T09:00:00.000Z · format 1.0

turn 1  +0.180s  ttft 180 ms · 180 ms · STOP
  prompt      "Hello!"
  response    "Hi! I'm your weather assistant. Which city would you like the weather for?"
  tokens      48 prompt · 17 completion · 65 total

turn 2  +0.360s  ttft 180 ms · 360 ms · STOP
  prompt      "What's the weather in London?"
  tool        get_weather({"city":"London"}) → {"city":"London","temp_c":14,"conditions":"cloudy"} (0 ms)
  response    "It's 14°C and cloudy in London right now. Anything else I can help with?"
  tokens      121 prompt · 19 completion · 140 total

turn 3  +0.720s  ttft 180 ms · 180 ms · STOP
  instruction "Tell the user the weather you looked up, in one sentence, and ask if they need anything else."
  prompt      "Thanks, that's all I needed."
  response    "You're welcome. Have a lovely day!"
  tokens      160 prompt · 9 completion · 169 total

performance
  count       3 turns · 1 tool call · 0 interruptions
  duration    720 ms waiting for the model · session 1.300s
  tokens      329 prompt · 45 completion · 374 total
  ttft        mean 180.0 ms · p50 180 ms · max 180 ms
"#
    );
}

#[test]
fn json_pairs_each_request_with_its_response() {
    let (code, stdout, stderr) = reel(&["trace", "show", GOLDEN, "--json"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(GOLDEN).unwrap()).unwrap();
    let entries = golden["entries"].as_array().unwrap();
    let turns: Vec<Value> = (0..3)
        .map(|i| {
            let request = &entries[2 * i];
            let offset = [180, 360, 720][i];
            json!({"turn": i + 1, "offsetMs": offset, "request": without_type(request), "response": without_type(&entries[2 * i + 1])})
        })
        .collect();
    assert_eq!(
        shown,
        json!({
            "version": "1.0",
            "traceName": "weather",
            "agentName": "gemini-live-2.5-flash-preview",
            "model": "gemini-live-2.5-flash-preview",
            "capturedAt": "2025-06-01T09:00:00.000Z",
            "turns": turns,
            "performance": golden["performance"]
        })
    );
}

fn without_type(entry: &Value) -> Value {
    let mut entry = entry.clone();
    entry.as_object_mut().unwrap().remove("type");
    entry
}

#[test]
fn seed_001s_trace_and_a_voice_trace_show_what_they_hold() {
    let dir = TempDir::new("trace-show");
    let seed = dir.join("seed.trace.json");
    std::fs::write(&seed, SEED_TRACE).unwrap();
    let (code, stdout, _) = reel(&["trace", "show", arg(&seed)]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        r#"trace weather_test · agent WeatherAgent · captured 2026-01-07T10:30:00.000Z · format 1.0

turn 1  +0.000s  500 ms
  prompt      "What's the weather in Paris?"
  tool        get_weather({"city":"Paris"}) → no result
  response    "The weather in Paris is 22°C and sunny."
  tokens      50 prompt · 30 completion

performance
  duration    500 ms waiting for the model
  tokens      50 prompt · 30 completion
"#
    );

    let voice = dir.join("voice.trace.json");
    let trace = json!({
        "version": "1.0", "traceName": "voice", "capturedAt": "2024-06-10T06:13:20.000Z",
        "agentName": "gemini-live-2.5-flash", "model": "gemini-live-2.5-flash",
        "entries": [
            {"type": "Request", "index": 0, "timestamp": "2024-06-10T06:13:20.300Z",
             "transcript": "What's the weather in Oslo?",
             "inputs": [{"kind": "realtimeInput.audio", "frames": 2, "audioMs": 200.0}, {"kind": "realtimeInput.audioStreamEnd"}]},
            {"type": "Response", "index": 0, "timestamp": "2024-06-10T06:13:20.760Z",
             "transcript": "It is minus two.", "audioMs": 1500.4, "durationMs": 460, "timeToFirstTokenMs": 200,
             "toolCalls": [{"name": "get_weather", "id": "c1", "arguments": {"city": "Oslo"}, "cancelled": true}],
             "tokenUsage": {"prompt": 100, "completion": 20, "thoughts": 10, "cached": 64},
             "interrupted": true, "incomplete": true},
            {"type": "Request", "index": 1, "timestamp": "2024-06-10T06:13:21.000Z", "prompt": "Hi", "model": "gemini-2.5-pro"},
            {"type": "Response", "index": 1, "timestamp": "2024-06-10T06:13:21.100Z", "durationMs": 100, "error": "the model API answered 503"},
            {"type": "Request", "index": 2, "timestamp": "2024-06-10T06:13:22.000Z", "prompt": "Still there?"}
        ],
        "performance": {"totalDurationMs": 560, "totalPromptTokens": 100, "totalCompletionTokens": 20,
                        "totalThoughtsTokens": 10, "totalCachedTokens": 64, "turnCount": 2, "toolCallCount": 1,
                        "interruptionCount": 1, "sessionDurationMs": 2000}
    });
    std::fs::write(&voice, trace.to_string()).unwrap();
    let (code, stdout, stderr) = reel(&["trace", "show", arg(&voice)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        r#"trace voice · agent gemini-live-2.5-flash · captured 2024-06-10T06:13:20.000Z · format 1.0

turn 1  +0.300s  ttft 200 ms · 460 ms
  input       realtimeInput.audio ×2 (0.200s), realtimeInput.audioStreamEnd
  heard       "What's the weather in Oslo?"
  tool        get_weather({"city":"Oslo"}) → cancelled
  said        "It is minus two."
  audio       1.500s
  tokens      100 prompt · 20 completion · 10 thoughts · 64 cached
  note        interrupted by the user; the recording ended before the answer did

turn 2  +1.000s  100 ms
  model       gemini-2.5-pro
  prompt      "Hi"
  error       the model API answered 503

turn 3  +2.000s
  prompt      "Still there?"
  response    none recorded

performance
  count       2 turns · 1 tool call · 1 interruption
  duration    560 ms waiting for the model · session 2.000s
  tokens      100 prompt · 20 completion · 10 thoughts · 64 cached
"#
    );
}

#[test]
fn a_trace_that_cannot_be_read_ends_with_exit_code_2() {
    let dir = TempDir::new("trace-bad");
    let missing = dir.join("missing.trace.json");
    let (code, stdout, stderr) = reel(&["trace", "show", arg(&missing)]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.starts_with(&format!("reel: cannot read {}: ", arg(&missing))),
        "{stderr}"
    );

    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cases = [
        (
            write(
                "log.trace.json",
                "{\"seq\":1,\"dir\":\"out\"}\n{\"seq\":2}\n",
            ),
            "at version: missing field `version`",
        ),
        (
            write("cut.trace.json", "{\"version\": \"1.0\",\n"),
            "is not JSON: EOF while parsing a value at line 2, column 0",
        ),
        (
            write(
                "type.trace.json",
                &SEED_TRACE.replace("\"durationMs\":500", "\"durationMs\":\"slow\""),
            ),
            "at entries[1].durationMs: invalid type: string \"…\", expected u64",
        ),
        (
            write("v2.trace.json", &SEED_TRACE.replace("\"1.0\"", "\"2.0\"")),
            "at version: trace format version 2.0 is not supported (this reader reads 1.x)",
        ),
        (
            write(
                "index.trace.json",
                &SEED_TRACE.replace("\"Response\",\"index\":0", "\"Response\",\"index\":1"),
            ),
            "at entries[1].index: response 1 answers no earlier request",
        ),
    ];
    for (path, problem) in cases {
        let (code, stdout, stderr) = reel(&["trace", "show", arg(&path), "--json"]);
        assert_eq!((code, stdout.as_str()), (2, ""));
        assert_eq!(stderr, format!("reel: `{}` {problem}\n", arg(&path)));
    }

    let (code, _, stderr) = reel(&["trace"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("Usage: reel trace <COMMAND>"), "{stderr}");
}

/// A text-agent pipeline's trace (reel-agents, recorded by `TraceRecorder`): each model
/// call carries the agent that made it.
const PIPELINE_TRACE: &str = r#"{"version":"1.0","traceName":"haiku","capturedAt":"2026-01-07T10:30:00Z",
"agentName":"haiku","model":"gemini-2.5-flash","entries":[
{"type":"Request","index":0,"timestamp":"2026-01-07T10:30:00.000Z","prompt":"autumn","agent":"writer"},
{"type":"Response","index":0,"timestamp":"2026-01-07T10:30:00.400Z","text":"moon on the water","durationMs":400,
 "tokenUsage":{"prompt":7,"completion":3,"total":10}},
{"type":"Request","index":1,"timestamp":"2026-01-07T10:30:00.400Z","prompt":"moon on the water","agent":"reviewer"},
{"type":"Response","index":1,"timestamp":"2026-01-07T10:30:00.650Z","text":"APPROVED","durationMs":250,
 "tokenUsage":{"prompt":9,"completion":1,"total":10}}],
"performance":{"totalDurationMs":650,"totalPromptTokens":16,"totalCompletionTokens":4}}"#;

#[test]
fn a_pipeline_trace_shows_each_step_with_its_agent_time_and_tokens() {
    let dir = TempDir::new("trace-pipeline");
    let path = dir.join("haiku.trace.json");
    std::fs::write(&path, PIPELINE_TRACE).unwrap();
    let (code, stdout, stderr) = reel(&["trace", "show", arg(&path)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        r#"trace haiku · agent haiku · captured 2026-01-07T10:30:00.000Z · format 1.0

turn 1  +0.000s  400 ms
  agent       writer
  prompt      "autumn"
  response    "moon on the water"
  tokens      7 prompt · 3 completion · 10 total

turn 2  +0.400s  250 ms
  agent       reviewer
  prompt      "moon on the water"
  response    "APPROVED"
  tokens      9 prompt · 1 completion · 10 total

performance
  duration    650 ms waiting for the model
  tokens      16 prompt · 4 completion
"#
    );
}
