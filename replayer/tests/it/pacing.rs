//! Replay pacing: at recorded timing scaled by a speed factor, and gated until release.

use std::time::Duration;

use reel_actors::LiveSessionBuilder;
use reel_protocol::{ApiEndpoint, Platform, SessionConfig};
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_replayer::{Pacing, ReplayOptions, Tape, replay_session};
use serde_json::json;

const T0: u64 = 1_718_000_000_000;

fn tape() -> Vec<WireEntry> {
    let setup = SessionConfig::default().setup_frame(&Platform::GoogleAi);
    let text = |t: &str| {
        serde_json::to_vec(&json!({"serverContent": {"modelTurn": {"parts": [{"text": t}]}}}))
            .unwrap()
    };
    vec![
        WireEntry::frame(1, Direction::Out, T0, setup, None, false),
        WireEntry::frame(
            2,
            Direction::In,
            T0 + 100,
            br#"{"setupComplete":{}}"#.to_vec(),
            None,
            false,
        ),
        WireEntry::frame(3, Direction::In, T0 + 1_100, text("one"), None, false),
        WireEntry::frame(4, Direction::In, T0 + 5_100, text("two"), None, false),
        WireEntry::close_mark(
            5,
            T0 + 5_100,
            None,
            CloseMark {
                code: Some(1000),
                reason: Some("bye".into()),
                client: false,
            },
        ),
    ]
}

#[tokio::test(start_paused = true)]
async fn recorded_pacing_follows_the_recorded_gaps_scaled_by_speed() {
    let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline());
    let options = ReplayOptions {
        pacing: Pacing::Recorded { speed: 2.0 },
        ..ReplayOptions::default()
    };
    let replay = replay_session(builder, Tape::from_entries(tape()), options)
        .await
        .unwrap();
    // Gated: nothing but the handshake flows until release.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(replay.handle().telemetry().frames_in, 1);
    let released = tokio::time::Instant::now();
    replay.release();
    replay.drained().await;
    // 1.0 s then 4.0 s of recorded gaps, at twice the speed.
    assert_eq!(released.elapsed(), Duration::from_millis(2_500));
    assert_eq!(replay.handle().telemetry().frames_in, 3);
    let end = replay.disconnect().await;
    assert_eq!(end.reason, "closed with code 1000: bye");
    assert!(replay.divergences().is_empty());
}
