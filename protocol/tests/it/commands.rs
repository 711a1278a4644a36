//! Commands become the exact frames the protocol reference shows.

use bytes::Bytes;
use reel_protocol::{
    CommandEncoder, Content, FunctionResponse, Platform, Scheduling, SessionCommand, decode_client,
    encode, encode_audio_input,
};
use serde_json::json;

fn frame(encoder: &CommandEncoder, command: SessionCommand) -> Option<String> {
    encoder
        .encode(&command)
        .map(|bytes| String::from_utf8(bytes).unwrap())
}

#[test]
fn each_command_encodes_to_its_frame() {
    let encoder = CommandEncoder::default();
    let cases = [
        (
            SessionCommand::SendAudio(Bytes::from_static(&[0, 0, 1, 0, 2, 0])),
            r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAABAAIA"}}}"#,
        ),
        (
            SessionCommand::SendVideo(Bytes::from_static(&[0xff, 0xd8, 0xff, 0xe0])),
            r#"{"realtimeInput":{"video":{"mimeType":"image/jpeg","data":"/9j/4A=="}}}"#,
        ),
        (
            SessionCommand::SendRealtimeText("typed input".into()),
            r#"{"realtimeInput":{"text":"typed input"}}"#,
        ),
        (
            SessionCommand::AudioStreamEnd,
            r#"{"realtimeInput":{"audioStreamEnd":true}}"#,
        ),
        (
            SessionCommand::SendText("Hello".into()),
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#,
        ),
        (
            SessionCommand::SendClientContent {
                turns: vec![Content::model_text("Context: user is in London")],
                turn_complete: false,
            },
            r#"{"clientContent":{"turns":[{"role":"model","parts":[{"text":"Context: user is in London"}]}],"turnComplete":false}}"#,
        ),
        (
            SessionCommand::UpdateInstruction("Be brief.".into()),
            r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Be brief."}]}}}"#,
        ),
        (
            SessionCommand::SendToolResponse(vec![FunctionResponse {
                scheduling: Some(Scheduling::WhenIdle),
                ..FunctionResponse::new("call-1", "get_weather", json!({"temp_c": 21}))
            }]),
            r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"temp_c":21},"scheduling":"WHEN_IDLE"}]}}"#,
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(
            frame(&encoder, command.clone()).as_deref(),
            Some(expected),
            "{command:?}"
        );
    }
    assert_eq!(frame(&encoder, SessionCommand::Disconnect), None);
}

#[test]
fn activity_signals_are_sent_only_with_server_vad_off() {
    let server_vad = CommandEncoder::default();
    assert_eq!(frame(&server_vad, SessionCommand::ActivityStart), None);
    assert_eq!(frame(&server_vad, SessionCommand::ActivityEnd), None);
    let manual = CommandEncoder {
        automatic_activity_detection: false,
        ..CommandEncoder::default()
    };
    assert_eq!(
        frame(&manual, SessionCommand::ActivityStart).as_deref(),
        Some(r#"{"realtimeInput":{"activityStart":{}}}"#)
    );
    assert_eq!(
        frame(&manual, SessionCommand::ActivityEnd).as_deref(),
        Some(r#"{"realtimeInput":{"activityEnd":{}}}"#)
    );
}

#[test]
fn vertex_drops_response_scheduling() {
    let vertex = CommandEncoder {
        platform: Platform::Vertex {
            project: "p".into(),
            location: "us-central1".into(),
        },
        ..CommandEncoder::default()
    };
    let response = FunctionResponse {
        scheduling: Some(Scheduling::Interrupt),
        ..FunctionResponse::new("c", "f", json!({}))
    };
    assert_eq!(
        frame(&vertex, SessionCommand::SendToolResponse(vec![response])).as_deref(),
        Some(r#"{"toolResponse":{"functionResponses":[{"id":"c","name":"f","response":{}}]}}"#)
    );
}

#[test]
fn the_audio_fast_path_writes_the_same_bytes_as_the_general_path() {
    let encoder = CommandEncoder::default();
    for len in [0usize, 1, 2, 3, 4, 5, 3200, 3201, 3202] {
        let pcm: Vec<u8> = (0..len).map(|i| (i * 7 % 256) as u8).collect();
        let command = SessionCommand::SendAudio(Bytes::from(pcm.clone()));
        let general = encode(&encoder.to_message(&command).unwrap());
        assert_eq!(encode_audio_input(&pcm), general, "len {len}");
        let decoded = decode_client(&general).unwrap();
        assert_eq!(decoded.realtime_input.unwrap().audio.unwrap().bytes(), pcm);
    }
}
