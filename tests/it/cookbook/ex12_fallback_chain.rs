//! 12_fallback_chain: the primary fails and the secondary answers; the primary answers;
//! both fail and the canned reply answers. The failures are on the cassette and fail
//! again offline.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/12_fallback_chain.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, PRIMARY};
use reel::llm::{Cassette, CassetteMode};

use super::support::{
    Script, bundled_cassette, check_printed, check_recorded_keeping_failures, check_replayed,
};

const OVERLOADED: &str = "The model is overloaded. Please try again later.";

/// The answers the bundled cassette holds: the primary fails, answers, fails; the
/// secondary answers the first question and fails the third.
fn script() -> Script {
    Script::new()
        .fail(PRIMARY, OVERLOADED)
        .answer(
            MODEL,
            "Use “Forgot password” on the sign-in page and follow the emailed link.",
        )
        .answer(PRIMARY, "SSO comes with the Business and Enterprise plans.")
        .fail(PRIMARY, OVERLOADED)
        .fail(MODEL, OVERLOADED)
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded_failures_included() {
    let script = script();
    let models = script.clone();
    check_recorded_keeping_failures(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            "gemini-2.5-pro: How do I reset my password?",
            "gemini-2.5-flash: How do I reset my password?",
            "gemini-2.5-pro: Which plans include SSO?",
            "gemini-2.5-pro: Can I export my data as CSV?",
            "gemini-2.5-flash: Can I export my data as CSV?",
        ]
    );
    let file =
        reel::recorder::cassette::CassetteFile::read(bundled_cassette(NAME), u64::MAX).unwrap();
    let failure = |model: &str| {
        Some(format!(
            "the model API answered 503 for script://{model}: {OVERLOADED}"
        ))
    };
    assert_eq!(
        file.interactions
            .iter()
            .map(|i| i.failure.clone())
            .collect::<Vec<_>>(),
        [
            failure(PRIMARY),
            None,
            None,
            failure(PRIMARY),
            failure(MODEL)
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn offline_the_primary_fails_with_its_recorded_failure() {
    let cassette = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay).unwrap();
    let asked = example::ask_all(&Models::replaying(cassette))
        .await
        .unwrap();
    let first = &asked[0].calls[0];
    assert_eq!(first.agent, "primary");
    assert_eq!(
        first.outcome,
        Err(format!(
            "agent `primary`: the model call failed: the recorded call failed: the model API answered 503 for script://{PRIMARY}: {OVERLOADED}"
        ))
    );
    assert_eq!(asked[2].answer, example::CANNED);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
