//! Client audio on the chain: a session recorded with client VAD and a jitter buffer
//! replays CLEAN (the activity signals are the application's frames, not re-sent; the
//! setup turns server VAD off both times; the buffer sees the same arrival times), and
//! settings that cannot work are typed build errors.

use crate::support;

use std::time::Duration;

use bytes::Bytes;
use reel_actors::audio::{JitterConfig, JitterConfigError, VadConfig, VadConfigError};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{BuildError, Live, LiveBuilder};
use reel_protocol::{AutomaticActivityDetection, Base64Data};
use serde_json::json;
use support::{accepted, recording, turn_complete, until_turn_complete};

fn assistant() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .client_vad(VadConfig::default())
        .jitter_buffer(JitterConfig::default())
}

/// `ms` of 16 kHz input: a 400 Hz tone, or digital silence.
fn input(ms: usize, loud: bool) -> Vec<u8> {
    (0..ms * 16)
        .flat_map(|i| {
            let phase = i as f64 * 400.0 * std::f64::consts::TAU / 16_000.0;
            let sample = if loud {
                (8_000.0 * phase.sin()) as i16
            } else {
                0
            };
            sample.to_le_bytes()
        })
        .collect()
}

fn model_audio(ms: usize) -> serde_json::Value {
    let pcm = Bytes::from(vec![1u8; ms * 48]);
    json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {
        "mimeType": "audio/pcm;rate=24000", "data": Base64Data(pcm).encode()
    }}]}}})
}

#[tokio::test(start_paused = true)]
async fn a_session_recorded_with_client_vad_and_a_jitter_buffer_replays_clean() {
    let (builder, memory) = recording(assistant());
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup) = accepted(builder, &mut server, Duration::from_millis(40)).await;
    let setup = setup.json().unwrap();
    assert_eq!(
        setup["setup"]["realtimeInputConfig"]["automaticActivityDetection"],
        json!({"disabled": true})
    );

    // The user says something (a tone), then is silent; the model answers once the
    // client's activityEnd arrives.
    let mut spoken = input(200, false);
    spoken.extend(input(400, true));
    spoken.extend(input(1_000, false));
    for chunk in spoken.chunks(3_200) {
        tokio::time::advance(Duration::from_millis(100)).await;
        handle.send_audio(Bytes::copy_from_slice(chunk)).unwrap();
    }
    let mut kinds = Vec::new();
    loop {
        let frame = conn.recv_json().await;
        let input = &frame["realtimeInput"];
        let kind = ["activityStart", "audio", "activityEnd"]
            .into_iter()
            .find(|k| input.get(*k).is_some())
            .unwrap_or("other");
        kinds.push(kind);
        if kind == "activityEnd" {
            break;
        }
    }
    assert_eq!(kinds.first(), Some(&"activityStart"));
    assert_eq!(
        kinds.iter().filter(|k| **k == "audio").count(),
        kinds.len() - 2
    );
    for _ in 0..3 {
        tokio::time::advance(Duration::from_millis(60)).await;
        conn.send_json(&model_audio(100)).await;
    }
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let recorded_jitter = handle.telemetry().jitter.unwrap();
    let recorded_first_response = handle.telemetry().first_response_ms;
    assert_eq!(
        (recorded_jitter.depth_ms, recorded_jitter.target_ms),
        (300, 80)
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed, "{}", end.reason);

    let replayed = assistant().replay(memory.wire.entries()).await.unwrap();
    replayed.drained().await;
    // The buffer heard the same audio at the same (recorded) times, and the model's first
    // answer is measured from the same activityEnd.
    let telemetry = replayed.handle().telemetry();
    assert_eq!(telemetry.jitter, Some(recorded_jitter));
    assert_eq!(telemetry.first_response_ms, recorded_first_response);
    assert_eq!(telemetry.first_response_ms.count, 1);
    let recorded_journal = memory.journal.entries();
    assert!(!recorded_journal.is_empty());
    let outcome = replayed
        .finish()
        .await
        .with_recorded_journal(recorded_journal);
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert_eq!(
        outcome.verdict().to_string(),
        "CLEAN — the replay reproduced the session exactly."
    );
}

#[test]
fn client_audio_settings_that_cannot_work_are_build_errors() {
    let jitter = JitterConfig {
        min_target_ms: 500,
        ..JitterConfig::default()
    };
    let error = Live::builder()
        .jitter_buffer(jitter)
        .validate()
        .unwrap_err();
    assert!(matches!(
        error,
        BuildError::Jitter(JitterConfigError::MinAboveMax {
            min_ms: 500,
            max_ms: 400
        })
    ));
    assert_eq!(
        error.to_string(),
        "`.jitter_buffer(..)`: the jitter buffer's min target (500 ms) is above its max \
         target (400 ms)"
    );
    let zero_frame = JitterConfig {
        frame_ms: 0,
        ..JitterConfig::default()
    };
    assert!(matches!(
        Live::builder().jitter_buffer(zero_frame).validate(),
        Err(BuildError::Jitter(JitterConfigError::ZeroFrame))
    ));

    let vad = VadConfig {
        frame_ms: 50,
        ..VadConfig::default()
    };
    assert!(matches!(
        Live::builder().client_vad(vad).validate(),
        Err(BuildError::ClientVad(VadConfigError::FrameOutOfRange {
            frame_ms: 50
        }))
    ));

    // A later `.vad(..)` that turns the server's detection back on contradicts client VAD…
    let error = Live::builder()
        .client_vad(VadConfig::default())
        .vad(AutomaticActivityDetection::default())
        .validate()
        .unwrap_err();
    assert!(matches!(error, BuildError::ClientVadWithServerVad));
    // …while one before it is overridden: the setup says disabled.
    let config = Live::builder()
        .vad(AutomaticActivityDetection {
            silence_duration_ms: Some(800),
            ..Default::default()
        })
        .client_vad(VadConfig::default())
        .session_config()
        .unwrap();
    assert!(!config.server_vad());
}
