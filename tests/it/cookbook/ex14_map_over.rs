//! 14_map_over: five reviews classified three at a time, labels in list order, a tally.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/14_map_over.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, REVIEWS};
use reel::llm::{Cassette, CassetteMode};
use reel::recorder::cassette::CassetteFile;

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

/// Each review's label. The calls run at once, so each is answered by the review its
/// prompt holds, not by the order it comes in.
fn script() -> Script {
    let labels = ["positive", "negative", "mixed", "positive", "negative"];
    REVIEWS
        .iter()
        .zip(labels)
        .fold(Script::new(), |script, (review, label)| {
            script.when(MODEL, review, label)
        })
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    // The calls are made at once: compared as a set.
    let mut asked = script.asked();
    asked.sort();
    let mut expected: Vec<String> = REVIEWS.iter().map(|r| format!("{MODEL}: {r}")).collect();
    expected.sort();
    assert_eq!(asked, expected);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn it_replays_the_same_from_the_calls_in_any_order() {
    // The bundled cassette with its interactions reversed: each review still gets its own
    // recorded label, as the calls are matched by request.
    let dir = crate::cli_support::TempDir::new("cookbook-14-reversed");
    let path = dir.join("reversed.cassette.json");
    let mut file = CassetteFile::read(bundled_cassette(NAME), u64::MAX).unwrap();
    file.interactions.reverse();
    file.write(&path, u64::MAX).unwrap();
    let cassette = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let printed = example::run(Models::replaying(cassette.clone()))
        .await
        .unwrap();
    assert_eq!(
        printed,
        std::fs::read_to_string(super::support::bundled_output(NAME)).unwrap()
    );
    assert_eq!(cassette.unused().await, Vec::<usize>::new());
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
