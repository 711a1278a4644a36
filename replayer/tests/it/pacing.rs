//! Replay pacing: at recorded timing scaled by a speed factor, and gated until release; and
//! the contract "CLEAN at any speed": one recording replays with no divergence and the same
//! events under every pacing.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, Platform, SessionConfig};
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_recorder::wire_log::{MemoryWireRecorder, WireRecorder};
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

fn two_phases() -> PhaseMachine {
    PhaseMachine::builder("greet")
        .phase(
            Phase::new("greet")
                .instruction("Greet the caller.")
                .transition("goodbye", |_| true),
        )
        .phase(Phase::new("goodbye").instruction("Say goodbye.").terminal())
        .build()
        .unwrap()
}

/// A session whose last runtime frame is the terminal phase's instruction, sent on the last
/// `turnComplete`, and which the client ends right after it: every event the live session
/// published, and its recording.
async fn record_instruction_before_the_end() -> (Vec<reel_actors::EventEnvelope>, Vec<WireEntry>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .phases(two_phases())
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>);
    let mut events = builder.subscribe();
    let (handle, mut conn) = replay_support::connect(builder, &mut server, 40).await;
    tokio::time::advance(Duration::from_millis(300)).await;
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "Hello!"}]}}}))
        .await;
    tokio::time::advance(Duration::from_millis(200)).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    // The terminal phase's instruction, then the client's end at once.
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Say goodbye."}]}}})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    (replay_support::drain(&mut events).await, recorder.entries())
}

#[tokio::test(start_paused = true)]
async fn a_recording_replays_clean_at_every_pacing() {
    let (live, entries) = record_instruction_before_the_end().await;
    let pacings = [
        Pacing::Causal,
        Pacing::AsFastAsConsumed,
        Pacing::Recorded { speed: 1.0 },
        Pacing::Recorded { speed: 4.0 },
    ];
    for pacing in pacings {
        let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
            .phases(two_phases());
        let options = ReplayOptions {
            pacing,
            ..ReplayOptions::default()
        };
        let mut replay = replay_session(builder, Tape::from_entries(entries.clone()), options)
            .await
            .unwrap();
        let mut events = replay.events();
        replay.release();
        replay.drained().await;
        let end = replay.disconnect().await;
        let replayed = replay_support::drain(&mut events).await;
        assert_eq!(replay.divergences(), vec![], "{pacing:?}: no divergence");
        assert_eq!(
            end.reason, "closed with code 1000: client disconnect",
            "{pacing:?}"
        );
        for lane in [Lane::Fast, Lane::Control, Lane::Supervisor] {
            assert_eq!(
                replay_support::lane(&replayed, lane),
                replay_support::lane(&live, lane),
                "{pacing:?}: the {lane:?} lane"
            );
        }
        let runtime_frames = replay
            .outbound_frames()
            .into_iter()
            .filter(|f| f.origin == reel_actors::writer::Origin::Runtime)
            .filter(|f| f.identical)
            .count();
        // The setup and the terminal phase's instruction, byte-identical.
        assert_eq!(runtime_frames, 2, "{pacing:?}");
    }
}
