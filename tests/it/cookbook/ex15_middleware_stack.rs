//! 15_middleware_stack: the classifier's repeated request is deduplicated, the answerer's
//! repeated question is answered from its cache, its primary model fails once and the
//! fallback answers, every call is priced, and the second model call waits its turn.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/15_middleware_stack.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, PRIMARY};
use reel::agents::Decisions;

use super::support::{
    Script, bundled_cassette, check_printed, check_recorded_keeping_failures, check_replayed,
};

const RESET: &str =
    "Open Settings, choose Security, then Reset password; a link arrives by email within a minute.";
const CHARGED: &str = "A second charge is usually a pending authorisation that drops off within three days; if it stays, reply and we refund it.";

/// The answers, per model in call order: the classifier (flash) three times (its second
/// question is deduplicated); the answerer (pro) once, then a failure, then the fallback's
/// answer (asked through the same model, the request's model replaced by flash).
fn script() -> Script {
    Script::new()
        .answer(MODEL, "account")
        .answer(MODEL, "billing")
        .answer(MODEL, "account")
        .answer(PRIMARY, RESET)
        .fail(PRIMARY, "the model is overloaded")
        .answer(PRIMARY, CHARGED)
}

fn bundled_decisions() -> std::path::PathBuf {
    Decisions::path_beside(bundled_cassette(NAME))
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded_keeping_failures(NAME, |cassette| async move {
        let decisions = Decisions::path_beside(cassette.path());
        let printed =
            example::run(Models::scripted(move |id| models.model(id), Some(cassette))).await?;
        // The decisions the recording made are the bundled ones, byte for byte.
        let recorded = std::fs::read_to_string(&decisions)?;
        if std::env::var_os("REEL_BLESS").is_some() {
            std::fs::write(bundled_decisions(), &recorded)?;
        }
        assert_eq!(recorded, std::fs::read_to_string(bundled_decisions())?);
        Ok(printed)
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            "gemini-2.5-flash: How do I reset my password?",
            "gemini-2.5-pro: How do I reset my password?",
            "gemini-2.5-flash: Why was I charged twice this month?",
            "gemini-2.5-pro: Why was I charged twice this month?",
            "gemini-2.5-pro: Why was I charged twice this month?",
            "gemini-2.5-flash: How do I reset my password?",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_cassette_holds_one_answer_per_model_call_and_none_for_a_cache_hit() {
    let file = reel::llm::Cassette::open(bundled_cassette(NAME), reel::llm::CassetteMode::Replay)
        .unwrap()
        .snapshot()
        .await;
    let calls: Vec<String> = file
        .interactions
        .iter()
        .map(|i| {
            let request = &i.request;
            format!(
                "{}: {}",
                request["model"].as_str().unwrap(),
                request["contents"][0]["parts"][0]["text"].as_str().unwrap()
            )
        })
        .collect();
    // The reset question is answered by pro once (twice from the cache); the failed pro
    // call is kept (decision 0063), so offline it fails from the recording; the fallback's
    // answer is flash's.
    assert_eq!(
        calls,
        [
            "gemini-2.5-flash: How do I reset my password?",
            "gemini-2.5-pro: How do I reset my password?",
            "gemini-2.5-flash: Why was I charged twice this month?",
            "gemini-2.5-pro: Why was I charged twice this month?",
            "gemini-2.5-flash: Why was I charged twice this month?",
            "gemini-2.5-flash: How do I reset my password?",
        ]
    );
    let failed: Vec<bool> = file
        .interactions
        .iter()
        .map(|i| i.failure.is_some())
        .collect();
    assert_eq!(failed, [false, false, false, true, false, false]);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test(start_paused = true)]
async fn the_replay_waits_for_no_rate_limit() {
    let cassette =
        reel::llm::Cassette::open(bundled_cassette(NAME), reel::llm::CassetteMode::Replay).unwrap();
    let start = tokio::time::Instant::now();
    example::run(Models::replaying(cassette)).await.unwrap();
    assert_eq!(start.elapsed(), std::time::Duration::ZERO);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
