//! Every frame of the protocol reference decodes, re-encodes losslessly, and reads the same
//! in either key casing.

use reel_protocol::{
    ClientMessage, ClientMessageKind, PartKind, ServerMessage, decode_client, decode_server, encode,
};
use serde_json::{Value, json};

/// One client frame of each kind the Live API documents, verbatim.
const CLIENT_FRAMES: &[&str] = &[
    r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","generationConfig":{"responseModalities":["AUDIO"],"speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Kore"}}}},"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"behavior":"NON_BLOCKING"}]}],"inputAudioTranscription":{},"outputAudioTranscription":{},"realtimeInputConfig":{"automaticActivityDetection":{"disabled":false}},"sessionResumption":{"handle":"optional-previous-handle"},"contextWindowCompression":{"slidingWindow":{"targetTokens":16000}}}}"#,
    r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#,
    r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAABAAIA"}}}"#,
    r#"{"realtimeInput":{"video":{"mimeType":"image/jpeg","data":"/9j/4A=="}}}"#,
    r#"{"realtimeInput":{"text":"typed input"}}"#,
    r#"{"realtimeInput":{"activityStart":{}}}"#,
    r#"{"realtimeInput":{"activityEnd":{}}}"#,
    r#"{"realtimeInput":{"audioStreamEnd":true}}"#,
    r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"temp_c":21},"scheduling":"WHEN_IDLE"}]}}"#,
];

/// One server frame of each kind the Live API documents, verbatim.
const SERVER_FRAMES: &[&str] = &[
    r#"{"setupComplete":{}}"#,
    r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello!"}]},"turnComplete":true}}"#,
    r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAABAAIA"}}]}},"usageMetadata":{"promptTokenCount":10,"responseTokenCount":5,"totalTokenCount":15,"responseTokensDetails":[{"modality":"AUDIO","tokenCount":5}]}}"#,
    r#"{"serverContent":{"interrupted":true}}"#,
    r#"{"serverContent":{"generationComplete":true}}"#,
    r#"{"serverContent":{"turnComplete":true,"turnCompleteReason":"NEED_MORE_INPUT","waitingForInput":true}}"#,
    r#"{"serverContent":{"inputTranscription":{"text":"Hello world"}}}"#,
    r#"{"serverContent":{"outputTranscription":{"text":"Hi there"}}}"#,
    r#"{"toolCall":{"functionCalls":[{"id":"call-1","name":"get_weather","args":{"city":"London"}}]}}"#,
    r#"{"toolCallCancellation":{"ids":["call-1"]}}"#,
    r#"{"goAway":{"timeLeft":"9.5s"}}"#,
    r#"{"sessionResumptionUpdate":{"newHandle":"h-2","resumable":true,"lastConsumedClientMessageIndex":"42"}}"#,
];

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn reference_client_frames_round_trip_byte_for_byte() {
    for frame in CLIENT_FRAMES {
        let message = decode_client(frame.as_bytes()).unwrap();
        assert!(message.kind().is_some(), "{frame}");
        assert!(message.extra.is_empty(), "nothing unknown in {frame}");
        let encoded = encode(&message);
        assert_eq!(json_of(&encoded), json_of(frame.as_bytes()), "{frame}");
        // Reference frames are written in canonical field order, so the bytes come back
        // exactly, except inside free-form JSON (the setup's parameter schema), whose object
        // keys are written sorted.
        if message.setup.is_none() {
            assert_eq!(String::from_utf8(encoded.clone()).unwrap(), *frame);
        }
        assert_eq!(decode_client(&encoded).unwrap(), message);
    }
}

#[test]
fn reference_server_frames_round_trip() {
    for frame in SERVER_FRAMES {
        let message = decode_server(frame.as_bytes()).unwrap();
        assert!(message.extra.is_empty(), "nothing unknown in {frame}");
        let encoded = encode(&message);
        assert_eq!(json_of(&encoded), json_of(frame.as_bytes()), "{frame}");
        assert_eq!(decode_server(&encoded).unwrap(), message);
    }
}

#[test]
fn snake_case_client_frames_read_as_camel_case() {
    let snake = br#"{"tool_response":{"function_responses":[{"id":"c1","name":"f","response":{"ok":true},"will_continue":false}]}}"#;
    let camel = br#"{"toolResponse":{"functionResponses":[{"id":"c1","name":"f","response":{"ok":true},"willContinue":false}]}}"#;
    assert_eq!(decode_client(snake).unwrap(), decode_client(camel).unwrap());
    assert_eq!(encode(&decode_client(snake).unwrap()), camel.to_vec());

    let snake =
        br#"{"realtime_input":{"audio":{"mime_type":"audio/pcm;rate=16000","data":"AAAA"}}}"#;
    let message = decode_client(snake).unwrap();
    assert_eq!(message.kind(), Some(ClientMessageKind::RealtimeInput));
    let audio = message.realtime_input.unwrap().audio.unwrap();
    assert_eq!(audio.mime_type.as_deref(), Some("audio/pcm;rate=16000"));
    assert_eq!(audio.bytes().as_ref(), &[0, 0, 0]);

    let snake = br#"{"client_content":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turn_complete":true}}"#;
    let camel = br#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turnComplete":true}}"#;
    assert_eq!(decode_client(snake).unwrap(), decode_client(camel).unwrap());
}

#[test]
fn snake_case_server_frames_read_as_camel_case() {
    let snake = br#"{"server_content":{"model_turn":{"parts":[{"inline_data":{"mime_type":"audio/pcm;rate=24000","data":"AAAA"}}]},"turn_complete":true},"usage_metadata":{"total_token_count":3}}"#;
    let camel = br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]},"turnComplete":true},"usageMetadata":{"totalTokenCount":3}}"#;
    assert_eq!(decode_server(snake).unwrap(), decode_server(camel).unwrap());
}

#[test]
fn unknown_fields_and_part_kinds_are_kept_through_a_round_trip() {
    let frame = json!({
        "serverContent": {
            "modelTurn": {"parts": [
                {"text": "before"},
                {"hologram": {"uri": "holo://1"}, "thoughtSignature": "c2ln"},
                {"text": "after", "futureFlag": 7}
            ], "futureTurnField": [1, 2]},
            "futureContentField": {"x": true},
            "turnComplete": true
        },
        "futureMessage": {"y": "z"}
    });
    let bytes = serde_json::to_vec(&frame).unwrap();
    let message = decode_server(&bytes).unwrap();

    let content = message.server_content.as_ref().unwrap();
    let turn = content.model_turn.as_ref().unwrap();
    let parts = turn.parts();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0].kind(), PartKind::Text("before"));
    match parts[1].kind() {
        PartKind::Unknown(extra) => assert_eq!(extra["hologram"], json!({"uri": "holo://1"})),
        other => panic!("expected an unknown part, got {other:?}"),
    }
    assert_eq!(parts[2].kind(), PartKind::Text("after"));
    assert_eq!(parts[2].extra["futureFlag"], json!(7));
    assert_eq!(turn.extra["futureTurnField"], json!([1, 2]));
    assert_eq!(content.extra["futureContentField"], json!({"x": true}));
    assert_eq!(content.turn_complete, Some(true));
    assert_eq!(message.extra["futureMessage"], json!({"y": "z"}));

    let encoded = encode(&message);
    assert_eq!(json_of(&encoded), frame);
    assert_eq!(decode_server(&encoded).unwrap(), message);
}

#[test]
fn unknown_enum_values_are_kept() {
    let frame = br#"{"serverContent":{"turnComplete":true,"turnCompleteReason":"SOMETHING_NEW"}}"#;
    let message = decode_server(frame).unwrap();
    let reason = message
        .server_content
        .as_ref()
        .unwrap()
        .turn_complete_reason
        .clone();
    assert_eq!(reason.unwrap().as_str(), "SOMETHING_NEW");
    assert_eq!(encode(&message), frame.to_vec());
}

#[test]
fn null_fields_read_as_absent() {
    let message =
        decode_server(br#"{"serverContent":{"modelTurn":null,"turnComplete":true}}"#).unwrap();
    let content = message.server_content.unwrap();
    assert_eq!(content.model_turn, None);
    assert_eq!(content.turn_complete, Some(true));
}

#[test]
fn url_safe_base64_from_the_python_sdk_decodes() {
    let message = decode_client(
        br#"{"realtime_input":{"audio":{"mime_type":"audio/pcm;rate=16000","data":"-_8="}}}"#,
    )
    .unwrap();
    let audio = message.realtime_input.unwrap().audio.unwrap();
    assert_eq!(audio.bytes().as_ref(), &[0xfb, 0xff]);
}

#[test]
fn messages_built_in_code_encode_as_the_reference_says() {
    let message =
        ClientMessage::client_content(vec![reel_protocol::Content::user_text("Hello")], true);
    assert_eq!(
        String::from_utf8(encode(&message)).unwrap(),
        CLIENT_FRAMES[1]
    );
    let message: ServerMessage = decode_server(SERVER_FRAMES[10].as_bytes()).unwrap();
    let time_left = message.go_away.unwrap().time_left.unwrap();
    assert_eq!(time_left.0, std::time::Duration::from_millis(9500));
}
