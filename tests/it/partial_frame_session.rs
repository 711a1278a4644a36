//! A server frame with one field of the wrong type, through a whole session: the Router
//! routes every event the rest of the frame carries, then reports the bad field as an
//! error event naming it by JSON path (issue 11, item 6).

use std::sync::Arc;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent, LiveSessionBuilder};
use reel_protocol::{FieldError, Found, SessionConfig, SessionError, SessionEvent};
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn bad_base64_beside_a_transcription_and_a_turn_complete_routes_both_and_one_error() {
    let mut server = ScriptedServer::bind().await;
    let config = SessionConfig::new("gemini-live-2.5-flash");
    let builder = LiveSessionBuilder::new(config, server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(1_718_000_000_000)));
    let mut events = builder.subscribe();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(), script);
    let handle = handle.unwrap();
    conn.send_json(&json!({"serverContent": {
        "modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "!!not base64"}}]},
        "outputTranscription": {"text": "Hello"},
        "turnComplete": true
    }}))
    .await;

    // Wait until the control lane has reported the error, then end the session and read
    // every event left: each lane's protocol events between `connected` and the end.
    let mut seen: Vec<(Lane, SessionEvent)> = Vec::new();
    while let Some(envelope) = events.recv().await {
        if let LiveEvent::Session(event) = envelope.event {
            let reported =
                envelope.lane == Lane::Control && matches!(event, SessionEvent::Error(_));
            seen.push((envelope.lane, event));
            if reported {
                break;
            }
        }
    }
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    while let Some(envelope) = events.recv().await {
        if let LiveEvent::Session(event) = envelope.event {
            seen.push((envelope.lane, event));
        }
    }
    let on = |lane: Lane| -> Vec<SessionEvent> {
        seen.iter()
            .filter(|(l, event)| {
                *l == lane
                    && !matches!(
                        event,
                        SessionEvent::Connected { .. }
                            | SessionEvent::PhaseChanged { .. }
                            | SessionEvent::Disconnected { .. }
                    )
            })
            .map(|(_, event)| event.clone())
            .collect()
    };
    let transcription = |is_final| SessionEvent::OutputTranscription {
        text: "Hello".into(),
        is_final,
    };
    assert_eq!(on(Lane::Fast), [transcription(false), transcription(true)]);
    assert_eq!(
        on(Lane::Control),
        [
            transcription(true),
            SessionEvent::TurnComplete {
                reason: None,
                waiting_for_input: false
            },
            SessionEvent::Error(SessionError::InvalidField {
                seq: 3,
                error: FieldError {
                    path: "serverContent.modelTurn.parts[0].inlineData.data".into(),
                    expected: "base64 text",
                    found: Found::String { chars: 12 },
                },
            }),
        ]
    );
}
