//! Client audio in a whole session over a loopback WebSocket: the jitter buffer filled by
//! the model's audio and cleared when the user barges in (with its figures in telemetry),
//! and client VAD framing the application's audio with `activityStart` / `activityEnd`
//! while the setup turns the server's detection off.

use crate::support;

use std::time::Duration;

use bytes::Bytes;
use reel_actors::audio::{JitterConfig, JitterStats, Pulled, SilenceReason, VadConfig};
use reel_actors::testing::ScriptedServer;
use reel_actors::{EventStream, Lane};
use reel_protocol::{Base64Data, SessionConfig};
use serde_json::{Value, json};
use support::{audio_frame, settle, start};

/// 100 ms of 24 kHz model audio whose every sample is `tag`.
fn model_chunk(tag: u16) -> Vec<u8> {
    tag.to_le_bytes().repeat(2_400)
}

fn tags(pcm: &[u8]) -> Vec<u16> {
    let mut tags: Vec<u16> = pcm
        .chunks_exact(2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .collect();
    tags.dedup();
    tags
}

/// Waits until the fast lane has handled an event of `kind` (it publishes each event
/// after its work on it: the buffer has been pushed or cleared by then).
async fn fast_lane_handled(events: &mut EventStream, kind: &str) {
    let mut seen = Vec::new();
    let wait = async {
        while let Some(event) = events.recv().await {
            if event.lane == Lane::Fast && event.event.kind() == kind {
                return true;
            }
            seen.push((event.lane, event.event.kind()));
        }
        false
    };
    let found = tokio::time::timeout(Duration::from_secs(5), wait).await;
    assert_eq!(
        found,
        Ok(true),
        "the fast lane did not handle `{kind}`; seen {seen:?}"
    );
}

fn pull_tags(pulled: Pulled) -> Vec<u16> {
    match pulled {
        Pulled::Audio(pcm) => tags(&pcm),
        other => panic!("expected audio, got {other:?}"),
    }
}

/// The model talks in 100 ms chunks, one every 100 ms; the player pulls 20 ms frames
/// more slowly, so audio piles up. The user barges in while the fifth chunk is still
/// waiting: the buffer is emptied at once, nothing said before is played, the next turn
/// plays from its first frame, and telemetry (and the old playback queue) show it all.
#[tokio::test(start_paused = true)]
async fn a_barge_in_empties_the_jitter_buffer_and_telemetry_shows_it() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.jitter_buffer(JitterConfig::default()).playback_buffer(64),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    let player = handle
        .jitter_buffer()
        .expect("built with a jitter buffer")
        .clone();
    assert_eq!(player.pull(), Pulled::Silence(SilenceReason::Idle));

    for tag in 1..=5u16 {
        tokio::time::advance(Duration::from_millis(100)).await;
        conn.send_json(&audio_frame(&model_chunk(tag))).await;
        fast_lane_handled(&mut events, "audio").await;
        if tag < 5 {
            // Three 20 ms frames per 100 ms chunk: the buffer deepens by 40 ms a chunk.
            for _ in 0..3 {
                let _ = pull_tags(player.pull());
            }
        }
    }
    let before = handle.telemetry().jitter.unwrap();
    assert_eq!(
        before,
        JitterStats {
            depth_ms: 260,
            target_ms: 80,
            jitter_ms: 46,
            underruns: 0,
            overflow_dropped_ms: 0,
            interrupted_dropped_ms: 0,
            frames_played: 12,
            playing: true,
        }
    );
    assert_eq!(handle.playback().unwrap().len(), 5);

    // The user speaks over the model; the server cuts the model's turn.
    handle.send_audio(Bytes::from(vec![0u8; 640])).unwrap();
    conn.recv_json().await;
    conn.send_json(&json!({"serverContent": {"interrupted": true}}))
        .await;
    fast_lane_handled(&mut events, "interrupted").await;
    let after = handle.telemetry().jitter.unwrap();
    assert_eq!(
        (after.depth_ms, after.interrupted_dropped_ms, after.playing),
        (0, 260, false)
    );
    assert_eq!(player.pull(), Pulled::Silence(SilenceReason::Idle));
    assert!(handle.playback().unwrap().is_empty());
    assert_eq!(handle.playback().unwrap().dropped_by_interruption(), 5);

    // The model's answer to the interruption plays from its first frame, and its end is
    // not an underrun.
    tokio::time::advance(Duration::from_millis(300)).await;
    conn.send_json(&audio_frame(&model_chunk(99))).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    // The fast lane never sees `turnComplete`, only the phase changes: to model speaking
    // with the audio, and out of it with the turn's end.
    fast_lane_handled(&mut events, "audio").await;
    fast_lane_handled(&mut events, "phase_changed").await;
    fast_lane_handled(&mut events, "phase_changed").await;
    for _ in 0..5 {
        assert_eq!(pull_tags(player.pull()), [99]);
    }
    assert_eq!(player.pull(), Pulled::Silence(SilenceReason::Idle));
    settle(&mut events).await;
    let telemetry = handle.telemetry();
    assert_eq!(telemetry.interruptions, 1);
    let jitter = telemetry.jitter.unwrap();
    assert_eq!(
        (jitter.frames_played, jitter.underruns, jitter.depth_ms),
        (17, 0, 0)
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed, "{}", end.reason);
}

/// What one client frame is, for comparing a whole conversation at once.
#[derive(PartialEq)]
enum Sent {
    ActivityStart,
    Audio(Vec<u8>),
    ActivityEnd,
    Other(Value),
}

impl std::fmt::Debug for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sent::ActivityStart => f.write_str("ActivityStart"),
            Sent::ActivityEnd => f.write_str("ActivityEnd"),
            // The length and a checksum: the bytes themselves are too many to read.
            Sent::Audio(pcm) => {
                let fnv = pcm.iter().fold(0x811c_9dc5u32, |hash, byte| {
                    (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
                });
                write!(f, "Audio({} bytes, fnv {fnv:08x})", pcm.len())
            }
            Sent::Other(value) => write!(f, "Other({value})"),
        }
    }
}

fn sent(frame: Value) -> Sent {
    let input = &frame["realtimeInput"];
    if input.get("activityStart").is_some() {
        Sent::ActivityStart
    } else if input.get("activityEnd").is_some() {
        Sent::ActivityEnd
    } else if let Some(audio) = input.get("audio") {
        assert_eq!(audio["mimeType"], "audio/pcm;rate=16000");
        let data = Base64Data::decode(audio["data"].as_str().unwrap()).unwrap();
        Sent::Audio(data.0.to_vec())
    } else {
        Sent::Other(frame)
    }
}

/// `ms` of 16 kHz input: a loud 400 Hz tone, or digital silence.
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

/// With client VAD the setup turns the server's detection off, and the application's
/// audio reaches the server as `activityStart`, the speech with its pre-roll, the
/// hangover, `activityEnd` — in that order, and nothing outside speech.
#[tokio::test(start_paused = true)]
async fn client_vad_sends_activity_start_audio_and_activity_end_with_server_vad_off() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup, mut events) = start(
        &mut server,
        |b| b.client_vad(VadConfig::default()),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    assert_eq!(
        setup["setup"]["realtimeInputConfig"]["automaticActivityDetection"],
        json!({"disabled": true})
    );
    assert_eq!(handle.user_speaking(), Some(false));

    // 200 ms of silence, 400 ms of speech, 1 s of silence, in 100 ms chunks as a
    // microphone would deliver them.
    let mut spoken = Vec::new();
    for (ms, loud) in [(200, false), (400, true), (1_000, false)] {
        spoken.extend(input(ms, loud));
    }
    for (index, chunk) in spoken.chunks(3_200).enumerate() {
        handle.send_audio(Bytes::copy_from_slice(chunk)).unwrap();
        if index == 3 {
            assert_eq!(handle.user_speaking(), Some(true));
        }
    }
    assert_eq!(handle.user_speaking(), Some(false));
    let (end, frames) = tokio::join!(handle.disconnect(), async {
        let mut frames = Vec::new();
        while let Some(frame) = conn.recv().await {
            frames.push(sent(frame.json().unwrap()));
        }
        frames
    });
    assert!(!end.failed, "{}", end.reason);

    // The start fires on the third loud 20 ms frame (a 60 ms onset), in chunk 2; the
    // pre-roll (300 ms) still holds everything before it, so the first message starts at
    // the very beginning. The end fires 30 frames (a 600 ms hangover) after the last frame
    // that read as speech, which is the first silent one: the speech-band filter's ring-down
    // after the tone is still above digital silence. That is frame 60, the first of chunk
    // 12; the 380 ms of silence after it are not sent.
    let chunk = |from: usize, to: usize| spoken[from * 3_200..to * 3_200].to_vec();
    let first_frame_of_12 = spoken[12 * 3_200..12 * 3_200 + 640].to_vec();
    assert_eq!(
        frames,
        [
            Sent::ActivityStart,
            Sent::Audio(chunk(0, 3)),
            Sent::Audio(chunk(3, 4)),
            Sent::Audio(chunk(4, 5)),
            Sent::Audio(chunk(5, 6)),
            Sent::Audio(chunk(6, 7)),
            Sent::Audio(chunk(7, 8)),
            Sent::Audio(chunk(8, 9)),
            Sent::Audio(chunk(9, 10)),
            Sent::Audio(chunk(10, 11)),
            Sent::Audio(chunk(11, 12)),
            Sent::Audio(first_frame_of_12),
            Sent::ActivityEnd,
        ]
    );
}
