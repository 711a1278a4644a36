//! Issue 25 §2: a replay whose log lacks the frames that provoke a runtime frame (three
//! `toolCall` lines deleted from the bundled phases tape) reports each of their tool
//! responses missing at once, instead of waiting the produce timeout (10 s) for each.
//!
//! Time is tokio's paused clock: a wait for a frame that never comes moves it forward by
//! the whole wait, so the replay's virtual duration says how long it waited, whatever the
//! machine's load.

use std::time::Duration;

use reel_recorder::wire_log::{Direction, WireEntry};
use reel_replayer::offline::{OfflineSinks, replay_offline};
use reel_replayer::recorded_tools::RecordedToolResponses;
use reel_replayer::{DivergenceKind, Tape};

/// The bundled tape of a session with three tool calls.
fn phases_tape() -> Vec<WireEntry> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../assets/tapes/phases.wire.jsonl"
    );
    reel_recorder::read_wire_log(path).unwrap()
}

fn mentions(entry: &WireEntry, key: &str) -> bool {
    String::from_utf8_lossy(&entry.payload).contains(key)
}

/// Replays `entries` offline; the replay and its virtual duration.
async fn replay(entries: Vec<WireEntry>) -> (reel_replayer::offline::OfflineReplay, Duration) {
    let mut stats = reel_replayer::log_stats::LogStats::new();
    let mut answers = RecordedToolResponses::new();
    for entry in &entries {
        stats.observe(entry);
        answers.observe(entry);
    }
    let setup = stats.setup.unwrap();
    let started = tokio::time::Instant::now();
    let replay = replay_offline(
        Tape::from_entries(entries),
        setup,
        answers.into_control_callbacks(),
        OfflineSinks::default(),
    )
    .await
    .unwrap();
    (replay, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn tool_responses_to_deleted_tool_calls_are_reported_missing_at_once() {
    let whole = phases_tape();
    let responses: Vec<u64> = whole
        .iter()
        .filter(|e| e.dir == Direction::Out && mentions(e, "toolResponse"))
        .map(|e| e.seq)
        .collect();
    assert_eq!(responses.len(), 3, "the tape has three tool calls");

    // The whole tape replays clean, without waiting.
    let (clean, waited) = replay(whole.clone()).await;
    assert_eq!(clean.divergences, vec![]);
    assert!(waited < Duration::from_secs(1), "waited {waited:?}");

    let cut: Vec<WireEntry> = whole
        .into_iter()
        .filter(|e| !(e.dir == Direction::In && mentions(e, "\"toolCall\"")))
        .collect();
    let (replay, waited) = replay(cut).await;
    let missing: Vec<(u64, &DivergenceKind)> = replay
        .divergences
        .iter()
        .map(|d| (d.seq, &d.kind))
        .collect();
    assert_eq!(
        missing,
        responses
            .iter()
            .map(|seq| (*seq, &DivergenceKind::Missing))
            .collect::<Vec<_>>()
    );
    // Before: 10 s of waiting per response, 30 s in all.
    assert!(waited < Duration::from_secs(1), "waited {waited:?}");
}
