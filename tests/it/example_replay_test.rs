//! The `replay_test` example runs: the weather assistant's session recorded once (against
//! the bundled tape), then replayed offline with its real tools — CLEAN: no divergence, the
//! journal written again entry by entry, no key drifted.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/replay_test.rs"]
mod replay_test;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_test_example_records_and_replays_clean() {
    let dir = std::env::temp_dir().join(format!("reel-example-replay-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let recording = replay_test::record_once(&dir).await.unwrap();
    assert!(recording.wire.exists());
    assert!(recording.journal.exists());

    let verdict = replay_test::replay(&recording).await.unwrap();
    assert_eq!(verdict.divergences, vec![]);
    assert!(verdict.journal_identical);
    assert!(
        verdict.journal_diff.is_clean(),
        "{:?}",
        verdict.journal_diff
    );
    assert!(verdict.mutations > 10, "{} mutations", verdict.mutations);
    assert!(verdict.is_clean());
    std::fs::remove_dir_all(&dir).unwrap();
}
