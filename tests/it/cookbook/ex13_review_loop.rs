//! 13_review_loop: the writer and the reviewer go two rounds; the second draft is approved.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/13_review_loop.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};

use super::support::{Script, check_printed, check_recorded, check_replayed};

/// The answers the bundled cassette holds, in call order: a draft, a review asking for a
/// change, the rewritten draft, an approval.
fn script() -> Script {
    Script::new()
        .answer(MODEL, "The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight the light is his to fly.")
        .answer(MODEL, "Make the last line about the light going out.")
        .answer(MODEL, "The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight he lets the last beam die.")
        .answer(MODEL, "APPROVED")
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            "gemini-2.5-flash: a lighthouse keeper's last night",
            "gemini-2.5-flash: The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight the light is his to fly.",
            "gemini-2.5-flash: Topic: a lighthouse keeper's last night\nDraft:\nThe lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight the light is his to fly.\nReview: Make the last line about the light going out.",
            "gemini-2.5-flash: The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight he lets the last beam die.",
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn a_second_run_on_a_used_cassette_is_a_miss_not_a_call() {
    let cassette = reel::llm::Cassette::open(
        super::support::bundled_cassette(NAME),
        reel::llm::CassetteMode::Replay,
    )
    .unwrap();
    example::run(Models::replaying(cassette.clone()))
        .await
        .unwrap();
    let again = example::run(Models::replaying(cassette)).await.unwrap_err();
    assert!(
        again
            .to_string()
            .starts_with("agent `writer`: the model call failed:"),
        "{again}"
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
