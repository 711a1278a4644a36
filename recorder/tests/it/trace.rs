//! Agent traces: the documented format reads, reel's writes read back exactly, every way a
//! file can be wrong is an error naming the file and the JSON path, and the schema accepts
//! real traces (`reel export`'s golden) and rejects broken ones.

use crate::common;

use common::TempFile;
use reel_recorder::schema::trace_schema;
use reel_recorder::trace::{
    AgentTrace, Timestamp, TokenUsage, TraceEntry, TraceError, TraceInput, TracePerformance,
    TraceProblem, TraceRequest, TraceResponse, TraceToolCall, parse_trace, read_trace, write_trace,
};
use serde_json::{Value, json};

/// Seed 001's example trace, with its elided `toolCalls` written out as one call.
const SEED_TRACE: &str = r#"{
  "version": "1.0",
  "traceName": "weather_test",
  "capturedAt": "2026-01-07T10:30:00Z",
  "agentName": "WeatherAgent",
  "entries": [
    {
      "type": "Request",
      "index": 0,
      "timestamp": "2026-01-07T10:30:00.000Z",
      "prompt": "What's the weather in Paris?"
    },
    {
      "type": "Response",
      "index": 0,
      "timestamp": "2026-01-07T10:30:00.500Z",
      "text": "The weather in Paris is 22°C and sunny.",
      "durationMs": 500,
      "toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
      "tokenUsage": { "prompt": 50, "completion": 30 }
    }
  ],
  "performance": {
    "totalDurationMs": 500,
    "totalPromptTokens": 50,
    "totalCompletionTokens": 30
  }
}"#;

/// 2026-01-07T10:30:00Z.
const T0: u64 = 1_767_781_800_000;

fn at(ms: u64) -> Timestamp {
    Timestamp::from_epoch_ms(T0 + ms)
}

fn golden_trace() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/weather.trace.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn seed_001s_example_reads_as_written() {
    let trace = parse_trace(SEED_TRACE, "weather_test.trace.json").unwrap();
    assert_eq!(trace.version, "1.0");
    assert_eq!(trace.trace_name, "weather_test");
    assert_eq!(trace.agent_name, "WeatherAgent");
    assert_eq!(trace.captured_at, at(0));
    assert_eq!(
        trace.entries,
        [
            TraceEntry::Request(TraceRequest {
                index: 0,
                timestamp: at(0),
                prompt: Some("What's the weather in Paris?".into()),
                ..TraceRequest::default()
            }),
            TraceEntry::Response(TraceResponse {
                index: 0,
                timestamp: at(500),
                text: Some("The weather in Paris is 22°C and sunny.".into()),
                duration_ms: Some(500),
                tool_calls: vec![TraceToolCall {
                    name: "get_weather".into(),
                    id: None,
                    arguments: json!({"city": "Paris"}),
                    result: None,
                    timestamp: None,
                    duration_ms: None,
                    cancelled: false,
                }],
                token_usage: Some(TokenUsage {
                    prompt: Some(50),
                    completion: Some(30),
                    ..TokenUsage::default()
                }),
                ..TraceResponse::default()
            }),
        ]
    );
    let turns = trace.turns();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].response.unwrap().duration_ms, Some(500));
    // The seed's performance block is what reel computes from its entries, plus counts.
    let computed = TracePerformance::of(&trace.entries);
    assert_eq!(
        (
            computed.total_duration_ms,
            computed.total_prompt_tokens,
            computed.total_completion_tokens
        ),
        (500, 50, 30)
    );
    assert_eq!(
        (
            computed.turn_count,
            computed.tool_call_count,
            computed.interruption_count
        ),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(computed.mean_time_to_first_token_ms, None);
}

/// A trace using every field reel adds.
fn full_trace() -> AgentTrace {
    let mut trace = AgentTrace::new("voice", "gemini-live-2.5-flash", at(0));
    trace.model = Some("gemini-live-2.5-flash".into());
    trace.entries = vec![
        TraceEntry::Request(TraceRequest {
            index: 0,
            timestamp: at(1_200),
            prompt: None,
            transcript: Some("What's the weather in Oslo?".into()),
            inputs: vec![
                TraceInput {
                    kind: "realtimeInput.audio".into(),
                    text: None,
                    frames: 12,
                    audio_ms: Some(1200.0),
                },
                TraceInput {
                    kind: "realtimeInput.audioStreamEnd".into(),
                    text: None,
                    frames: 1,
                    audio_ms: None,
                },
            ],
            instruction: Some("Be brief.".into()),
            model: None,
            agent: None,
            body: None,
        }),
        TraceEntry::Response(TraceResponse {
            index: 0,
            timestamp: at(2_000),
            text: None,
            transcript: Some("It is minus two in Oslo.".into()),
            audio_ms: Some(1500.5),
            duration_ms: Some(800),
            time_to_first_token_ms: Some(300),
            tool_calls: vec![TraceToolCall {
                name: "get_weather".into(),
                id: Some("c1".into()),
                arguments: json!({"city": "Oslo"}),
                result: Some(json!({"temp_c": -2})),
                timestamp: Some(at(1_500)),
                duration_ms: Some(40),
                cancelled: false,
            }],
            token_usage: Some(TokenUsage {
                prompt: Some(100),
                completion: Some(20),
                total: Some(130),
                thoughts: Some(10),
                cached: Some(64),
            }),
            finish_reason: None,
            interrupted: true,
            incomplete: false,
            chunks: vec![],
            error: None,
        }),
        TraceEntry::Request(TraceRequest {
            index: 1,
            timestamp: at(3_000),
            prompt: Some("Thanks".into()),
            model: Some("gemini-2.5-flash".into()),
            body: Some(json!({"contents": []})),
            ..TraceRequest::default()
        }),
        TraceEntry::Response(TraceResponse {
            index: 1,
            timestamp: at(3_100),
            text: Some("Bye!".into()),
            duration_ms: Some(100),
            time_to_first_token_ms: Some(100),
            finish_reason: Some("STOP".into()),
            chunks: vec!["By".into(), "e!".into()],
            ..TraceResponse::default()
        }),
    ];
    trace.performance.session_duration_ms = Some(3_500);
    trace.update_performance();
    trace
}

#[test]
fn a_full_trace_writes_every_addition_and_reads_back_equal() {
    let trace = full_trace();
    assert_eq!(
        serde_json::to_value(&trace).unwrap(),
        json!({
            "version": "1.0",
            "traceName": "voice",
            "capturedAt": "2026-01-07T10:30:00.000Z",
            "agentName": "gemini-live-2.5-flash",
            "model": "gemini-live-2.5-flash",
            "entries": [
                {
                    "type": "Request", "index": 0, "timestamp": "2026-01-07T10:30:01.200Z",
                    "transcript": "What's the weather in Oslo?",
                    "inputs": [
                        {"kind": "realtimeInput.audio", "frames": 12, "audioMs": 1200.0},
                        {"kind": "realtimeInput.audioStreamEnd"}
                    ],
                    "instruction": "Be brief."
                },
                {
                    "type": "Response", "index": 0, "timestamp": "2026-01-07T10:30:02.000Z",
                    "transcript": "It is minus two in Oslo.",
                    "audioMs": 1500.5,
                    "durationMs": 800,
                    "timeToFirstTokenMs": 300,
                    "toolCalls": [{
                        "name": "get_weather", "id": "c1", "arguments": {"city": "Oslo"},
                        "result": {"temp_c": -2}, "timestamp": "2026-01-07T10:30:01.500Z",
                        "durationMs": 40
                    }],
                    "tokenUsage": {"prompt": 100, "completion": 20, "total": 130, "thoughts": 10, "cached": 64},
                    "interrupted": true
                },
                {
                    "type": "Request", "index": 1, "timestamp": "2026-01-07T10:30:03.000Z",
                    "prompt": "Thanks", "model": "gemini-2.5-flash", "body": {"contents": []}
                },
                {
                    "type": "Response", "index": 1, "timestamp": "2026-01-07T10:30:03.100Z",
                    "text": "Bye!", "durationMs": 100, "timeToFirstTokenMs": 100,
                    "finishReason": "STOP", "chunks": ["By", "e!"]
                }
            ],
            "performance": {
                "totalDurationMs": 900,
                "totalPromptTokens": 100,
                "totalCompletionTokens": 20,
                "totalTokens": 130,
                "totalThoughtsTokens": 10,
                "totalCachedTokens": 64,
                "turnCount": 2,
                "toolCallCount": 1,
                "interruptionCount": 1,
                "meanTimeToFirstTokenMs": 200.0,
                "p50TimeToFirstTokenMs": 100,
                "maxTimeToFirstTokenMs": 300,
                "sessionDurationMs": 3500
            }
        })
    );
    let file = TempFile::new("full-trace");
    write_trace(file.path(), &trace).unwrap();
    assert!(file.text().ends_with("}\n"));
    assert_eq!(file.text(), trace.to_json_pretty());
    assert_eq!(read_trace(file.path()).unwrap(), trace);
    let turns = trace.turns();
    assert_eq!(
        trace.model_of(turns[0].request),
        Some("gemini-live-2.5-flash")
    );
    assert_eq!(trace.model_of(turns[1].request), Some("gemini-2.5-flash"));
}

/// Seed 001's example with `edit` applied to its JSON, parsed.
fn parse_edited(edit: impl FnOnce(&mut Value)) -> Result<AgentTrace, TraceError> {
    let mut value: Value = serde_json::from_str(SEED_TRACE).unwrap();
    edit(&mut value);
    parse_trace(&value.to_string(), "edited.trace.json")
}

#[test]
fn a_wrong_field_is_named_by_its_json_path_without_its_value() {
    let error =
        parse_edited(|t| t["entries"][1]["tokenUsage"]["prompt"] = json!("secret")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at entries[1].tokenUsage.prompt: invalid type: string \"…\", expected u64"
    );
    let error = parse_edited(|t| {
        t["entries"][1]["toolCalls"][0]
            .as_object_mut()
            .unwrap()
            .remove("name");
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at entries[1].toolCalls[0].name: missing field `name`"
    );
    let error = parse_edited(|t| t["entries"][0]["timestamp"] = json!("noon")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at entries[0].timestamp: not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS.sssZ)"
    );
    let error = parse_edited(|t| t["entries"][1]["type"] = json!("Reply")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at entries[1].type: unknown variant `Reply`, expected `Request` or `Response`"
    );
    let error = parse_edited(|t| {
        t.as_object_mut().unwrap().remove("agentName");
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at agentName: missing field `agentName`"
    );
}

#[test]
fn text_that_is_not_json_is_a_syntax_error_with_line_and_column() {
    let error = parse_trace("{\n  \"version\": \"1.0\",\n  oops\n}", "bad.trace.json").unwrap_err();
    assert!(
        matches!(
            error,
            TraceError::Syntax {
                line: 3,
                column: 3,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "`bad.trace.json` is not JSON: key must be a string at line 3, column 3"
    );
    let error = parse_trace(&format!("{SEED_TRACE} {{}}"), "two.trace.json").unwrap_err();
    assert!(
        matches!(&error, TraceError::Syntax { message, .. } if message == "trailing characters"),
        "{error:?}"
    );
    let error = parse_trace(&SEED_TRACE[..100], "cut.trace.json").unwrap_err();
    assert!(matches!(error, TraceError::Syntax { .. }), "{error:?}");
}

#[test]
fn another_major_version_is_refused() {
    let error = parse_edited(|t| t["version"] = json!("2.0")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at version: trace format version 2.0 is not supported (this reader reads 1.x)"
    );
    assert!(parse_edited(|t| t["version"] = json!("1.3")).is_ok());
}

#[test]
fn entries_that_do_not_pair_up_are_refused_at_their_index() {
    let problem = |edit: fn(&mut Value)| match parse_edited(edit).unwrap_err() {
        TraceError::Inconsistent { at, problem, .. } => (at, problem),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        problem(|t| t["entries"][0]["index"] = json!(1)),
        (
            "entries[0].index".to_owned(),
            TraceProblem::RequestOutOfOrder {
                expected: 0,
                found: 1
            }
        )
    );
    assert_eq!(
        problem(|t| t["entries"][1]["index"] = json!(4)),
        (
            "entries[1].index".to_owned(),
            TraceProblem::ResponseWithoutRequest { index: 4 }
        )
    );
    assert_eq!(
        problem(|t| {
            let response = t["entries"][1].clone();
            t["entries"].as_array_mut().unwrap().push(response);
        }),
        (
            "entries[2].index".to_owned(),
            TraceProblem::SecondResponse { index: 0 }
        )
    );
    let error = parse_edited(|t| {
        t["entries"].as_array_mut().unwrap().swap(0, 1);
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`edited.trace.json` at entries[0].index: response 0 answers no earlier request"
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let error = read_trace("/nonexistent/reel/x.trace.json").unwrap_err();
    assert!(matches!(error, TraceError::Io { .. }));
    assert!(
        error
            .to_string()
            .starts_with("cannot access `/nonexistent/reel/x.trace.json`: "),
        "{error}"
    );
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&trace_schema()).unwrap()
}

#[test]
fn the_schema_names_seed_001s_required_fields() {
    let schema = trace_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["title"], "AgentTrace");
    assert_eq!(
        schema["required"],
        json!([
            "version",
            "traceName",
            "capturedAt",
            "agentName",
            "entries",
            "performance"
        ])
    );
    assert_eq!(
        schema["$defs"]["TracePerformance"]["required"],
        json!([
            "totalDurationMs",
            "totalPromptTokens",
            "totalCompletionTokens"
        ])
    );
}

#[test]
fn real_traces_validate_against_the_schema_and_broken_ones_do_not() {
    let validator = validator();
    let seed: Value = serde_json::from_str(SEED_TRACE).unwrap();
    assert!(validator.is_valid(&seed));
    assert!(validator.is_valid(&serde_json::to_value(full_trace()).unwrap()));
    let golden = golden_trace();
    let errors: Vec<String> = validator
        .iter_errors(&golden)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    // The golden also reads back through the checking reader.
    let trace = parse_trace(&golden.to_string(), "weather.trace.json").unwrap();
    assert_eq!(trace.trace_name, "weather");

    let mut broken = seed.clone();
    broken["entries"][1]["type"] = json!("Reply");
    assert!(!validator.is_valid(&broken));
    let mut broken = seed.clone();
    broken["entries"][0]["index"] = json!(-1);
    assert!(!validator.is_valid(&broken));
    let mut broken = seed;
    broken.as_object_mut().unwrap().remove("performance");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn a_request_may_name_the_text_agent_that_made_it() {
    let text = r#"{"version":"1.0","traceName":"haiku","capturedAt":"2026-01-07T10:30:00Z",
"agentName":"haiku","entries":[
{"type":"Request","index":0,"timestamp":"2026-01-07T10:30:00.000Z","prompt":"autumn","agent":"writer"}],
"performance":{"totalDurationMs":0,"totalPromptTokens":0,"totalCompletionTokens":0}}"#;
    let trace = parse_trace(text, "haiku.trace.json").unwrap();
    let TraceEntry::Request(request) = &trace.entries[0] else {
        panic!("not a request: {:?}", trace.entries[0]);
    };
    assert_eq!(request.agent.as_deref(), Some("writer"));
    let value: Value = serde_json::from_str(text).unwrap();
    assert!(validator().is_valid(&value));
    let wrong = json!({"version":"1.0","traceName":"t","capturedAt":"2026-01-07T10:30:00Z",
        "agentName":"a","entries":[{"type":"Request","index":0,
        "timestamp":"2026-01-07T10:30:00.000Z","agent":7}],
        "performance":{"totalDurationMs":0,"totalPromptTokens":0,"totalCompletionTokens":0}});
    assert!(!validator().is_valid(&wrong));
    // Written only when set: a request without an agent reads and writes as before.
    let plain = serde_json::to_value(TraceRequest::default()).unwrap();
    assert!(plain.get("agent").is_none());
}
