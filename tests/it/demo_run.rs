//! `reel demo`'s job end to end, as a library: the assistant's session against the bundled
//! tape over loopback, recorded to files, then replayed offline CLEAN.

use reel::demo::run::{record_against_bundled_tape, replay_recording};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_session_records_and_replays_clean() {
    let dir = std::env::temp_dir().join(format!("reel-demo-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let recording = record_against_bundled_tape(&dir, "weather-test", None)
        .await
        .unwrap();
    assert!(recording.wire.ends_with("weather-test.wire.jsonl"));

    let outcome = replay_recording(&recording).await.unwrap();
    assert!(
        outcome.replay.divergences.is_empty(),
        "{:?}",
        outcome.replay.divergences
    );
    assert!(
        outcome.journal_diff.is_clean(),
        "{:?}",
        outcome.journal_diff
    );
    assert!(outcome.journal_match.is_identical());
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert_eq!(
        outcome.journal_match.recorded,
        outcome.journal_match.replayed
    );
    assert!(outcome.journal_match.recorded > 10);
    assert_eq!(outcome.stats.inbound + outcome.stats.outbound, 22);
    let texts: Vec<String> = outcome
        .replay
        .summary
        .turns
        .iter()
        .filter_map(|t| t.text.clone())
        .collect();
    assert_eq!(
        texts,
        [
            "Hi! I'm your weather assistant. Which city would you like the weather for?",
            "It's 14°C and cloudy in London right now. Anything else I can help with?",
            "You're welcome. Have a lovely day!"
        ]
    );
    assert_eq!(
        outcome.replay.state.get_raw("app:last_city"),
        Some(&json!("London"))
    );
    assert_eq!(
        outcome.replay.state.get_raw("session:active_phase"),
        Some(&json!("farewell"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
