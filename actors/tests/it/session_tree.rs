//! The whole session tree against a scripted Live server on a real loopback WebSocket,
//! under paused tokio time: exact frames on the wire, exact event sequences per lane.

use crate::support;

use std::sync::Arc;

use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_protocol::{SessionConfig, SessionEvent, SessionPhase};
use serde_json::json;
use support::{audio_frame, kinds, settle, start};

#[tokio::test(start_paused = true)]
async fn setup_handshake_and_a_text_turn() {
    let mut server = ScriptedServer::bind().await;
    let config = SessionConfig::new("gemini-live-2.5-flash-native-audio")
        .text_only()
        .system_instruction("You are terse.");
    let (handle, mut conn, setup, mut events) = start(&mut server, |b| b, config).await;

    assert_eq!(
        setup,
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-native-audio",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "systemInstruction": {"parts": [{"text": "You are terse."}]}
        }})
    );
    assert_eq!(
        conn.query_param("key"),
        Some(reel_actors::testing::SCRIPTED_API_KEY)
    );
    assert_eq!(handle.phase(), SessionPhase::Active);

    handle.send_text("Hello").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Hello"}]}], "turnComplete": true}})
    );
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "Hi"}]}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": " there."}]}}}))
        .await;
    conn.send_json(
        &json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 9}}),
    )
    .await;

    let seen = settle(&mut events).await;
    assert_eq!(
        kinds(&seen, Lane::Fast),
        [
            "phase_changed", // Disconnected -> Connecting
            "phase_changed", // -> SetupSent
            "phase_changed", // -> Active
            "text",
            "phase_changed", // -> ModelSpeaking
            "text",
            "text_complete",
            "phase_changed", // -> Active
        ]
    );
    assert_eq!(
        kinds(&seen, Lane::Control),
        [
            "phase_changed",
            "phase_changed",
            "connected",
            "phase_changed",
            "user_text", // the application's text, as it went out
            "phase_changed",
            "usage", // the turn's usage comes before its end
            "text_complete",
            "turn_complete",
            "phase_changed",
        ]
    );
    let texts: Vec<&str> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::Session(SessionEvent::TextDelta(t) | SessionEvent::TextComplete(t))
                if e.lane == Lane::Fast =>
            {
                Some(t.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Hi", " there.", "Hi there."]);

    let (end, closed) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(closed, Some((1000, "client disconnect".to_owned())));
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert!(!end.failed);
    assert_eq!(handle.telemetry().turns, 1);
    assert_eq!(handle.telemetry().tokens.total, 9);
}

#[tokio::test(start_paused = true)]
async fn audio_flows_in_and_out() {
    let mut server = ScriptedServer::bind().await;
    let heard = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let sink = Arc::clone(&heard);
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| {
            b.fast_callbacks(reel_actors::callbacks::FastCallbacks {
                on_audio: Some(Arc::new(move |pcm| {
                    sink.lock().unwrap().extend_from_slice(pcm)
                })),
                ..Default::default()
            })
        },
        SessionConfig::default(),
    )
    .await;

    handle.send_audio(vec![1u8, 0, 2, 0]).unwrap();
    handle.audio_stream_end().unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000", "data": "AQACAA=="}}})
    );
    assert_eq!(
        conn.recv_json().await,
        json!({"realtimeInput": {"audioStreamEnd": true}})
    );

    conn.send_json(&audio_frame(&[10, 0, 11, 0])).await;
    conn.send_json(&audio_frame(&[12, 0])).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let seen = settle(&mut events).await;
    assert_eq!(*heard.lock().unwrap(), [10, 0, 11, 0, 12, 0]);
    assert_eq!(
        kinds(&seen, Lane::Fast)
            .into_iter()
            .filter(|k| *k != "phase_changed")
            .collect::<Vec<_>>(),
        ["audio", "audio"]
    );
    let telemetry = handle.telemetry();
    assert_eq!(telemetry.audio_chunks_in, 2);
    assert_eq!(telemetry.audio_chunks_out, 1);
    assert_eq!(telemetry.first_response_ms.count, 1);
}

#[tokio::test(start_paused = true)]
async fn an_interruption_drops_audio_queued_for_playback() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.playback_buffer(100),
        SessionConfig::default(),
    )
    .await;
    for i in 0..3u8 {
        conn.send_json(&audio_frame(&[i, 0])).await;
    }
    settle(&mut events).await;
    let playback = handle.playback().unwrap();
    assert_eq!(playback.len(), 3);
    assert_eq!(playback.pop().unwrap().as_ref(), &[0, 0]);

    conn.send_json(&json!({"serverContent": {"interrupted": true}}))
        .await;
    let seen = settle(&mut events).await;
    assert_eq!(playback.len(), 0, "queued audio is dropped");
    assert_eq!(playback.dropped_by_interruption(), 2);
    assert_eq!(kinds(&seen, Lane::Fast), ["interrupted", "phase_changed"]);
    assert_eq!(
        kinds(&seen, Lane::Control),
        ["interrupted", "phase_changed"]
    );
    assert_eq!(handle.telemetry().interruptions, 1);

    // Audio after the interruption plays again.
    conn.send_json(&audio_frame(&[9, 0])).await;
    settle(&mut events).await;
    assert_eq!(playback.pop().unwrap().as_ref(), &[9, 0]);
}

#[tokio::test(start_paused = true)]
async fn a_server_close_code_reaches_the_application() {
    let mut server = ScriptedServer::bind().await;
    let reasons = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&reasons);
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| {
            b.control_callbacks(reel_actors::callbacks::ControlCallbacks {
                on_disconnected: Some(reel_actors::callbacks::AsyncCallback::new(
                    reel_actors::callbacks::CallbackMode::Blocking,
                    move |reason: Option<String>| {
                        let sink = Arc::clone(&sink);
                        async move { sink.lock().unwrap().push(reason) }
                    },
                )),
                ..Default::default()
            })
        },
        SessionConfig::default(),
    )
    .await;
    conn.close(1008, "policy violation: quota").await;
    let end = handle.join().await;
    assert_eq!(end.reason, "closed with code 1008: policy violation: quota");
    assert!(!end.failed);
    let seen = settle(&mut events).await;
    let disconnected: Vec<&SessionEvent> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::Session(event @ SessionEvent::Disconnected { .. }) => Some(event),
            _ => None,
        })
        .collect();
    assert_eq!(
        disconnected,
        [&SessionEvent::Disconnected {
            code: Some(1008),
            reason: Some("policy violation: quota".into())
        }]
    );
    assert_eq!(
        *reasons.lock().unwrap(),
        [Some("policy violation: quota".to_owned())]
    );
    assert_eq!(seen.last().unwrap().event.kind(), "session_ended");
    assert_eq!(handle.phase(), SessionPhase::Disconnected);
}
