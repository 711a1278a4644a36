//! Exporting a wire log: a voice session with tools, an interruption, a late tool answer,
//! a cancelled call and a recording cut mid-turn becomes the exact trace, turn by turn;
//! its OTLP spans nest and carry the GenAI attributes, and every export of one recording
//! is byte-identical.

use reel_protocol::Base64Data;
use reel_recorder::trace::parse_trace;
use reel_recorder::wire_log::{CloseMark, Direction, Source, WireEntry};
use reel_replayer::export::{
    ExportError, ExportOptions, Exported, IdSeed, OtlpOptions, export_trace, to_otlp,
};
use serde_json::{Value, json};

/// 2024-06-10T06:13:20Z.
const T: u64 = 1_718_000_000_000;

fn frame(seq: u64, dir: Direction, ms: u64, json: Value) -> WireEntry {
    WireEntry::frame(seq, dir, T + ms, json.to_string().into_bytes(), None, false)
}

fn app(seq: u64, ms: u64, json: Value) -> WireEntry {
    WireEntry {
        source: Some(Source::App),
        ..frame(seq, Direction::Out, ms, json)
    }
}

fn server(seq: u64, ms: u64, json: Value) -> WireEntry {
    frame(seq, Direction::In, ms, json)
}

fn audio(bytes: usize, rate: u32) -> Value {
    json!({"mimeType": format!("audio/pcm;rate={rate}"), "data": Base64Data(vec![0u8; bytes].into()).encode()})
}

fn content(json: Value) -> Value {
    json!({ "serverContent": json })
}

/// A voice session of three turns:
/// 1. the user speaks (two audio frames, then the stream ends) and is transcribed; the model
///    calls `get_weather`, starts answering in audio and is interrupted;
/// 2. the user types; the model calls `book` (answered only in the next turn) and replies;
/// 3. the late answer; a new instruction; typed realtime text; a call the server cancels;
///    the recording ends mid-answer.
fn voice_session() -> Vec<WireEntry> {
    let setup = json!({"setup": {"model": "models/gemini-live-2.5-flash"}});
    vec![
        frame(1, Direction::Out, 0, setup),
        server(2, 40, json!({"setupComplete": {}})),
        app(
            3,
            100,
            json!({"realtimeInput": {"audio": audio(3200, 16_000)}}),
        ),
        app(
            4,
            200,
            json!({"realtimeInput": {"audio": audio(3200, 16_000)}}),
        ),
        server(
            5,
            250,
            content(json!({"inputTranscription": {"text": "What's the weather"}})),
        ),
        server(
            6,
            260,
            content(json!({"inputTranscription": {"text": " in Oslo?"}})),
        ),
        app(7, 300, json!({"realtimeInput": {"audioStreamEnd": true}})),
        server(
            8,
            500,
            json!({"toolCall": {"functionCalls": [{"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}]}}),
        ),
        frame(
            9,
            Direction::Out,
            540,
            json!({"toolResponse": {"functionResponses": [{"id": "c1", "name": "get_weather", "response": {"temp_c": -2}}]}}),
        ),
        server(
            10,
            700,
            content(json!({"modelTurn": {"parts": [{"inlineData": audio(4800, 24_000)}]}})),
        ),
        server(
            11,
            720,
            content(json!({"outputTranscription": {"text": "It is minus two."}})),
        ),
        server(12, 750, content(json!({"interrupted": true}))),
        server(
            13,
            760,
            json!({
                "serverContent": {"turnComplete": true},
                "usageMetadata": {"promptTokenCount": 100, "responseTokenCount": 20, "totalTokenCount": 130, "thoughtsTokenCount": 10, "cachedContentTokenCount": 64}
            }),
        ),
        app(
            14,
            1000,
            json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Book a table"}]}], "turnComplete": true}}),
        ),
        server(
            15,
            1100,
            json!({"toolCall": {"functionCalls": [{"id": "c2", "name": "book", "args": {}}]}}),
        ),
        server(
            16,
            1200,
            content(json!({"modelTurn": {"parts": [{"text": "Booking now."}]}})),
        ),
        server(17, 1210, content(json!({"turnComplete": true}))),
        frame(
            18,
            Direction::Out,
            1500,
            json!({"toolResponse": {"functionResponses": [{"id": "c2", "name": "book", "response": {"ok": true}}]}}),
        ),
        frame(
            19,
            Direction::Out,
            1600,
            json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Be brief."}]}}}),
        ),
        app(20, 1700, json!({"realtimeInput": {"text": "Thanks"}})),
        server(
            21,
            1800,
            json!({"toolCall": {"functionCalls": [{"id": "c3", "name": "get_weather", "args": {"city": "Rome"}}]}}),
        ),
        server(22, 1850, json!({"toolCallCancellation": {"ids": ["c3"]}})),
        server(
            23,
            1900,
            content(json!({"modelTurn": {"parts": [{"text": "Bye"}]}})),
        ),
        WireEntry::close_mark(
            24,
            T + 2000,
            None,
            CloseMark {
                code: Some(1000),
                reason: None,
                client: true,
            },
        ),
    ]
}

fn export(entries: &[WireEntry]) -> Exported {
    export_trace(entries, ExportOptions::named("voice")).unwrap()
}

#[test]
fn a_voice_session_exports_turn_by_turn() {
    let trace = export(&voice_session()).trace;
    assert_eq!(
        serde_json::to_value(&trace).unwrap(),
        json!({
            "version": "1.0",
            "traceName": "voice",
            "capturedAt": "2024-06-10T06:13:20.000Z",
            "agentName": "gemini-live-2.5-flash",
            "model": "gemini-live-2.5-flash",
            "entries": [
                {
                    "type": "Request", "index": 0, "timestamp": "2024-06-10T06:13:20.300Z",
                    "transcript": "What's the weather in Oslo?",
                    "inputs": [
                        {"kind": "realtimeInput.audio", "frames": 2, "audioMs": 200.0},
                        {"kind": "realtimeInput.audioStreamEnd"}
                    ]
                },
                {
                    "type": "Response", "index": 0, "timestamp": "2024-06-10T06:13:20.760Z",
                    "transcript": "It is minus two.",
                    "audioMs": 100.0,
                    "durationMs": 460,
                    "timeToFirstTokenMs": 200,
                    "toolCalls": [{
                        "name": "get_weather", "id": "c1", "arguments": {"city": "Oslo"},
                        "result": {"temp_c": -2}, "timestamp": "2024-06-10T06:13:20.500Z",
                        "durationMs": 40
                    }],
                    "tokenUsage": {"prompt": 100, "completion": 20, "total": 130, "thoughts": 10, "cached": 64},
                    "interrupted": true
                },
                {
                    "type": "Request", "index": 1, "timestamp": "2024-06-10T06:13:21.000Z",
                    "prompt": "Book a table",
                    "inputs": [{"kind": "clientContent", "text": "Book a table"}]
                },
                {
                    "type": "Response", "index": 1, "timestamp": "2024-06-10T06:13:21.210Z",
                    "text": "Booking now.",
                    "durationMs": 210,
                    "timeToFirstTokenMs": 100,
                    "toolCalls": [{
                        "name": "book", "id": "c2", "arguments": {}, "result": {"ok": true},
                        "timestamp": "2024-06-10T06:13:21.100Z", "durationMs": 400
                    }],
                    "finishReason": "STOP"
                },
                {
                    "type": "Request", "index": 2, "timestamp": "2024-06-10T06:13:21.700Z",
                    "prompt": "Thanks",
                    "inputs": [{"kind": "realtimeInput.text", "text": "Thanks"}],
                    "instruction": "Be brief."
                },
                {
                    "type": "Response", "index": 2, "timestamp": "2024-06-10T06:13:21.900Z",
                    "text": "Bye",
                    "durationMs": 200,
                    "timeToFirstTokenMs": 100,
                    "toolCalls": [{
                        "name": "get_weather", "id": "c3", "arguments": {"city": "Rome"},
                        "timestamp": "2024-06-10T06:13:21.800Z", "cancelled": true
                    }],
                    "incomplete": true
                }
            ],
            "performance": {
                "totalDurationMs": 870,
                "totalPromptTokens": 100,
                "totalCompletionTokens": 20,
                "totalTokens": 130,
                "totalThoughtsTokens": 10,
                "totalCachedTokens": 64,
                "turnCount": 3,
                "toolCallCount": 3,
                "interruptionCount": 1,
                "meanTimeToFirstTokenMs": 133.33333333333334,
                "p50TimeToFirstTokenMs": 100,
                "maxTimeToFirstTokenMs": 200,
                "sessionDurationMs": 2000
            }
        })
    );
    // What the exporter writes, the checking reader reads.
    let reread = parse_trace(&trace.to_json_pretty(), "voice.trace.json").unwrap();
    assert_eq!(reread, trace);
}

#[test]
fn the_agent_can_be_named_and_a_session_without_turns_has_none() {
    let entries = &voice_session()[..2];
    let options = ExportOptions {
        trace_name: "handshake".into(),
        agent_name: Some("WeatherAgent".into()),
    };
    let trace = export_trace(entries, options).unwrap().trace;
    assert_eq!(trace.agent_name, "WeatherAgent");
    assert_eq!(trace.model.as_deref(), Some("gemini-live-2.5-flash"));
    assert!(trace.entries.is_empty());
    assert_eq!(trace.performance.turn_count, Some(0));
    assert_eq!(trace.performance.session_duration_ms, Some(40));
}

#[test]
fn a_log_that_does_not_start_with_a_setup_is_refused() {
    let session = voice_session();
    let error = export_trace(&session[1..], ExportOptions::named("x")).unwrap_err();
    assert_eq!(
        error,
        ExportError::NoSetup {
            first_outbound_seq: Some(3)
        }
    );
    assert_eq!(
        error.to_string(),
        "no setup frame: the first frame the client sent (seq 3) is not a setup"
    );
    let error = export_trace(&session[1..2], ExportOptions::named("x")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no setup frame: the client sent no frame"
    );
}

fn attributes(span: &Value) -> Value {
    let mut map = serde_json::Map::new();
    for kv in span["attributes"].as_array().unwrap() {
        map.insert(kv["key"].as_str().unwrap().to_owned(), kv["value"].clone());
    }
    Value::Object(map)
}

#[test]
fn otlp_spans_nest_session_turns_and_tools_with_genai_attributes() {
    let exported = export(&voice_session());
    let otlp = serde_json::to_value(to_otlp(
        &exported.trace,
        &exported.ids,
        OtlpOptions::default(),
    ))
    .unwrap();
    let resource = &otlp["resourceSpans"][0];
    assert_eq!(
        resource["resource"],
        json!({"attributes": [{"key": "service.name", "value": {"stringValue": "reel"}}]})
    );
    let scope = &resource["scopeSpans"][0];
    assert_eq!(scope["scope"]["name"], "reel");
    let spans = scope["spans"].as_array().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent gemini-live-2.5-flash",
            "chat gemini-live-2.5-flash",
            "execute_tool get_weather",
            "chat gemini-live-2.5-flash",
            "execute_tool book",
            "chat gemini-live-2.5-flash",
            "execute_tool get_weather",
        ]
    );
    let ids = exported.ids;
    let trace_id = ids.trace_id();
    assert_eq!(trace_id.len(), 32);
    assert!(
        trace_id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let session = ids.span_id("session", &[]);
    let turn = |i| ids.span_id("turn", &[i]);
    let parents: Vec<Option<String>> = spans
        .iter()
        .map(|s| {
            s.get("parentSpanId")
                .map(|p| p.as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(
        parents,
        [
            None,
            Some(session.clone()),
            Some(turn(0)),
            Some(session.clone()),
            Some(turn(1)),
            Some(session),
            Some(turn(2))
        ]
    );
    assert!(spans.iter().all(|s| s["traceId"] == trace_id.as_str()));
    let mut span_ids: Vec<&str> = spans
        .iter()
        .map(|s| s["spanId"].as_str().unwrap())
        .collect();
    span_ids.sort_unstable();
    span_ids.dedup();
    assert_eq!(span_ids.len(), 7, "span ids are distinct");

    // The session span: the whole recording, with its totals.
    assert_eq!(spans[0]["kind"], 1);
    assert_eq!(
        (
            spans[0]["startTimeUnixNano"].as_str(),
            spans[0]["endTimeUnixNano"].as_str()
        ),
        (Some("1718000000000000000"), Some("1718000002000000000"))
    );
    assert_eq!(
        attributes(&spans[0]),
        json!({
            "gen_ai.operation.name": {"stringValue": "invoke_agent"},
            "gen_ai.provider.name": {"stringValue": "gcp.gemini"},
            "gen_ai.agent.name": {"stringValue": "gemini-live-2.5-flash"},
            "gen_ai.request.model": {"stringValue": "gemini-live-2.5-flash"},
            "gen_ai.usage.input_tokens": {"intValue": "100"},
            "gen_ai.usage.output_tokens": {"intValue": "20"},
            "reel.trace.name": {"stringValue": "voice"},
            "reel.turn.count": {"intValue": "3"},
            "reel.tool_call.count": {"intValue": "3"},
            "reel.interruption.count": {"intValue": "1"},
            "reel.time_to_first_token.mean_ms": {"doubleValue": 133.33333333333334}
        })
    );
    assert_eq!(spans[0]["status"], json!({}));

    // An interrupted turn: a client span from the request to turnComplete, no finish reason.
    assert_eq!(spans[1]["kind"], 3);
    assert_eq!(
        (
            spans[1]["startTimeUnixNano"].as_str(),
            spans[1]["endTimeUnixNano"].as_str()
        ),
        (Some("1718000000300000000"), Some("1718000000760000000"))
    );
    assert_eq!(
        attributes(&spans[1]),
        json!({
            "gen_ai.operation.name": {"stringValue": "chat"},
            "gen_ai.provider.name": {"stringValue": "gcp.gemini"},
            "gen_ai.request.model": {"stringValue": "gemini-live-2.5-flash"},
            "reel.turn.index": {"intValue": "0"},
            "gen_ai.usage.input_tokens": {"intValue": "100"},
            "gen_ai.usage.output_tokens": {"intValue": "20"},
            "reel.usage.total_tokens": {"intValue": "130"},
            "reel.usage.thoughts_tokens": {"intValue": "10"},
            "reel.usage.cached_tokens": {"intValue": "64"},
            "reel.time_to_first_token_ms": {"intValue": "200"},
            "reel.turn.interrupted": {"boolValue": true}
        })
    );
    // A tool call: from the call to its result, no content by default.
    assert_eq!(
        (
            spans[2]["startTimeUnixNano"].as_str(),
            spans[2]["endTimeUnixNano"].as_str()
        ),
        (Some("1718000000500000000"), Some("1718000000540000000"))
    );
    assert_eq!(
        attributes(&spans[2]),
        json!({
            "gen_ai.operation.name": {"stringValue": "execute_tool"},
            "gen_ai.tool.name": {"stringValue": "get_weather"},
            "gen_ai.tool.call.id": {"stringValue": "c1"},
            "gen_ai.tool.type": {"stringValue": "function"}
        })
    );
    assert_eq!(
        attributes(&spans[3])["gen_ai.response.finish_reasons"],
        json!({"arrayValue": {"values": [{"stringValue": "stop"}]}})
    );
    // The cancelled call, and the turn the recording cut short.
    assert_eq!(
        spans[6]["status"],
        json!({"code": 2, "message": "the server cancelled the call"})
    );
    assert_eq!(
        attributes(&spans[5])["reel.turn.incomplete"],
        json!({"boolValue": true})
    );
}

#[test]
fn content_is_exported_only_when_asked() {
    let exported = export(&voice_session());
    let otlp = to_otlp(
        &exported.trace,
        &exported.ids,
        OtlpOptions { content: true },
    );
    let otlp = serde_json::to_value(otlp).unwrap();
    let tool = attributes(&otlp["resourceSpans"][0]["scopeSpans"][0]["spans"][2]);
    assert_eq!(
        tool["gen_ai.tool.call.arguments"],
        json!({"stringValue": "{\"city\":\"Oslo\"}"})
    );
    assert_eq!(
        tool["gen_ai.tool.call.result"],
        json!({"stringValue": "{\"temp_c\":-2}"})
    );
}

#[test]
fn exports_are_deterministic_and_ids_follow_the_recording() {
    let session = voice_session();
    let render = |entries: &[WireEntry]| {
        let exported = export(entries);
        let otlp = to_otlp(&exported.trace, &exported.ids, OtlpOptions::default());
        (
            exported.trace.to_json_pretty(),
            serde_json::to_string_pretty(&otlp).unwrap(),
        )
    };
    assert_eq!(render(&session), render(&session));
    // Another recording (its setup a millisecond later) gets other ids.
    let mut other = session.clone();
    other[0].ts_ms += 1;
    assert_ne!(
        IdSeed::of_setup(&other[0]).trace_id(),
        IdSeed::of_setup(&session[0]).trace_id()
    );
    assert_ne!(render(&other).1, render(&session).1);
}

#[test]
fn an_answer_that_streamed_in_pieces_keeps_them_as_chunks() {
    let setup = json!({"setup": {"model": "models/gemini-live-2.5-flash"}});
    let text = |t: &str| content(json!({"modelTurn": {"parts": [{"text": t}]}}));
    let said = |t: &str| content(json!({"outputTranscription": {"text": t}}));
    let ask = |t: &str| json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": t}]}], "turnComplete": true}});
    let trace = export(&[
        frame(1, Direction::Out, 0, setup),
        server(2, 40, json!({"setupComplete": {}})),
        app(3, 100, ask("Hi")),
        server(4, 200, text("Hello")),
        server(5, 210, text(", how")),
        server(6, 220, text(" can I help?")),
        server(7, 230, content(json!({"turnComplete": true}))),
        app(8, 300, ask("Say it")),
        server(9, 400, said("Sure,")),
        server(10, 410, said(" here it is.")),
        server(11, 420, content(json!({"turnComplete": true}))),
        app(12, 500, ask("Once")),
        server(13, 600, text("One piece.")),
        server(14, 610, content(json!({"turnComplete": true}))),
    ])
    .trace;
    let chunks: Vec<Vec<String>> = trace
        .turns()
        .iter()
        .map(|turn| turn.response.unwrap().chunks.clone())
        .collect();
    assert_eq!(
        chunks,
        [
            vec![
                "Hello".to_owned(),
                ", how".to_owned(),
                " can I help?".to_owned()
            ],
            vec!["Sure,".to_owned(), " here it is.".to_owned()],
            vec![],
        ]
    );
}
