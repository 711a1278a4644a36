//! A frame with a known field of the wrong type keeps every sibling it can, and reports each
//! bad field by its JSON path (`decode_server_partial`, `EventDecoder::decode_partial`).

use bytes::Bytes;
use reel_protocol::{
    DecodeError, EventDecoder, FieldError, Found, FunctionCall, PartialServerMessage, SessionError,
    SessionEvent, decode_server, decode_server_partial,
};
use serde_json::json;

/// The events of one frame read partially, as the Router reads it (frame sequence 9).
fn events_of(frame: &str) -> Vec<SessionEvent> {
    let mut events = Vec::new();
    let partial = decode_server_partial(frame.as_bytes()).unwrap();
    EventDecoder::new().decode_partial(9, partial, &mut events);
    events
}

fn field_error(path: &str, expected: &'static str, found: Found) -> SessionEvent {
    SessionEvent::Error(SessionError::InvalidField {
        seq: 9,
        error: FieldError {
            path: path.into(),
            expected,
            found,
        },
    })
}

#[test]
fn bad_base64_in_a_part_keeps_the_transcription_and_the_turn_complete() {
    let frame = r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"!!not base64"}}]},"outputTranscription":{"text":"Hello"},"turnComplete":true}}"#;
    assert_eq!(
        events_of(frame),
        vec![
            SessionEvent::OutputTranscription {
                text: "Hello".into(),
                is_final: false
            },
            SessionEvent::OutputTranscription {
                text: "Hello".into(),
                is_final: true
            },
            SessionEvent::TurnComplete {
                reason: None,
                waiting_for_input: false
            },
            field_error(
                "serverContent.modelTurn.parts[0].inlineData.data",
                "base64 text",
                Found::String { chars: 12 }
            ),
        ]
    );
    // The strict decoder refuses the same frame whole, naming the same field.
    assert_eq!(
        decode_server(frame.as_bytes()),
        Err(DecodeError::InvalidField {
            path: "serverContent.modelTurn.parts[0].inlineData.data".into(),
            message: "invalid base64 data (12 characters): not standard or URL-safe base64".into()
        })
    );
}

#[test]
fn a_string_where_a_number_goes_keeps_the_tool_call_and_the_rest_of_the_usage() {
    let frame = r#"{"toolCall":{"functionCalls":[{"id":"fc_1","name":"get_weather","args":{"city":"Paris"}}]},"usageMetadata":{"promptTokenCount":"many","totalTokenCount":15}}"#;
    let partial = decode_server_partial(frame.as_bytes()).unwrap();
    let usage = partial.message.usage_metadata.clone().unwrap();
    assert_eq!(
        (usage.prompt_token_count, usage.total_token_count),
        (None, Some(15))
    );
    assert_eq!(
        events_of(frame),
        vec![
            SessionEvent::ToolCall(vec![FunctionCall {
                id: Some("fc_1".into()),
                name: Some("get_weather".into()),
                args: Some(json!({"city": "Paris"}).into()),
                ..FunctionCall::default()
            }]),
            SessionEvent::Usage(Box::new(usage)),
            field_error(
                "usageMetadata.promptTokenCount",
                "an integer",
                Found::String { chars: 4 }
            ),
        ]
    );
}

#[test]
fn a_bad_turn_complete_keeps_the_text_and_the_tool_call() {
    let frame = r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi"}]},"turnComplete":"yes"},"toolCall":{"functionCalls":[{"id":"fc_2","name":"ping"}]}}"#;
    assert_eq!(
        events_of(frame),
        vec![
            SessionEvent::TextDelta("Hi".into()),
            SessionEvent::ToolCall(vec![FunctionCall {
                id: Some("fc_2".into()),
                name: Some("ping".into()),
                ..FunctionCall::default()
            }]),
            field_error(
                "serverContent.turnComplete",
                "a boolean",
                Found::String { chars: 3 }
            ),
        ]
    );
}

#[test]
fn a_bad_item_is_left_out_whole_and_its_siblings_are_kept() {
    // Part 1 is not an object, part 2 has a bad field, call 0 has a number for an id.
    let frame = r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"},7,{"text":"b","thought":"no"},{"text":"c"}]}},"toolCall":{"functionCalls":[{"id":5,"name":"x"},{"id":"fc_3","name":"y"}]}}"#;
    let partial = decode_server_partial(frame.as_bytes()).unwrap();
    assert_eq!(
        partial.field_errors,
        vec![
            FieldError {
                path: "serverContent.modelTurn.parts[1]".into(),
                expected: "a JSON object (Part)",
                found: Found::Number("7".into()),
            },
            FieldError {
                path: "serverContent.modelTurn.parts[2].thought".into(),
                expected: "a boolean",
                found: Found::String { chars: 2 },
            },
            FieldError {
                path: "toolCall.functionCalls[0].id".into(),
                expected: "a string",
                found: Found::Number("5".into()),
            },
        ]
    );
    assert_eq!(
        events_of(frame)[..3],
        [
            SessionEvent::TextDelta("a".into()),
            SessionEvent::TextDelta("c".into()),
            SessionEvent::ToolCall(vec![FunctionCall {
                id: Some("fc_3".into()),
                name: Some("y".into()),
                ..FunctionCall::default()
            }]),
        ]
    );
}

#[test]
fn errors_inside_arrays_of_strings_name_the_item() {
    let frame = r#"{"toolCallCancellation":{"ids":["fc_1",2]},"goAway":{"timeLeft":"soon"},"sessionResumptionUpdate":{"newHandle":"h-2","lastConsumedClientMessageIndex":"x1"}}"#;
    assert_eq!(
        decode_server_partial(frame.as_bytes())
            .unwrap()
            .field_errors,
        vec![
            FieldError {
                path: "toolCallCancellation.ids[1]".into(),
                expected: "a string",
                found: Found::Number("2".into()),
            },
            FieldError {
                path: "goAway.timeLeft".into(),
                expected: "a duration string like \"9.5s\"",
                found: Found::String { chars: 4 },
            },
            FieldError {
                path: "sessionResumptionUpdate.lastConsumedClientMessageIndex".into(),
                expected: "an int64 as a number or a decimal string",
                found: Found::String { chars: 2 },
            },
        ]
    );
}

#[test]
fn a_whole_message_of_the_wrong_type_is_one_error_and_snake_case_paths_are_kept() {
    let frame = r#"{"server_content":[1],"usage_metadata":{"total_token_count":3}}"#;
    let partial = decode_server_partial(frame.as_bytes()).unwrap();
    assert_eq!(partial.message.server_content, None);
    assert_eq!(
        partial.message.usage_metadata.unwrap().total_token_count,
        Some(3)
    );
    assert_eq!(
        partial.field_errors,
        vec![FieldError {
            path: "server_content".into(),
            expected: "a JSON object (ServerContent)",
            found: Found::Array { len: 1 },
        }]
    );
    // Only a bad field: still a frame, reported as such.
    assert_eq!(
        events_of(r#"{"goAway":{"timeLeft":12}}"#),
        vec![
            SessionEvent::GoAway { time_left: None },
            field_error(
                "goAway.timeLeft",
                "a duration string like \"9.5s\"",
                Found::Number("12".into())
            ),
        ]
    );
}

#[test]
fn a_good_frame_reads_as_decode_server_reads_it() {
    let frame = br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"AAEC"}}]},"turnComplete":true},"usageMetadata":{"totalTokenCount":15},"later":1}"#;
    assert_eq!(
        decode_server_partial(frame),
        Ok(PartialServerMessage {
            message: decode_server(frame).unwrap(),
            field_errors: vec![],
        })
    );
    let mut events = Vec::new();
    EventDecoder::new().decode_partial(1, decode_server_partial(frame).unwrap(), &mut events);
    // The turn's usage first (the frame completes the turn), then its content.
    assert_eq!(events[0].kind(), "usage");
    assert_eq!(
        events[1],
        SessionEvent::AudioData(Bytes::from_static(&[0, 1, 2]))
    );
}

#[test]
fn what_is_not_a_frame_is_still_a_decode_error() {
    let cases: [(&[u8], DecodeError); 4] = [
        (b"", DecodeError::Empty),
        (b"[1]", DecodeError::NotAnObject { found: "array" }),
        (
            br#"{"serverContent":{"turnComplete":tru}}"#,
            DecodeError::InvalidJson {
                line: 1,
                column: 37,
                message: "expected ident".into(),
            },
        ),
        (
            br#"{"hello":1}"#,
            DecodeError::NoKnownKey {
                found: vec!["hello".into()],
                expected: reel_protocol::ServerMessage::FIELDS,
            },
        ),
    ];
    for (frame, error) in cases {
        assert_eq!(
            decode_server_partial(frame),
            Err(error),
            "{}",
            String::from_utf8_lossy(frame)
        );
    }
    // A key given twice under the same spelling is not visible once parsed: the frame is
    // refused as the strict decoder refuses it.
    assert_eq!(
        decode_server_partial(br#"{"goAway":{},"goAway":{}}"#),
        Err(DecodeError::InvalidField {
            path: ".".into(),
            message: "duplicate field `goAway`".into()
        })
    );
}

#[test]
fn a_field_under_both_spellings_keeps_the_first_and_reports_the_second() {
    let frame = br#"{"serverContent":{"turnComplete":true,"turn_complete":false}}"#;
    let partial = decode_server_partial(frame).unwrap();
    assert_eq!(
        partial.message.server_content.unwrap().turn_complete,
        Some(true)
    );
    assert_eq!(
        partial.field_errors,
        vec![FieldError {
            path: "serverContent.turn_complete".into(),
            expected: "the field once",
            found: Found::Duplicate,
        }]
    );
}
