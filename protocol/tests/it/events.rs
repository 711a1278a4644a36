//! Frames become exact event sequences, in the documented order.

use std::time::Duration;

use bytes::Bytes;
use reel_protocol::{
    EventDecoder, FunctionCall, ResumeInfo, SessionEvent, TurnCompleteReason, UsageMetadata,
    decode_server, events_from_frame,
};
use serde_json::json;

fn decode_all(frames: &[&str]) -> Vec<SessionEvent> {
    let mut decoder = EventDecoder::new();
    let mut events = Vec::new();
    for frame in frames {
        decoder.decode(decode_server(frame.as_bytes()).unwrap(), &mut events);
    }
    events
}

fn turn_complete() -> SessionEvent {
    SessionEvent::TurnComplete {
        reason: None,
        waiting_for_input: false,
    }
}

#[test]
fn one_frame_with_interrupted_transcription_and_usage_yields_all_three() {
    let events = decode_all(&[
        r#"{"serverContent":{"interrupted":true,"outputTranscription":{"text":"Hi th"}},"usageMetadata":{"totalTokenCount":15}}"#,
    ]);
    assert_eq!(
        events,
        vec![
            SessionEvent::Interrupted,
            SessionEvent::OutputTranscription {
                text: "Hi th".into(),
                is_final: false
            },
            SessionEvent::Usage(Box::new(UsageMetadata {
                total_token_count: Some(15),
                ..UsageMetadata::default()
            })),
        ]
    );
}

#[test]
fn a_text_turn_gives_deltas_then_the_whole_text_then_turn_complete() {
    let events = decode_all(&[
        r#"{"setupComplete":{}}"#,
        r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello"}]}}}"#,
        r#"{"serverContent":{"modelTurn":{"parts":[{"text":" there!"}]}}}"#,
        r#"{"serverContent":{"generationComplete":true}}"#,
        r#"{"serverContent":{"turnComplete":true}}"#,
    ]);
    assert_eq!(
        events,
        vec![
            SessionEvent::Connected { session_id: None },
            SessionEvent::TextDelta("Hello".into()),
            SessionEvent::TextDelta(" there!".into()),
            SessionEvent::GenerationComplete,
            SessionEvent::TextComplete("Hello there!".into()),
            turn_complete(),
        ]
    );
}

#[test]
fn transcriptions_are_partial_then_final_once_per_turn() {
    let events = decode_all(&[
        r#"{"serverContent":{"inputTranscription":{"text":"What's the"}}}"#,
        r#"{"serverContent":{"inputTranscription":{"text":" weather?","finished":true}}}"#,
        r#"{"serverContent":{"outputTranscription":{"text":"It is"}}}"#,
        r#"{"serverContent":{"outputTranscription":{"text":" sunny."}}}"#,
        r#"{"serverContent":{"turnComplete":true,"turnCompleteReason":"NEED_MORE_INPUT","waitingForInput":true}}"#,
    ]);
    let input = |text: &str, is_final| SessionEvent::InputTranscription {
        text: text.into(),
        is_final,
    };
    let output = |text: &str, is_final| SessionEvent::OutputTranscription {
        text: text.into(),
        is_final,
    };
    assert_eq!(
        events,
        vec![
            input("What's the", false),
            input(" weather?", false),
            input("What's the weather?", true),
            output("It is", false),
            output(" sunny.", false),
            output("It is sunny.", true),
            SessionEvent::TurnComplete {
                reason: Some(TurnCompleteReason::NeedMoreInput),
                waiting_for_input: true
            },
        ]
    );
}

#[test]
fn an_interruption_drops_the_unfinished_answer_without_a_final() {
    let events = decode_all(&[
        r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Let me tell you"}]},"outputTranscription":{"text":"Let me"}}}"#,
        r#"{"serverContent":{"interrupted":true}}"#,
        r#"{"serverContent":{"turnComplete":true}}"#,
    ]);
    assert_eq!(
        events,
        vec![
            SessionEvent::TextDelta("Let me tell you".into()),
            SessionEvent::OutputTranscription {
                text: "Let me".into(),
                is_final: false
            },
            SessionEvent::Interrupted,
            turn_complete(),
        ]
    );
}

#[test]
fn audio_thoughts_media_and_unknown_parts_keep_their_order() {
    let events = decode_all(&[concat!(
        r#"{"serverContent":{"modelTurn":{"parts":["#,
        r#"{"text":"pondering","thought":true},"#,
        r#"{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AQIDBA=="}},"#,
        r#"{"inlineData":{"mimeType":"image/png","data":"iVBO"}},"#,
        r#"{"hologram":{"id":1}},"#,
        r#"{"executableCode":{"language":"PYTHON","code":"print(1)"}},"#,
        r#"{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1"}}"#,
        r#"]},"groundingMetadata":{"webSearchQueries":["q"]},"futureField":1}}"#
    )]);
    let kinds: Vec<&str> = events.iter().map(SessionEvent::kind).collect();
    assert_eq!(
        kinds,
        [
            "thought",
            "audio",
            "media",
            "unrecognized",
            "executable_code",
            "code_execution_result",
            "grounding",
            "unrecognized"
        ]
    );
    assert_eq!(events[0], SessionEvent::Thought("pondering".into()));
    assert_eq!(
        events[1],
        SessionEvent::AudioData(Bytes::from_static(&[1, 2, 3, 4]))
    );
    assert_eq!(
        events[2],
        SessionEvent::Media {
            mime_type: "image/png".into(),
            data: Bytes::from_static(&[0x89, 0x50, 0x4e])
        }
    );
    assert_eq!(
        events[3],
        SessionEvent::Unrecognized {
            path: "serverContent.modelTurn.parts[3]".into(),
            value: Box::new(json!({"hologram": {"id": 1}}))
        }
    );
    assert_eq!(
        events[6],
        SessionEvent::Grounding(json!({"webSearchQueries": ["q"]}))
    );
    assert_eq!(
        events[7],
        SessionEvent::Unrecognized {
            path: "serverContent.futureField".into(),
            value: Box::new(json!(1))
        }
    );
}

#[test]
fn every_top_level_message_becomes_an_event_in_order() {
    let frame = r#"{"usageMetadata":{"promptTokenCount":1},"goAway":{"timeLeft":"9.5s"},
        "sessionResumptionUpdate":{"newHandle":"h-2","resumable":true,"lastConsumedClientMessageIndex":"42"},
        "toolCall":{"functionCalls":[{"id":"call-1","name":"get_weather","args":{"city":"London"}}]},
        "toolCallCancellation":{"ids":["call-0"]},
        "voiceActivity":{"voiceActivityType":"ACTIVITY_START"},
        "setupComplete":{"sessionId":"s-1"},
        "zzzNew":true}"#;
    let events = events_from_frame(decode_server(frame.as_bytes()).unwrap());
    assert_eq!(
        events,
        vec![
            SessionEvent::Connected {
                session_id: Some("s-1".into())
            },
            SessionEvent::VoiceActivityStart,
            SessionEvent::ToolCallCancelled(vec!["call-0".into()]),
            SessionEvent::ToolCall(vec![FunctionCall {
                id: Some("call-1".into()),
                name: Some("get_weather".into()),
                args: Some(json!({"city": "London"}).into()),
                ..FunctionCall::default()
            }]),
            SessionEvent::SessionResumeUpdate(ResumeInfo {
                handle: Some("h-2".into()),
                resumable: true,
                last_consumed_index: Some(42)
            }),
            SessionEvent::GoAway {
                time_left: Some(Duration::from_millis(9500))
            },
            SessionEvent::Usage(Box::new(UsageMetadata {
                prompt_token_count: Some(1),
                ..UsageMetadata::default()
            })),
            SessionEvent::Unrecognized {
                path: "zzzNew".into(),
                value: Box::new(json!(true))
            },
        ]
    );
}

#[test]
fn explicit_vad_signals_become_voice_activity_events() {
    let events = decode_all(&[
        r#"{"voiceActivityDetectionSignal":{"vadSignalType":"VAD_SIGNAL_TYPE_SOS"}}"#,
        r#"{"voiceActivity":{"voiceActivityType":"ACTIVITY_END"}}"#,
    ]);
    assert_eq!(
        events,
        vec![
            SessionEvent::VoiceActivityStart,
            SessionEvent::VoiceActivityEnd
        ]
    );
}

#[test]
fn audio_bytes_are_moved_not_copied() {
    let message = decode_server(
        br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AQIDBA=="}}]}}}"#,
    )
    .unwrap();
    let parts = message
        .server_content
        .as_ref()
        .unwrap()
        .model_turn
        .as_ref()
        .unwrap()
        .parts();
    let decoded_ptr = parts[0]
        .inline_data
        .as_ref()
        .unwrap()
        .data
        .as_ref()
        .unwrap()
        .0
        .as_ptr();
    let events = events_from_frame(message);
    match &events[0] {
        SessionEvent::AudioData(bytes) => assert_eq!(bytes.as_ptr(), decoded_ptr),
        other => panic!("expected audio, got {other:?}"),
    }
}
