//! Redaction: exact rewritten frames, silence that keeps audio lengths, rules as data.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reel_protocol::{EventDecoder, PartKind, SessionEvent, decode_client, decode_server};
use reel_recorder::error::{PathError, PathProblem, RuleError};
use reel_recorder::redact::{RedactAction, RedactingRecorder, RedactionRule, Redactor};
use reel_recorder::wire_log::{
    CloseMark, Direction, MemoryWireRecorder, Source, WireEntry, WireRecorder,
};
use serde_json::json;

/// Model audio (5 bytes, 1..=5), an image and text in one turn.
const SERVER_FRAME: &[u8] = br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AQIDBAU="}},{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}},{"text":"Hi"}]}}}"#;
const SERVER_SILENCED: &[u8] = br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAAAAA="}},{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}},{"text":"Hi"}]}}}"#;

fn owned(cow: Cow<'_, [u8]>) -> String {
    match cow {
        Cow::Owned(bytes) => String::from_utf8(bytes).unwrap(),
        Cow::Borrowed(bytes) => panic!(
            "expected a rewrite, got {:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
}

fn assert_borrowed(cow: Cow<'_, [u8]>, payload: &[u8]) {
    match cow {
        Cow::Borrowed(bytes) => assert!(std::ptr::eq(bytes, payload), "not the same slice"),
        Cow::Owned(bytes) => panic!(
            "expected no copy, got {:?}",
            String::from_utf8_lossy(&bytes)
        ),
    }
}

#[test]
fn the_audio_preset_silences_model_audio_and_keeps_the_rest() {
    let redacted = owned(Redactor::audio().redact(SERVER_FRAME));
    assert_eq!(redacted.as_bytes(), SERVER_SILENCED);
}

#[test]
fn silenced_model_audio_decodes_to_the_same_events_with_silent_audio() {
    let redacted = owned(Redactor::audio().redact(SERVER_FRAME));
    let events = |frame: &[u8]| {
        let mut out = Vec::new();
        EventDecoder::new().decode(decode_server(frame).unwrap(), &mut out);
        out
    };
    let original = events(SERVER_FRAME);
    let silenced = events(redacted.as_bytes());
    assert_eq!(original.len(), silenced.len());
    assert_eq!(
        original[0],
        SessionEvent::AudioData(vec![1, 2, 3, 4, 5].into())
    );
    assert_eq!(silenced[0], SessionEvent::AudioData(vec![0; 5].into()));
    assert_eq!(original[1..], silenced[1..], "image and text are untouched");
}

#[test]
fn silenced_user_audio_still_decodes_with_the_same_length() {
    let frame =
        br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AQIDBA=="}}}"#;
    let redacted = owned(Redactor::audio().redact(frame));
    assert_eq!(
        redacted,
        r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAAAAA=="}}}"#
    );
    let original = decode_client(frame).unwrap();
    let silenced = decode_client(redacted.as_bytes()).unwrap();
    let audio = |message: &reel_protocol::ClientMessage| {
        message
            .realtime_input
            .as_ref()
            .unwrap()
            .audio
            .as_ref()
            .unwrap()
            .data
            .as_ref()
            .unwrap()
            .0
            .clone()
    };
    assert_eq!(audio(&original).len(), 4);
    assert_eq!(audio(&silenced).as_ref(), &[0u8; 4]);
}

#[test]
fn snake_case_keys_are_matched_and_kept() {
    let frame =
        br#"{"realtime_input":{"audio":{"mime_type":"audio/pcm;rate=16000","data":"AQID"}}}"#;
    assert_eq!(
        owned(Redactor::audio().redact(frame)),
        r#"{"realtime_input":{"audio":{"mime_type":"audio/pcm;rate=16000","data":"AAAA"}}}"#
    );
    let frame = br#"{"server_content":{"model_turn":{"parts":[{"inline_data":{"mime_type":"audio/pcm","data":"AQ=="}}]}}}"#;
    let redacted = owned(Redactor::audio().redact(frame));
    assert_eq!(
        redacted,
        r#"{"server_content":{"model_turn":{"parts":[{"inline_data":{"mime_type":"audio/pcm","data":"AA=="}}]}}}"#
    );
    let message = decode_server(redacted.as_bytes()).unwrap();
    let parts = message
        .server_content
        .unwrap()
        .model_turn
        .unwrap()
        .parts
        .unwrap();
    match parts[0].kind() {
        PartKind::InlineData(blob) => assert_eq!(blob.data.as_ref().unwrap().0.as_ref(), &[0u8]),
        other => panic!("expected inline data, got {other:?}"),
    }
}

#[test]
fn media_chunks_are_silenced_only_when_they_are_audio() {
    let frame = br#"{"realtimeInput":{"mediaChunks":[{"mimeType":"audio/pcm;rate=16000","data":"AQI="},{"mimeType":"image/jpeg","data":"/9j/"}]}}"#;
    let redacted = owned(Redactor::audio().redact(frame));
    assert_eq!(
        redacted,
        r#"{"realtimeInput":{"mediaChunks":[{"mimeType":"audio/pcm;rate=16000","data":"AAA="},{"mimeType":"image/jpeg","data":"/9j/"}]}}"#
    );
    decode_client(redacted.as_bytes()).unwrap();
}

#[test]
fn unchanged_payloads_are_not_copied() {
    let redactor = Redactor::audio();
    // No rule's first key: not even parsed.
    let tool_call = br#"{"toolCall":{"functionCalls":[{"id":"1","name":"f","args":{}}]}}"#;
    assert_borrowed(redactor.redact(tool_call), tool_call);
    // The key is there but nothing matches (text only).
    let text = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi"}]}}}"#;
    assert_borrowed(redactor.redact(text), text);
    // Already silent.
    let silent = SERVER_SILENCED;
    assert_borrowed(redactor.redact(silent), silent);
}

#[test]
fn a_payload_that_is_not_json_is_left_as_is() {
    let payload = b"\"serverContent\" but not JSON {";
    assert_borrowed(Redactor::audio().redact(payload), payload);
    let binary = b"\x00\x01\xff";
    assert_borrowed(Redactor::audio().redact(binary), binary);
}

#[test]
fn replace_and_remove_rewrite_exactly() {
    let redactor = Redactor::new([
        RedactionRule::new(
            "toolResponse.functionResponses[*].response.ssn",
            RedactAction::Replace(json!("***")),
        ),
        RedactionRule::new(
            "toolResponse.functionResponses[*].response.card",
            RedactAction::Replace(json!({"redacted": true})),
        ),
        RedactionRule::new(
            "toolResponse.functionResponses[*].name",
            RedactAction::Remove,
        ),
    ])
    .unwrap();
    let frame = br#"{"toolResponse":{"functionResponses":[{"id":"1","name":"lookup","response":{"ssn":"078-05-1120","card":"4111","ok":true}},{"id":"2","name":"other","response":{}}]}}"#;
    assert_eq!(
        owned(redactor.redact(frame)),
        r#"{"toolResponse":{"functionResponses":[{"id":"1","response":{"ssn":"***","card":{"redacted":true},"ok":true}},{"id":"2","response":{}}]}}"#
    );
}

#[test]
fn remove_on_every_element_empties_the_array() {
    let redactor = Redactor::new([RedactionRule::new(
        "clientContent.turns[*]",
        RedactAction::Remove,
    )])
    .unwrap();
    let frame = br#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"secret"}]}],"turnComplete":true}}"#;
    assert_eq!(
        owned(redactor.redact(frame)),
        r#"{"clientContent":{"turns":[],"turnComplete":true}}"#
    );
}

#[test]
fn silence_on_something_that_is_not_base64_leaves_an_empty_string() {
    let redactor = Redactor::new([RedactionRule::new("a.data", RedactAction::Silence)]).unwrap();
    assert_eq!(
        owned(redactor.redact(br#"{"a":{"data":"not base64!"}}"#)),
        r#"{"a":{"data":""}}"#
    );
    assert_eq!(
        owned(redactor.redact(br#"{"a":{"data":{"nested":1}}}"#)),
        r#"{"a":{"data":""}}"#
    );
}

#[test]
fn a_root_array_path_is_allowed() {
    let redactor = Redactor::new([RedactionRule::new("[*].token", RedactAction::Remove)]).unwrap();
    assert_eq!(
        owned(redactor.redact(br#"[{"token":"t","x":1},{"y":2}]"#)),
        r#"[{"x":1},{"y":2}]"#
    );
}

#[test]
fn rules_are_data_read_from_json() {
    let redactor: Redactor = serde_json::from_value(json!([
        {"path": "serverContent.modelTurn.parts[*].inlineData.data", "action": "silence",
         "mime_type_prefix": "audio/"},
        {"path": "toolResponse.functionResponses[*].response.ssn", "action": {"replace": "***"}},
        {"path": "clientContent.turns", "action": "remove"}
    ]))
    .unwrap();
    let rules: Vec<_> = redactor.rules().cloned().collect();
    assert_eq!(
        rules,
        vec![
            RedactionRule::new(
                "serverContent.modelTurn.parts[*].inlineData.data",
                RedactAction::Silence
            )
            .when_mime_type_starts_with("audio/"),
            RedactionRule::new(
                "toolResponse.functionResponses[*].response.ssn",
                RedactAction::Replace(json!("***"))
            ),
            RedactionRule::new("clientContent.turns", RedactAction::Remove),
        ]
    );
    assert_eq!(
        serde_json::to_value(&redactor).unwrap(),
        json!([
            {"path": "serverContent.modelTurn.parts[*].inlineData.data", "action": "silence",
             "mime_type_prefix": "audio/"},
            {"path": "toolResponse.functionResponses[*].response.ssn", "action": {"replace": "***"}},
            {"path": "clientContent.turns", "action": "remove"}
        ])
    );
    assert_eq!(
        owned(redactor.redact(SERVER_FRAME)).as_bytes(),
        SERVER_SILENCED
    );
}

#[test]
fn the_audio_preset_is_its_three_rules() {
    let expected = Redactor::new([
        RedactionRule::new("realtimeInput.audio.data", RedactAction::Silence),
        RedactionRule::new("realtimeInput.mediaChunks[*].data", RedactAction::Silence)
            .when_mime_type_starts_with("audio/"),
        RedactionRule::new(
            "serverContent.modelTurn.parts[*].inlineData.data",
            RedactAction::Silence,
        )
        .when_mime_type_starts_with("audio/"),
    ])
    .unwrap();
    assert_eq!(Redactor::audio(), expected);
}

#[test]
fn invalid_paths_are_rule_errors() {
    let problem = |path: &str| match Redactor::new([RedactionRule::new(path, RedactAction::Remove)])
    {
        Err(RuleError::InvalidPath(PathError {
            path: named,
            problem,
        })) => {
            assert_eq!(named, path);
            problem
        }
        other => panic!("expected InvalidPath for {path:?}, got {other:?}"),
    };
    assert_eq!(problem(""), PathProblem::Empty);
    assert_eq!(problem("a..b"), PathProblem::EmptyKey);
    assert_eq!(problem(".a"), PathProblem::EmptyKey);
    assert_eq!(problem("a."), PathProblem::EmptyKey);
    assert_eq!(problem("a.[*]"), PathProblem::EmptyKey);
    assert_eq!(problem("a[x]"), PathProblem::BadBracket);
    assert_eq!(problem("a[*]x"), PathProblem::BadBracket);
    assert_eq!(problem("a]"), PathProblem::BadBracket);
    assert_eq!(
        Redactor::new([
            RedactionRule::new("a[*]", RedactAction::Remove).when_mime_type_starts_with("audio/")
        ]),
        Err(RuleError::ConditionNeedsKey {
            path: "a[*]".into()
        })
    );
    let error =
        serde_json::from_str::<Redactor>(r#"[{"path":"a[x]","action":"remove"}]"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "redaction rule: `a[x]` is not a JSON path: a bracket must hold an index or `*` and be closed"
    );
}

#[test]
fn the_shared_path_syntax_reaches_indices_wildcards_and_any_depth() {
    let redactor = Redactor::new([
        RedactionRule::new(
            "toolResponse.functionResponses[0].response.ssn",
            RedactAction::Replace(json!("***")),
        ),
        RedactionRule::new("**.apiKey", RedactAction::Remove),
    ])
    .unwrap();
    let payload = br#"{"toolResponse":{"functionResponses":[{"response":{"ssn":"1","apiKey":"k"}},{"response":{"ssn":"2"}}]}}"#;
    assert_eq!(
        redactor.redact(payload).as_ref(),
        br#"{"toolResponse":{"functionResponses":[{"response":{"ssn":"***"}},{"response":{"ssn":"2"}}]}}"#
    );
}

/// Counts flushes; reports a fixed error count.
#[derive(Default)]
struct Counting {
    entries: MemoryWireRecorder,
    flushes: AtomicU64,
}

impl WireRecorder for Counting {
    fn record(&self, entry: WireEntry) {
        self.entries.record(entry);
    }
    fn flush(&self) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
    }
    fn error_count(&self) -> u64 {
        7
    }
}

#[test]
fn the_redacting_recorder_redacts_frames_and_passes_the_rest_through() {
    let inner = Arc::new(Counting::default());
    let recorder = RedactingRecorder::new(Arc::clone(&inner), Redactor::audio());
    let audio_in = WireEntry::frame(2, Direction::In, 10, SERVER_FRAME, Some(2), true);
    let app_text = WireEntry {
        source: Some(Source::App),
        ..WireEntry::frame(
            3,
            Direction::Out,
            11,
            &br#"{"realtimeInput":{"text":"hi"}}"#[..],
            None,
            false,
        )
    };
    let close = WireEntry::close_mark(
        4,
        12,
        Some(2),
        CloseMark {
            code: Some(1000),
            reason: None,
            client: true,
        },
    );
    recorder.record(audio_in.clone());
    recorder.record(app_text.clone());
    recorder.record(close.clone());
    recorder.flush();
    assert_eq!(
        inner.entries.entries(),
        vec![
            WireEntry {
                payload: SERVER_SILENCED.into(),
                ..audio_in
            },
            app_text,
            close
        ]
    );
    assert_eq!(inner.flushes.load(Ordering::Relaxed), 1);
    assert_eq!(recorder.error_count(), 7);
    assert_eq!(recorder.redactor(), &Redactor::audio());
}
