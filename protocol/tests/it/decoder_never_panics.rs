//! The decoders never panic. Arbitrary bytes, arbitrary JSON under the protocol's own keys
//! and damaged valid frames all give `Ok` or the [`DecodeError`] that fits the input, and
//! every `Ok` message goes through the event decoder and survives
//! decode → encode → decode unchanged.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use reel_protocol::json::snake_case;
use reel_protocol::{
    ClientMessage, DecodeError, DecodeLimits, EventDecoder, PartKind, PartialServerMessage,
    ServerMessage, SessionEvent, decode_client, decode_client_with, decode_server,
    decode_server_partial, decode_server_with, encode,
};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/// A fixed number of cases, and no regression files written next to the sources.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Checking one frame
// ---------------------------------------------------------------------------------------------

/// Which decoder a frame went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Server,
    Client,
}

impl Side {
    /// The known message keys of this side, lowerCamelCase.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Side::Server => ServerMessage::FIELDS,
            Side::Client => ClientMessage::FIELDS,
        }
    }
}

/// `fooBar` → `foo_bar`: the snake_case spelling every multi-word wire name also accepts.
fn snake(name: &str) -> String {
    snake_case(name).into_owned()
}

/// The lowerCamelCase message key `key` spells on `side`, if it spells one.
fn known_key(side: Side, key: &str) -> Option<&'static str> {
    side.fields()
        .iter()
        .copied()
        .find(|field| *field == key || snake(field) == key)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks that `error` is the error `frame` deserves: exactly one variant fits each input.
fn check_error(side: Side, frame: &[u8], error: &DecodeError) -> Result<(), TestCaseError> {
    // The Display impl of every variant works.
    let _ = error.to_string();
    let blank = frame.iter().all(u8::is_ascii_whitespace);
    prop_assert_eq!(
        matches!(error, DecodeError::Empty),
        blank,
        "Empty is for blank frames only; got {:?}",
        error
    );
    if blank {
        return Ok(());
    }
    let text = match std::str::from_utf8(frame) {
        Err(utf8) => {
            prop_assert_eq!(
                error,
                &DecodeError::InvalidUtf8 {
                    offset: utf8.valid_up_to()
                }
            );
            return Ok(());
        }
        Ok(text) => text,
    };
    let value = serde_json::from_str::<Value>(text);
    match error {
        DecodeError::Empty => {}
        DecodeError::TooLarge { .. } => {
            prop_assert!(false, "TooLarge under the default 16 MiB limit");
        }
        DecodeError::InvalidUtf8 { .. } => {
            prop_assert!(false, "InvalidUtf8 for a UTF-8 frame");
        }
        DecodeError::InvalidJson { line, column, .. } => {
            prop_assert!(
                *line >= 1 && *column <= text.len() + 1,
                "{}:{}",
                line,
                column
            );
            prop_assert!(
                value.is_err(),
                "InvalidJson for well-formed JSON: {:?}",
                error
            );
        }
        DecodeError::NotAnObject { found } => match &value {
            Ok(value) => {
                prop_assert!(!value.is_object());
                prop_assert_eq!(*found, json_kind(value));
            }
            Err(json) => prop_assert!(false, "NotAnObject for malformed JSON ({})", json),
        },
        DecodeError::NoKnownKey { found, expected } => {
            prop_assert_eq!(*expected, side.fields());
            let Ok(Value::Object(map)) = &value else {
                prop_assert!(false, "NoKnownKey for a frame that is not a JSON object");
                return Ok(());
            };
            // Known keys may be there, but only as null (which reads as absent).
            for (key, value) in map {
                if known_key(side, key).is_some() {
                    prop_assert_eq!(value, &Value::Null, "known key {} is set", key);
                }
            }
            let unknown: Vec<&String> = map
                .keys()
                .filter(|key| known_key(side, key).is_none())
                .collect();
            prop_assert_eq!(found.iter().collect::<Vec<_>>(), unknown);
        }
        DecodeError::SeveralMessages { found } => {
            prop_assert_eq!(side, Side::Client, "only client frames carry one message");
            let Ok(Value::Object(map)) = &value else {
                prop_assert!(
                    false,
                    "SeveralMessages for a frame that is not a JSON object"
                );
                return Ok(());
            };
            let present: Vec<&str> = ClientMessage::FIELDS
                .iter()
                .copied()
                .filter(|field| {
                    map.iter().any(|(key, value)| {
                        known_key(side, key) == Some(*field) && !value.is_null()
                    })
                })
                .collect();
            prop_assert!(present.len() >= 2);
            prop_assert_eq!(found, &present);
        }
        DecodeError::InvalidField { .. } => match &value {
            Ok(value) => prop_assert!(
                value.is_object(),
                "InvalidField for a JSON {}",
                json_kind(value)
            ),
            Err(json) => prop_assert!(
                false,
                "InvalidField for malformed JSON ({}): {:?}",
                json,
                error
            ),
        },
    }
    Ok(())
}

/// Event counts that follow from a message alone, by the documented frame → event mapping.
fn check_events(message: &ServerMessage, events: &[SessionEvent]) -> Result<(), TestCaseError> {
    let count = |kind: &str| events.iter().filter(|e| e.kind() == kind).count();
    let content = message.server_content.as_ref();
    prop_assert_eq!(
        count("connected"),
        usize::from(message.setup_complete.is_some())
    );
    prop_assert_eq!(count("tool_call"), usize::from(message.tool_call.is_some()));
    prop_assert_eq!(
        count("tool_call_cancelled"),
        usize::from(message.tool_call_cancellation.is_some())
    );
    prop_assert_eq!(count("go_away"), usize::from(message.go_away.is_some()));
    prop_assert_eq!(
        count("resume_update"),
        usize::from(message.session_resumption_update.is_some())
    );
    prop_assert_eq!(
        count("usage"),
        usize::from(message.usage_metadata.is_some())
    );
    prop_assert_eq!(
        count("turn_complete"),
        usize::from(content.and_then(|c| c.turn_complete) == Some(true))
    );
    prop_assert_eq!(
        count("interrupted"),
        usize::from(content.and_then(|c| c.interrupted) == Some(true))
    );
    let parts = content
        .and_then(|c| c.model_turn.as_ref())
        .map(|turn| turn.parts())
        .unwrap_or_default();
    let texts = parts
        .iter()
        .filter(|p| matches!(p.kind(), PartKind::Text(_)))
        .count();
    prop_assert_eq!(count("text"), texts);
    let unrecognized_parts = parts
        .iter()
        .filter(|p| {
            matches!(
                p.kind(),
                PartKind::Unknown(_) | PartKind::FunctionCall(_) | PartKind::FunctionResponse(_)
            )
        })
        .count();
    prop_assert_eq!(
        count("unrecognized"),
        message.extra.len() + content.map_or(0, |c| c.extra.len()) + unrecognized_parts
    );
    Ok(())
}

/// Decodes `frame` as a server frame and checks the result; returns the message if any.
fn check_server(frame: &[u8]) -> Result<Option<ServerMessage>, TestCaseError> {
    match decode_server(frame) {
        Ok(message) => {
            prop_assert!(std::str::from_utf8(frame).is_ok());
            let encoded = encode(&message);
            let again = decode_server(&encoded);
            prop_assert_eq!(
                again.as_ref(),
                Ok(&message),
                "lossy round trip of {} (encoded as {})",
                show(frame),
                show(&encoded)
            );
            prop_assert_eq!(encode(&message), encoded, "encoding is not deterministic");
            Ok(Some(message))
        }
        Err(error) => {
            check_error(Side::Server, frame, &error)?;
            Ok(None)
        }
    }
}

/// Decodes `frame` as a client frame and checks the result; returns the message if any.
fn check_client(frame: &[u8]) -> Result<Option<ClientMessage>, TestCaseError> {
    match decode_client(frame) {
        Ok(message) => {
            prop_assert!(std::str::from_utf8(frame).is_ok());
            prop_assert!(
                message.kind().is_some(),
                "Ok client frame without one message"
            );
            let encoded = encode(&message);
            let again = decode_client(&encoded);
            prop_assert_eq!(
                again.as_ref(),
                Ok(&message),
                "lossy round trip of {} (encoded as {})",
                show(frame),
                show(&encoded)
            );
            prop_assert_eq!(encode(&message), encoded, "encoding is not deterministic");
            Ok(Some(message))
        }
        Err(error) => {
            check_error(Side::Client, frame, &error)?;
            Ok(None)
        }
    }
}

/// Decodes `frame` partially and checks the result against the strict decoder's: the same
/// message for a good frame, the same error for anything but a bad field, and for a bad
/// field a message that still round-trips, with one error event per field error.
fn check_partial(frame: &[u8], decoder: &mut EventDecoder) -> Result<(), TestCaseError> {
    let partial = decode_server_partial(frame);
    match (decode_server(frame), partial) {
        (Ok(message), partial) => prop_assert_eq!(
            partial,
            Ok(PartialServerMessage {
                message,
                field_errors: vec![]
            })
        ),
        (Err(DecodeError::InvalidField { .. }), Ok(partial)) => {
            prop_assert!(!partial.field_errors.is_empty(), "{}", show(frame));
            for error in &partial.field_errors {
                let _ = error.to_string();
            }
            // What was kept round-trips (or, when no known message was kept, is refused as
            // a frame without one).
            let encoded = encode(&partial.message);
            match decode_server(&encoded) {
                Ok(again) => prop_assert_eq!(
                    &again,
                    &partial.message,
                    "the kept fields of {} do not round-trip",
                    show(frame)
                ),
                Err(DecodeError::NoKnownKey { .. }) => {
                    let known = serde_json::to_value(&partial.message)
                        .ok()
                        .and_then(|v| v.as_object().cloned())
                        .is_some_and(|map| {
                            map.keys().any(|k| known_key(Side::Server, k).is_some())
                        });
                    prop_assert!(!known, "{}", show(frame));
                }
                Err(error) => prop_assert!(false, "{:?} re-reading {}", error, show(frame)),
            }
            let errors = partial.field_errors.len();
            let mut events = Vec::new();
            decoder.decode_partial(1, partial, &mut events);
            let reported = events.iter().filter(|e| e.kind() == "error").count();
            prop_assert_eq!(reported, errors);
        }
        (Err(DecodeError::InvalidField { .. }), Err(error)) => prop_assert!(
            matches!(error, DecodeError::InvalidField { .. }),
            "{:?} for {}",
            error,
            show(frame)
        ),
        (Err(strict), partial) => prop_assert_eq!(partial, Err(strict)),
    }
    Ok(())
}

/// Runs frames through both decoders; the server messages that decode go, in order, through
/// one event decoder (so that state carried across frames is exercised too).
fn check_frames<'a>(frames: impl IntoIterator<Item = &'a [u8]>) -> Result<(), TestCaseError> {
    let mut decoder = EventDecoder::new();
    let mut partial_decoder = EventDecoder::new();
    for frame in frames {
        check_client(frame)?;
        check_partial(frame, &mut partial_decoder)?;
        if let Some(message) = check_server(frame)? {
            let mut events = Vec::new();
            decoder.decode(message.clone(), &mut events);
            check_events(&message, &events)?;
            // Decoding the frame on its own must not panic either.
            let _ = reel_protocol::events_from_frame(message);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// JSON text strategies
// ---------------------------------------------------------------------------------------------

/// Valid JSON numbers that stress the number parser: signed zeros, the edges of i64 and u64,
/// out-of-range and subnormal floats, long mantissas.
const NUMBER_EDGE_CASES: &[&str] = &[
    "0",
    "-0",
    "-0.0",
    "0e0",
    "1E+2",
    "1e-2",
    "1e400",
    "-1e400",
    "1e-400",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "0.1",
    "2.2250738585072014e-308",
    "2.2250738585072011e-308",
    "4.9e-324",
    "2.4703282292062327e-324",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "8.98846567431158e307",
    "1.00000000000000011102230246251565404236316680908203125",
    "9007199254740993",
    "2147483647",
    "2147483648",
    "-2147483649",
];

/// A finite float in one of the forms Rust and serde_json write.
fn float_text() -> impl Strategy<Value = String> {
    (
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        0..3u8,
    )
        .prop_map(|(f, form)| match form {
            0 => format!("{f:?}"),
            1 => format!("{f:e}"),
            _ => Value::from(f).to_string(),
        })
}

/// One character of a JSON string, written raw, with a short escape, or as `\uXXXX`
/// (a surrogate pair above U+FFFF); rarely a lone surrogate, which JSON text can hold but a
/// Rust string cannot.
fn string_piece() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        4 => any::<char>(),
        4 => proptest::char::range(' ', '~'),
        1 => proptest::char::range('\0', '\x1f'),
        2 => prop::sample::select(vec![
            '"', '\\', '/', '\u{7f}', 'é', '€', '😀', '\u{2028}', '\u{feff}', '\u{10ffff}',
        ]),
    ];
    prop_oneof![
        60 => (chars, 0..4u8).prop_map(|(c, style)| write_char(c, style)),
        1 => prop::sample::select(vec!["\\ud800", "\\udfff", "\\ud83d", "\\uDC00x"])
            .prop_map(str::to_owned),
    ]
}

fn write_char(c: char, style: u8) -> String {
    let raw_ok = c >= ' ' && c != '"' && c != '\\';
    let short = match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        _ => None,
    };
    match (style, short) {
        (0, _) if raw_ok => c.to_string(),
        (1, Some(short)) => short.to_owned(),
        _ => {
            let mut units = [0u16; 2];
            c.encode_utf16(&mut units)
                .iter()
                .map(|unit| {
                    if style == 3 {
                        format!("\\u{unit:04X}")
                    } else {
                        format!("\\u{unit:04x}")
                    }
                })
                .collect()
        }
    }
}

/// A JSON string literal, quotes included.
fn json_string() -> BoxedStrategy<String> {
    prop::collection::vec(string_piece(), 0..12)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
        .boxed()
}

/// A key of an arbitrary object: often a field name the protocol knows, else anything.
fn json_key() -> BoxedStrategy<String> {
    prop_oneof![
        prop::sample::select(ALL_NAMES).prop_map(|name| format!("\"{name}\"")),
        json_string(),
    ]
    .boxed()
}

/// Any JSON value, as text: scalars of every kind, nested arrays and objects.
fn json_value() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        float_text(),
        prop::sample::select(NUMBER_EDGE_CASES).prop_map(str::to_owned),
        json_string(),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((json_key(), inner), 0..4).prop_map(|entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(k, v)| format!("{k}:{v}"))
                    .collect();
                format!("{{{}}}", entries.join(","))
            }),
        ]
    })
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Protocol-shaped strategies: known field names with (mostly) the right kind of value
// ---------------------------------------------------------------------------------------------

/// What a field holds on the wire.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Any,
    Bool,
    Str,
    Int,
    Int32,
    /// A protobuf int64: a decimal string or a number.
    Int64,
    Float,
    Base64,
    Duration,
    StrList,
    Enum(&'static [&'static str]),
    EnumList(&'static [&'static str]),
    Object(&'static [&'static str]),
    ObjectList(&'static [&'static str]),
}

const SERVER_KEYS: &[&str] = &[
    "setupComplete",
    "serverContent",
    "toolCall",
    "toolCallCancellation",
    "goAway",
    "sessionResumptionUpdate",
    "usageMetadata",
    "voiceActivity",
    "voiceActivityDetectionSignal",
];
const CLIENT_KEYS: &[&str] = &[
    "setup",
    "clientContent",
    "client_content",
    "realtimeInput",
    "realtime_input",
    "toolResponse",
    "tool_response",
    "contextUpdate",
];

const SETUP_COMPLETE: &[&str] = &["sessionId", "voiceConsentSignature"];
const SERVER_CONTENT: &[&str] = &[
    "modelTurn",
    "turnComplete",
    "generationComplete",
    "interrupted",
    "inputTranscription",
    "outputTranscription",
    "groundingMetadata",
    "urlContextMetadata",
    "turnCompleteReason",
    "waitingForInput",
    "interimInputTranscription",
    "interactionStatus",
];
const CONTENT: &[&str] = &["role", "parts"];
const PART: &[&str] = &[
    "text",
    "thought",
    "thoughtSignature",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "videoMetadata",
];
const BLOB: &[&str] = &["mimeType", "data", "displayName"];
const FILE_DATA: &[&str] = &["mimeType", "fileUri", "displayName"];
const FUNCTION_CALL: &[&str] = &["id", "name", "args", "partialArgs", "willContinue"];
const FUNCTION_RESPONSE: &[&str] = &["id", "name", "response", "scheduling", "willContinue"];
const EXECUTABLE_CODE: &[&str] = &["language", "code"];
const CODE_RESULT: &[&str] = &["outcome", "output"];
const TRANSCRIPTION: &[&str] = &[
    "text",
    "finished",
    "languageCode",
    "speakerLabel",
    "words",
    "startOffset",
    "endOffset",
];
const TOOL_CALL: &[&str] = &["functionCalls"];
const CANCELLATION: &[&str] = &["ids"];
const GO_AWAY: &[&str] = &["timeLeft"];
const RESUMPTION_UPDATE: &[&str] = &["newHandle", "resumable", "lastConsumedClientMessageIndex"];
const USAGE: &[&str] = &[
    "promptTokenCount",
    "cachedContentTokenCount",
    "responseTokenCount",
    "toolUsePromptTokenCount",
    "thoughtsTokenCount",
    "totalTokenCount",
    "promptTokensDetails",
    "cacheTokensDetails",
    "responseTokensDetails",
    "toolUsePromptTokensDetails",
    "trafficType",
    "serviceTier",
];
const MODALITY_COUNT: &[&str] = &["modality", "tokenCount"];
const VOICE_ACTIVITY: &[&str] = &["type", "voiceActivityType", "audioOffset"];
const VAD_SIGNAL: &[&str] = &["vadSignalType"];

const SETUP: &[&str] = &[
    "model",
    "generationConfig",
    "systemInstruction",
    "tools",
    "toolConfig",
    "sessionResumption",
    "inputAudioTranscription",
    "outputAudioTranscription",
    "realtimeInputConfig",
    "contextWindowCompression",
    "proactivity",
    "explicitVadSignal",
];
const GENERATION_CONFIG: &[&str] = &[
    "responseModalities",
    "temperature",
    "topP",
    "topK",
    "candidateCount",
    "maxOutputTokens",
    "seed",
    "mediaResolution",
    "speechConfig",
    "thinkingConfig",
    "enableAffectiveDialog",
];
const SPEECH_CONFIG: &[&str] = &["voiceConfig", "languageCode"];
const VOICE_CONFIG: &[&str] = &["prebuiltVoiceConfig"];
const PREBUILT_VOICE: &[&str] = &["voiceName"];
const THINKING_CONFIG: &[&str] = &["includeThoughts", "thinkingBudget", "thinkingLevel"];
const TOOL: &[&str] = &[
    "functionDeclarations",
    "googleSearch",
    "codeExecution",
    "urlContext",
];
const FUNCTION_DECLARATION: &[&str] = &["name", "description", "parameters", "behavior"];
const SESSION_RESUMPTION: &[&str] = &["handle", "transparent"];
const TRANSCRIPTION_CONFIG: &[&str] = &["languageCodes"];
const REALTIME_INPUT_CONFIG: &[&str] = &[
    "automaticActivityDetection",
    "activityHandling",
    "turnCoverage",
];
const ACTIVITY_DETECTION: &[&str] = &[
    "disabled",
    "startOfSpeechSensitivity",
    "endOfSpeechSensitivity",
    "prefixPaddingMs",
    "silenceDurationMs",
];
const COMPRESSION: &[&str] = &["triggerTokens", "slidingWindow"];
const SLIDING_WINDOW: &[&str] = &["targetTokens"];
const PROACTIVITY: &[&str] = &["proactiveAudio"];
const CLIENT_CONTENT: &[&str] = &["turns", "turnComplete"];
const REALTIME_INPUT: &[&str] = &[
    "mediaChunks",
    "audio",
    "video",
    "text",
    "activityStart",
    "activityEnd",
    "audioStreamEnd",
];
const TOOL_RESPONSE: &[&str] = &["functionResponses"];
const CONTEXT_UPDATE: &[&str] = &["systemInstruction", "tools"];

const MODALITIES: &[&str] = &["TEXT", "AUDIO", "IMAGE", "MODALITY_UNSPECIFIED", "HOLOGRAM"];

/// Every field name above, for keys of arbitrary objects.
const ALL_NAMES: &[&str] = &[
    "setupComplete",
    "serverContent",
    "toolCall",
    "toolCallCancellation",
    "goAway",
    "sessionResumptionUpdate",
    "usageMetadata",
    "voiceActivity",
    "voiceActivityDetectionSignal",
    "setup",
    "clientContent",
    "realtimeInput",
    "toolResponse",
    "contextUpdate",
    "sessionId",
    "modelTurn",
    "turnComplete",
    "generationComplete",
    "interrupted",
    "inputTranscription",
    "outputTranscription",
    "groundingMetadata",
    "turnCompleteReason",
    "waitingForInput",
    "interactionStatus",
    "role",
    "parts",
    "text",
    "thought",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "mimeType",
    "data",
    "id",
    "name",
    "args",
    "response",
    "finished",
    "functionCalls",
    "ids",
    "timeLeft",
    "newHandle",
    "resumable",
    "lastConsumedClientMessageIndex",
    "totalTokenCount",
    "modality",
    "tokenCount",
    "type",
    "model",
    "generationConfig",
    "tools",
    "turns",
    "audio",
    "video",
    "functionResponses",
    "systemInstruction",
    "scheduling",
    "willContinue",
];

/// The kind of value a field holds, by its lowerCamelCase name.
fn kind_of(name: &str) -> Kind {
    match name {
        "setupComplete" => Kind::Object(SETUP_COMPLETE),
        "serverContent" => Kind::Object(SERVER_CONTENT),
        "modelTurn" | "systemInstruction" => Kind::Object(CONTENT),
        "turns" => Kind::ObjectList(CONTENT),
        "parts" => Kind::ObjectList(PART),
        "inlineData" | "audio" | "video" => Kind::Object(BLOB),
        "mediaChunks" => Kind::ObjectList(BLOB),
        "fileData" => Kind::Object(FILE_DATA),
        "functionCall" => Kind::Object(FUNCTION_CALL),
        "functionCalls" => Kind::ObjectList(FUNCTION_CALL),
        "functionResponse" => Kind::Object(FUNCTION_RESPONSE),
        "functionResponses" => Kind::ObjectList(FUNCTION_RESPONSE),
        "executableCode" => Kind::Object(EXECUTABLE_CODE),
        "codeExecutionResult" => Kind::Object(CODE_RESULT),
        "inputTranscription" | "outputTranscription" | "interimInputTranscription" => {
            Kind::Object(TRANSCRIPTION)
        }
        "toolCall" => Kind::Object(TOOL_CALL),
        "toolCallCancellation" => Kind::Object(CANCELLATION),
        "goAway" => Kind::Object(GO_AWAY),
        "sessionResumptionUpdate" => Kind::Object(RESUMPTION_UPDATE),
        "usageMetadata" => Kind::Object(USAGE),
        "promptTokensDetails"
        | "cacheTokensDetails"
        | "responseTokensDetails"
        | "toolUsePromptTokensDetails" => Kind::ObjectList(MODALITY_COUNT),
        "voiceActivity" => Kind::Object(VOICE_ACTIVITY),
        "voiceActivityDetectionSignal" => Kind::Object(VAD_SIGNAL),
        "setup" => Kind::Object(SETUP),
        "generationConfig" => Kind::Object(GENERATION_CONFIG),
        "speechConfig" => Kind::Object(SPEECH_CONFIG),
        "voiceConfig" => Kind::Object(VOICE_CONFIG),
        "prebuiltVoiceConfig" => Kind::Object(PREBUILT_VOICE),
        "thinkingConfig" => Kind::Object(THINKING_CONFIG),
        "tools" => Kind::ObjectList(TOOL),
        "functionDeclarations" => Kind::ObjectList(FUNCTION_DECLARATION),
        "sessionResumption" => Kind::Object(SESSION_RESUMPTION),
        "inputAudioTranscription" | "outputAudioTranscription" => {
            Kind::Object(TRANSCRIPTION_CONFIG)
        }
        "realtimeInputConfig" => Kind::Object(REALTIME_INPUT_CONFIG),
        "automaticActivityDetection" => Kind::Object(ACTIVITY_DETECTION),
        "contextWindowCompression" => Kind::Object(COMPRESSION),
        "slidingWindow" => Kind::Object(SLIDING_WINDOW),
        "proactivity" => Kind::Object(PROACTIVITY),
        "clientContent" => Kind::Object(CLIENT_CONTENT),
        "realtimeInput" => Kind::Object(REALTIME_INPUT),
        "activityStart" | "activityEnd" => Kind::Object(&[]),
        "toolResponse" => Kind::Object(TOOL_RESPONSE),
        "contextUpdate" => Kind::Object(CONTEXT_UPDATE),
        "turnComplete"
        | "generationComplete"
        | "interrupted"
        | "waitingForInput"
        | "thought"
        | "willContinue"
        | "finished"
        | "resumable"
        | "enableAffectiveDialog"
        | "includeThoughts"
        | "transparent"
        | "disabled"
        | "proactiveAudio"
        | "explicitVadSignal"
        | "audioStreamEnd" => Kind::Bool,
        "data" => Kind::Base64,
        "timeLeft" => Kind::Duration,
        "ids" | "languageCodes" => Kind::StrList,
        "lastConsumedClientMessageIndex" | "triggerTokens" | "targetTokens" => Kind::Int64,
        "promptTokenCount"
        | "cachedContentTokenCount"
        | "responseTokenCount"
        | "toolUsePromptTokenCount"
        | "thoughtsTokenCount"
        | "totalTokenCount"
        | "tokenCount" => Kind::Int,
        "candidateCount" | "maxOutputTokens" | "seed" | "thinkingBudget" | "prefixPaddingMs"
        | "silenceDurationMs" => Kind::Int32,
        "temperature" | "topP" | "topK" => Kind::Float,
        "responseModalities" => Kind::EnumList(MODALITIES),
        "modality" => Kind::Enum(MODALITIES),
        "type" | "voiceActivityType" => {
            Kind::Enum(&["ACTIVITY_START", "ACTIVITY_END", "TYPE_UNSPECIFIED", "SOON"])
        }
        "vadSignalType" => Kind::Enum(&["VAD_SIGNAL_TYPE_SOS", "VAD_SIGNAL_TYPE_EOS", "X"]),
        "turnCompleteReason" => Kind::Enum(&["NEED_MORE_INPUT", "RESPONSE_REJECTED", "NEW"]),
        "interactionStatus" => Kind::Enum(&["IN_PROGRESS", "REQUIRES_ACTION", "IDLE", "NEW"]),
        "scheduling" => Kind::Enum(&["SILENT", "WHEN_IDLE", "INTERRUPT", "NEW"]),
        "behavior" => Kind::Enum(&["BLOCKING", "NON_BLOCKING", "NEW"]),
        "mediaResolution" => Kind::Enum(&["MEDIA_RESOLUTION_LOW", "NEW"]),
        "activityHandling" => Kind::Enum(&["NO_INTERRUPTION", "NEW"]),
        "turnCoverage" => Kind::Enum(&["TURN_INCLUDES_ALL_INPUT", "NEW"]),
        "startOfSpeechSensitivity" => Kind::Enum(&["START_SENSITIVITY_LOW", "NEW"]),
        "endOfSpeechSensitivity" => Kind::Enum(&["END_SENSITIVITY_HIGH", "NEW"]),
        "args"
        | "partialArgs"
        | "response"
        | "groundingMetadata"
        | "urlContextMetadata"
        | "videoMetadata"
        | "words"
        | "voiceConsentSignature"
        | "toolConfig"
        | "parameters"
        | "googleSearch"
        | "codeExecution"
        | "urlContext" => Kind::Any,
        _ => Kind::Str,
    }
}

/// The base64 of `bytes` in one of the four alphabets the decoder accepts.
fn base64_text(bytes: &[u8], alphabet: u8) -> String {
    use base64_simd::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    match alphabet {
        0 => STANDARD.encode_to_string(bytes),
        1 => STANDARD_NO_PAD.encode_to_string(bytes),
        2 => URL_SAFE.encode_to_string(bytes),
        _ => URL_SAFE_NO_PAD.encode_to_string(bytes),
    }
}

/// A value of the given kind, as JSON text; objects go at most `depth` levels deeper.
fn typed_value(kind: Kind, depth: u32) -> BoxedStrategy<String> {
    let quoted = |s: &str| format!("\"{s}\"");
    match kind {
        Kind::Any => json_value(),
        Kind::Bool => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        Kind::Str => json_string(),
        Kind::Int => prop_oneof![0..100_000i64, any::<i64>()]
            .prop_map(|n| n.to_string())
            .boxed(),
        Kind::Int32 => any::<i32>().prop_map(|n| n.to_string()).boxed(),
        Kind::Int64 => (any::<i64>(), any::<bool>())
            .prop_map(|(n, as_string)| {
                if as_string {
                    format!("\"{n}\"")
                } else {
                    n.to_string()
                }
            })
            .boxed(),
        Kind::Float => float_text().boxed(),
        Kind::Base64 => (prop::collection::vec(any::<u8>(), 0..24), 0..4u8)
            .prop_map(move |(bytes, alphabet)| quoted(&base64_text(&bytes, alphabet)))
            .boxed(),
        Kind::Duration => (0..100_000u64, prop::option::of("[0-9]{1,9}"))
            .prop_map(|(secs, fraction)| match fraction {
                Some(fraction) => format!("\"{secs}.{fraction}s\""),
                None => format!("\"{secs}s\""),
            })
            .boxed(),
        Kind::StrList => prop::collection::vec(json_string(), 0..4)
            .prop_map(|items| format!("[{}]", items.join(",")))
            .boxed(),
        Kind::Enum(values) => prop::sample::select(values).prop_map(quoted).boxed(),
        Kind::EnumList(values) => prop::collection::vec(prop::sample::select(values), 0..3)
            .prop_map(|items| {
                let items: Vec<String> = items.iter().map(|v| format!("\"{v}\"")).collect();
                format!("[{}]", items.join(","))
            })
            .boxed(),
        Kind::Object(fields) => object_of(fields, 0..=fields.len().min(4), depth),
        Kind::ObjectList(fields) => {
            prop::collection::vec(object_of(fields, 0..=fields.len().min(3), depth), 0..3)
                .prop_map(|items| format!("[{}]", items.join(",")))
                .boxed()
        }
    }
}

/// The value of the field `name`: mostly of its own kind, sometimes any JSON at all.
fn field_value(name: &'static str, depth: u32) -> BoxedStrategy<String> {
    prop_oneof![
        12 => typed_value(kind_of(name), depth),
        1 => json_value(),
    ]
    .boxed()
}

/// The key `name`, quoted: lowerCamelCase, snake_case, or with an escaped first letter.
fn spelling(name: &'static str) -> BoxedStrategy<String> {
    let escaped = format!(
        "\"\\u{:04x}{}\"",
        name.chars().next().map_or(0, u32::from),
        &name[1..]
    );
    prop_oneof![
        8 => Just(format!("\"{name}\"")),
        2 => Just(format!("\"{}\"", snake(name))),
        1 => Just(escaped),
    ]
    .boxed()
}

/// An object holding a few of `fields` (between `count` of them), each with its value, and
/// now and then one field that is not in `fields` at all.
fn object_of(
    fields: &'static [&'static str],
    count: std::ops::RangeInclusive<usize>,
    depth: u32,
) -> BoxedStrategy<String> {
    if depth == 0 || fields.is_empty() {
        return prop::option::weighted(0.2, (json_key(), json_value()))
            .prop_map(|extra| match extra {
                Some((k, v)) => format!("{{{k}:{v}}}"),
                None => "{}".to_owned(),
            })
            .boxed();
    }
    (
        prop::sample::subsequence(fields.to_vec(), count),
        prop::option::weighted(0.15, (json_key(), json_value())),
    )
        .prop_flat_map(move |(names, extra)| {
            let entries: Vec<BoxedStrategy<String>> = names
                .into_iter()
                .map(|name| {
                    (spelling(name), field_value(name, depth - 1))
                        .prop_map(|(k, v)| format!("{k}:{v}"))
                        .boxed()
                })
                .collect();
            entries.prop_map(move |mut entries| {
                if let Some((k, v)) = &extra {
                    entries.push(format!("{k}:{v}"));
                }
                format!("{{{}}}", entries.join(","))
            })
        })
        .boxed()
}

/// Depth of the protocol-shaped frames: enough for
/// `serverContent.modelTurn.parts[].inlineData.data` and `setup.generationConfig.speechConfig…`.
const DEPTH: u32 = 6;

/// A server frame shaped like the protocol: one to three known messages.
fn shaped_server_frame() -> BoxedStrategy<String> {
    object_of(SERVER_KEYS, 1..=3, DEPTH)
}

/// A client frame shaped like the protocol: usually one message, sometimes two.
fn shaped_client_frame() -> BoxedStrategy<String> {
    prop_oneof![
        5 => object_of(CLIENT_KEYS, 1..=1, DEPTH),
        1 => object_of(CLIENT_KEYS, 2..=2, DEPTH),
    ]
    .boxed()
}

/// Arbitrary JSON values under one to three known message keys (plus maybe an unknown one).
fn arbitrary_under(keys: &'static [&'static str]) -> BoxedStrategy<String> {
    (
        prop::collection::vec(
            (
                prop::sample::select(keys).prop_flat_map(spelling),
                json_value(),
            ),
            1..=3,
        ),
        prop::option::weighted(0.2, (json_key(), json_value())),
    )
        .prop_map(|(entries, extra)| {
            let mut entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect();
            if let Some((k, v)) = extra {
                entries.push(format!("{k}:{v}"));
            }
            format!("{{{}}}", entries.join(","))
        })
        .boxed()
}

/// Arbitrary JSON at the end of a path of known field names, inside otherwise valid frames:
/// `{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":<any>}}]}}}` and the like.
fn arbitrary_at_path() -> BoxedStrategy<String> {
    const PATHS: &[&[&str]] = &[
        &["serverContent"],
        &["serverContent", "modelTurn"],
        &["serverContent", "modelTurn", "parts"],
        &["serverContent", "modelTurn", "parts", "[]"],
        &["serverContent", "modelTurn", "parts", "[]", "text"],
        &["serverContent", "modelTurn", "parts", "[]", "thought"],
        &["serverContent", "modelTurn", "parts", "[]", "inlineData"],
        &[
            "serverContent",
            "modelTurn",
            "parts",
            "[]",
            "inlineData",
            "data",
        ],
        &[
            "serverContent",
            "modelTurn",
            "parts",
            "[]",
            "inlineData",
            "mimeType",
        ],
        &["serverContent", "modelTurn", "parts", "[]", "functionCall"],
        &["serverContent", "turnComplete"],
        &["serverContent", "interrupted"],
        &["serverContent", "inputTranscription"],
        &["serverContent", "outputTranscription", "text"],
        &["serverContent", "outputTranscription", "finished"],
        &["serverContent", "turnCompleteReason"],
        &["serverContent", "groundingMetadata"],
        &["toolCall", "functionCalls"],
        &["toolCall", "functionCalls", "[]"],
        &["toolCall", "functionCalls", "[]", "id"],
        &["toolCall", "functionCalls", "[]", "args"],
        &["toolCallCancellation", "ids"],
        &["toolCallCancellation", "ids", "[]"],
        &["goAway", "timeLeft"],
        &["sessionResumptionUpdate", "newHandle"],
        &["sessionResumptionUpdate", "lastConsumedClientMessageIndex"],
        &["usageMetadata", "totalTokenCount"],
        &["usageMetadata", "responseTokensDetails", "[]", "modality"],
        &["voiceActivity", "type"],
        &["setupComplete", "sessionId"],
        &["setup", "model"],
        &["setup", "generationConfig", "responseModalities"],
        &["setup", "generationConfig", "temperature"],
        &[
            "setup",
            "tools",
            "[]",
            "functionDeclarations",
            "[]",
            "parameters",
        ],
        &[
            "setup",
            "contextWindowCompression",
            "slidingWindow",
            "targetTokens",
        ],
        &["clientContent", "turns", "[]", "parts", "[]", "text"],
        &["clientContent", "turnComplete"],
        &["realtimeInput", "audio", "data"],
        &["realtimeInput", "mediaChunks"],
        &["realtimeInput", "activityStart"],
        &["toolResponse", "functionResponses", "[]", "response"],
        &["toolResponse", "functionResponses", "[]", "scheduling"],
        &["contextUpdate", "systemInstruction", "parts"],
    ];
    (prop::sample::select(PATHS), json_value())
        .prop_map(|(path, leaf)| {
            path.iter().rev().fold(leaf, |inner, step| match *step {
                "[]" => format!("[{inner}]"),
                name => format!("{{\"{name}\":{inner}}}"),
            })
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Valid frames and their mutations
// ---------------------------------------------------------------------------------------------

const VALID_SERVER_FRAMES: &[&str] = &[
    r#"{"setupComplete":{}}"#,
    r#"{"setupComplete":{"sessionId":"s-1"}}"#,
    r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello!"}]},"turnComplete":true}}"#,
    r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAABAAIA"}}]}},"usageMetadata":{"promptTokenCount":10,"responseTokenCount":5,"totalTokenCount":15,"responseTokensDetails":[{"modality":"AUDIO","tokenCount":5}]}}"#,
    r#"{"serverContent":{"interrupted":true}}"#,
    r#"{"serverContent":{"generationComplete":true}}"#,
    r#"{"serverContent":{"turnComplete":true,"turnCompleteReason":"NEED_MORE_INPUT","waitingForInput":true}}"#,
    r#"{"serverContent":{"inputTranscription":{"text":"Hello world","finished":true}}}"#,
    r#"{"serverContent":{"outputTranscription":{"text":"Hi \u00e9\n\"there\" 😀"}}}"#,
    r#"{"toolCall":{"functionCalls":[{"id":"call-1","name":"get_weather","args":{"city":"London","n":[1,2.5,-3e2,null,true]}}]}}"#,
    r#"{"toolCallCancellation":{"ids":["call-1","call-2"]}}"#,
    r#"{"goAway":{"timeLeft":"9.5s"}}"#,
    r#"{"sessionResumptionUpdate":{"newHandle":"h-2","resumable":true,"lastConsumedClientMessageIndex":"42"}}"#,
    r#"{"voiceActivity":{"type":"ACTIVITY_START"}}"#,
    r#"{"voice_activity_detection_signal":{"vad_signal_type":"VAD_SIGNAL_TYPE_EOS"}}"#,
    r#"{"server_content":{"model_turn":{"parts":[{"inline_data":{"mime_type":"image/png","data":"-_8"}},{"hologram":{"uri":"h://1"}}]},"turn_complete":true},"future":{"x":[{}]}}"#,
];

const VALID_CLIENT_FRAMES: &[&str] = &[
    r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","generationConfig":{"responseModalities":["AUDIO"],"temperature":0.7,"speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Kore"}}}},"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"object"},"behavior":"NON_BLOCKING"}]}],"inputAudioTranscription":{},"realtimeInputConfig":{"automaticActivityDetection":{"disabled":false}},"contextWindowCompression":{"slidingWindow":{"targetTokens":16000}}}}"#,
    r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#,
    r#"{"client_content":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turn_complete":true}}"#,
    r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAABAAIA"}}}"#,
    r#"{"realtimeInput":{"video":{"mimeType":"image/jpeg","data":"/9j/4A=="}}}"#,
    r#"{"realtimeInput":{"text":"typed input"}}"#,
    r#"{"realtimeInput":{"activityStart":{}}}"#,
    r#"{"realtime_input":{"audio_stream_end":true}}"#,
    r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"temp_c":21},"scheduling":"WHEN_IDLE"}]}}"#,
    r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Be brief."}]}}}"#,
];

/// Bytes that mean something to a JSON parser, for insertion.
const TOKENS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\\",
    "\\u",
    "\\ud800",
    "null",
    "true",
    "-",
    "0",
    "1e999",
    ".",
    "e",
    "\u{0}",
    "\u{ff}",
    "é",
    "😀",
    "\"turnComplete\":\"yes\",",
    "\"x\":1,",
    "{}",
    "[]",
];

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    FlipBits(Index, u8),
    SetByte(Index, u8),
    Delete(Index, usize),
    InsertBytes(Index, Vec<u8>),
    InsertToken(Index, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 1..=255u8).prop_map(|(at, mask)| Mutation::FlipBits(at, mask)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Mutation::SetByte(at, byte)),
        (any::<Index>(), 1..8usize).prop_map(|(at, len)| Mutation::Delete(at, len)),
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::InsertBytes(at, bytes)),
        (any::<Index>(), prop::sample::select(TOKENS))
            .prop_map(|(at, token)| Mutation::InsertToken(at, token)),
    ]
}

fn apply(frame: &mut Vec<u8>, mutation: &Mutation) {
    let len = frame.len();
    // A position in the frame, and one where bytes can go (the end included).
    let inside = |at: &Index| (len > 0).then(|| at.index(len));
    let between = |at: &Index| at.index(len + 1);
    match mutation {
        Mutation::Truncate(at) => frame.truncate(between(at)),
        Mutation::FlipBits(at, mask) => {
            if let Some(i) = inside(at) {
                frame[i] ^= mask;
            }
        }
        Mutation::SetByte(at, byte) => {
            if let Some(i) = inside(at) {
                frame[i] = *byte;
            }
        }
        Mutation::Delete(at, n) => {
            if let Some(i) = inside(at) {
                frame.drain(i..(i + n).min(len));
            }
        }
        Mutation::InsertBytes(at, bytes) => {
            let i = between(at);
            frame.splice(i..i, bytes.iter().copied());
        }
        Mutation::InsertToken(at, token) => {
            let i = between(at);
            frame.splice(i..i, token.bytes());
        }
    }
}

/// A valid server or client frame, damaged by one to three mutations.
fn mutated_frame() -> impl Strategy<Value = Vec<u8>> {
    let frames: Vec<&'static str> = VALID_SERVER_FRAMES
        .iter()
        .chain(VALID_CLIENT_FRAMES)
        .copied()
        .collect();
    (
        prop::sample::select(frames),
        prop::collection::vec(mutation(), 1..=3),
    )
        .prop_map(|(frame, mutations)| {
            let mut bytes = frame.as_bytes().to_vec();
            for mutation in &mutations {
                apply(&mut bytes, mutation);
            }
            bytes
        })
}

/// Bytes drawn mostly from what JSON is made of, so the parser gets past the first byte.
fn json_ish_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> = b"{}[]\":,\\/ \t\n0123456789.eE+-truefalsnu\"abcxyz"
        .iter()
        .copied()
        .chain([0x00, 0x7f, 0x80, 0xc3, 0xa9, 0xed, 0xa0, 0xf0, 0x9f, 0xff])
        .collect();
    prop::collection::vec(prop::sample::select(alphabet), 0..64)
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(4096))]

    /// (a) Any bytes at all: both decoders answer, with the error the bytes deserve, and the
    /// size limit is applied exactly, before anything else.
    #[test]
    fn arbitrary_bytes_never_panic(
        frame in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..128),
            json_ish_bytes(),
        ],
        limit in 0..96usize,
    ) {
        check_frames([frame.as_slice()])?;
        let limits = DecodeLimits { max_frame_bytes: limit };
        let too_large = DecodeError::TooLarge { size: frame.len(), limit };
        if frame.len() > limit {
            prop_assert_eq!(decode_server_with(&frame, limits), Err(too_large.clone()));
            prop_assert_eq!(decode_client_with(&frame, limits), Err(too_large));
        } else {
            prop_assert_eq!(decode_server_with(&frame, limits), decode_server(&frame));
            prop_assert_eq!(decode_client_with(&frame, limits), decode_client(&frame));
        }
    }
}

proptest! {
    #![proptest_config(config(1024))]

    /// (b) Arbitrary JSON values under one to three known server message keys.
    #[test]
    fn arbitrary_json_under_server_keys(frame in arbitrary_under(SERVER_KEYS)) {
        check_frames([frame.as_bytes()])?;
    }

    /// (b) Arbitrary JSON values under one to three known client message keys.
    #[test]
    fn arbitrary_json_under_client_keys(frame in arbitrary_under(CLIENT_KEYS)) {
        check_frames([frame.as_bytes()])?;
    }

    /// (b) Arbitrary JSON at the end of a path of known field names.
    #[test]
    fn arbitrary_json_under_known_paths(frame in arbitrary_at_path()) {
        check_frames([frame.as_bytes()])?;
    }

    /// (b) Server frames shaped like the protocol, any field possibly holding anything; a
    /// few of them in a row through one event decoder.
    #[test]
    fn shaped_server_frames(frames in prop::collection::vec(shaped_server_frame(), 1..=3)) {
        check_frames(frames.iter().map(String::as_bytes))?;
    }

    /// (b) Client frames shaped like the protocol, any field possibly holding anything.
    #[test]
    fn shaped_client_frames(frame in shaped_client_frame()) {
        check_frames([frame.as_bytes()])?;
    }
}

proptest! {
    #![proptest_config(config(4096))]

    /// (c) Valid frames truncated, with bits flipped, bytes deleted or inserted.
    #[test]
    fn mutated_valid_frames(frame in mutated_frame()) {
        check_frames([frame.as_slice()])?;
    }
}

// ---------------------------------------------------------------------------------------------
// The strategies above are worth their cases
// ---------------------------------------------------------------------------------------------

/// The frames the mutations start from are valid, so mutations explore the edge of the
/// valid set.
#[test]
fn frames_to_mutate_are_valid() {
    for frame in VALID_SERVER_FRAMES {
        assert!(decode_server(frame.as_bytes()).is_ok(), "{frame}");
    }
    for frame in VALID_CLIENT_FRAMES {
        assert!(decode_client(frame.as_bytes()).is_ok(), "{frame}");
    }
}

/// A number reads as the double nearest to it and is written back as that double, in
/// free-form JSON (tool arguments) and in typed float fields alike. (The smallest inputs the
/// round-trip properties found to come back changed.)
#[test]
fn floats_read_exactly_and_survive_a_round_trip() {
    let frame =
        br#"{"toolCall":{"functionCalls":[{"id":"c1","args":{"x":1.8186499357307501e-25}}]}}"#;
    let Ok(message) = decode_server(frame) else {
        panic!("the frame is valid");
    };
    let x = message
        .tool_call
        .as_ref()
        .and_then(|call| call.function_calls.as_ref())
        .and_then(|calls| calls.first())
        .and_then(|call| call.args.as_ref())
        .and_then(|args| args["x"].as_f64());
    assert_eq!(x, Some(1.818_649_935_730_750_1e-25));
    assert_eq!(decode_server(&encode(&message)), Ok(message));

    let frame = br#"{"setup":{"generationConfig":{"temperature":5.477256042709174e48}}}"#;
    let Ok(message) = decode_client(frame) else {
        panic!("the frame is valid");
    };
    let temperature = message
        .setup
        .as_ref()
        .and_then(|setup| setup.generation_config.as_ref())
        .and_then(|config| config.temperature);
    assert_eq!(temperature, Some(5.477_256_042_709_174e48));
    assert_eq!(decode_client(&encode(&message)), Ok(message));
}

/// Share of `samples` frames from `strategy` that `decodes` accepts (deterministic RNG).
fn ok_share(
    strategy: &BoxedStrategy<String>,
    samples: u32,
    decodes: impl Fn(&[u8]) -> bool,
) -> f64 {
    let mut runner = TestRunner::deterministic();
    let mut ok = 0;
    for _ in 0..samples {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            panic!("strategy failed to generate a value");
        };
        if decodes(tree.current().as_bytes()) {
            ok += 1;
        }
    }
    f64::from(ok) / f64::from(samples)
}

/// Enough protocol-shaped frames decode for the round-trip check to be exercised on deep,
/// varied messages, not just on errors.
#[test]
fn shaped_frames_often_decode() {
    let server = ok_share(&shaped_server_frame(), 300, |f| decode_server(f).is_ok());
    let client = ok_share(&shaped_client_frame(), 300, |f| decode_client(f).is_ok());
    let server_keys = ok_share(&arbitrary_under(SERVER_KEYS), 300, |f| {
        decode_server(f).is_ok()
    });
    eprintln!(
        "decoded: shaped server {server:.2}, shaped client {client:.2}, arbitrary under server keys {server_keys:.2}"
    );
    assert!(
        server >= 0.25,
        "only {server:.2} of shaped server frames decode"
    );
    assert!(
        client >= 0.25,
        "only {client:.2} of shaped client frames decode"
    );
    assert!(
        server_keys >= 0.05,
        "only {server_keys:.2} of arbitrary server frames decode"
    );
}
