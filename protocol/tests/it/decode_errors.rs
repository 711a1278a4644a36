//! Bad input becomes a typed error that says what was wrong and where.

use reel_protocol::{
    DecodeError, DecodeLimits, decode_client, decode_client_with, decode_server, decode_server_with,
};

#[test]
fn invalid_utf8_names_the_offset() {
    let frame = b"{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"text\":\"ab\xff\"}]}}}";
    assert_eq!(
        decode_server(frame),
        Err(DecodeError::InvalidUtf8 { offset: 51 })
    );
}

#[test]
fn invalid_json_names_line_and_column() {
    assert_eq!(
        decode_server(b"{\"serverContent\":\n{\"turnComplete\":tru}}"),
        Err(DecodeError::InvalidJson {
            line: 2,
            column: 20,
            message: "expected ident".into()
        })
    );
    assert_eq!(
        decode_server(b"{\"setupComplete\":{}"),
        Err(DecodeError::InvalidJson {
            line: 1,
            column: 19,
            message: "EOF while parsing an object".into()
        })
    );
}

#[test]
fn non_objects_are_named() {
    assert_eq!(
        decode_server(b"[1,2]"),
        Err(DecodeError::NotAnObject { found: "array" })
    );
    assert_eq!(
        decode_client(b"\"setup\""),
        Err(DecodeError::NotAnObject { found: "string" })
    );
    assert_eq!(
        decode_server(b"null"),
        Err(DecodeError::NotAnObject { found: "null" })
    );
}

#[test]
fn empty_frames_are_refused() {
    assert_eq!(decode_server(b""), Err(DecodeError::Empty));
    assert_eq!(decode_client(b"  \n"), Err(DecodeError::Empty));
}

#[test]
fn a_frame_with_no_known_key_lists_what_it_had() {
    let error = decode_server(br#"{"hello":1,"world":2}"#).unwrap_err();
    match &error {
        DecodeError::NoKnownKey { found, expected } => {
            assert_eq!(found, &["hello", "world"]);
            assert!(expected.contains(&"serverContent"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(error.to_string().starts_with(
        "frame has no known message key (found [\"hello\", \"world\"]; expected one of [\"setupComplete\""
    ));
    assert_eq!(
        decode_client(br#"{}"#),
        Err(DecodeError::NoKnownKey {
            found: vec![],
            expected: &[
                "setup",
                "clientContent",
                "realtimeInput",
                "toolResponse",
                "contextUpdate"
            ]
        })
    );
}

#[test]
fn a_client_frame_with_two_messages_is_refused() {
    assert_eq!(
        decode_client(br#"{"toolResponse":{},"setup":{}}"#),
        Err(DecodeError::SeveralMessages {
            found: vec!["setup", "toolResponse"]
        })
    );
}

#[test]
fn wrong_field_types_name_the_json_path() {
    let cases: &[(&[u8], &str, &str)] = &[
        (
            br#"{"serverContent":{"modelTurn":{"parts":[{"text":"ok"},{"text":42}]}}}"#,
            "serverContent.modelTurn.parts[1].text",
            "invalid type: integer `42`, expected a string",
        ),
        (
            br#"{"serverContent":{"turnComplete":"yes"}}"#,
            "serverContent.turnComplete",
            "invalid type: string \"yes\", expected a boolean",
        ),
        (
            br#"{"goAway":{"timeLeft":"soon"}}"#,
            "goAway.timeLeft",
            "invalid duration \"soon\": expected seconds with an optional fraction and an 's' suffix, like \"9.5s\"",
        ),
        (
            br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"@@@"}}]}}}"#,
            "serverContent.modelTurn.parts[0].inlineData.data",
            "invalid base64 data (3 characters): not standard or URL-safe base64",
        ),
        (
            br#"{"sessionResumptionUpdate":{"lastConsumedClientMessageIndex":"x1"}}"#,
            "sessionResumptionUpdate.lastConsumedClientMessageIndex",
            "\"x1\" is not a decimal int64",
        ),
        (
            br#"{"toolCall":{"functionCalls":{"id":"1"}}}"#,
            "toolCall.functionCalls",
            "invalid type: map, expected a sequence",
        ),
        (
            br#"{"serverContent":{"turnComplete":true,"turn_complete":true}}"#,
            "serverContent",
            "duplicate field `turnComplete`",
        ),
    ];
    for (frame, path, message) in cases {
        assert_eq!(
            decode_server(frame),
            Err(DecodeError::InvalidField {
                path: (*path).into(),
                message: (*message).into()
            }),
            "{}",
            String::from_utf8_lossy(frame)
        );
    }
    assert_eq!(
        decode_client(br#"{"setup":{"generationConfig":{"responseModalities":"AUDIO"}}}"#),
        Err(DecodeError::InvalidField {
            path: "setup.generationConfig.responseModalities".into(),
            message: "invalid type: string \"AUDIO\", expected a sequence".into()
        })
    );
}

#[test]
fn frames_over_the_limit_are_refused_before_parsing() {
    let limits = DecodeLimits {
        max_frame_bytes: 16,
    };
    let frame = br#"{"setupComplete":{}}"#;
    assert_eq!(
        decode_server_with(frame, limits),
        Err(DecodeError::TooLarge {
            size: 20,
            limit: 16
        })
    );
    assert_eq!(
        decode_client_with(b"not even json but long", limits),
        Err(DecodeError::TooLarge {
            size: 22,
            limit: 16
        })
    );
    assert!(
        decode_server_with(
            frame,
            DecodeLimits {
                max_frame_bytes: 20
            }
        )
        .is_ok()
    );
    assert_eq!(DecodeLimits::default().max_frame_bytes, 16 * 1024 * 1024);
}

#[test]
fn error_texts_read_well() {
    let error = decode_server(br#"{"serverContent":{"turnComplete":"yes"}}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid field `serverContent.turnComplete`: invalid type: string \"yes\", expected a boolean"
    );
    let error = decode_server_with(b"{}", DecodeLimits { max_frame_bytes: 1 }).unwrap_err();
    assert_eq!(
        error.to_string(),
        "frame of 2 bytes is over the 1-byte limit"
    );
}
