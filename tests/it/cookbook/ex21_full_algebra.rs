//! 21_full_algebra: the whole tree on its script — a tool call, two angles at once, two
//! rounds of writing and critique, the `/` primary failing, two tightening runs and the
//! packaged JSON note.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/21_full_algebra.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::llm::LlmChunk;
use serde_json::json;

use super::support::{Script, check_printed, check_recorded, check_replayed};

const DRAFT_1: &str = "Every cookbook example now runs offline. This is a big step.";
const CRITIQUE: &str = "Say what the reader can do now and drop the second sentence.";
const DRAFT_2: &str = "You can now run all 40 cookbook examples offline, with no API key. CI gets the same output on every run.";
const POLISHED: &str = "You can now run all 40 cookbook examples offline, without an API key; CI gets the same output every run.";
const TIGHT_1: &str =
    "Run all 40 cookbook examples offline, no API key; CI gets the same output every run.";
const TIGHT_2: &str = "Run all 40 cookbook examples offline with no key; CI output never changes.";

/// The answers the bundled cassette holds, in call order. Every agent asks the one scripted
/// model (the `/` primary names `gemini-2.5-pro` in its request), so one queue holds them;
/// the two angles run at once, and on the test's single-threaded runtime the first branch
/// asks first, every time.
fn script() -> Script {
    let call = serde_json::from_value(json!({
        "id": "call-1",
        "name": "release_facts",
        "args": {"feature": "offline cookbook"}
    }))
    .unwrap();
    Script::new()
        .chunk(
            MODEL,
            LlmChunk {
                function_calls: vec![call],
                ..LlmChunk::default()
            },
        )
        .answer(
            MODEL,
            "40 examples run offline\nno API key needed\nthe same output on every run",
        )
        .answer(
            MODEL,
            "A developer can try every example without a key and get the same output.",
        )
        .answer(
            MODEL,
            "An operator can run the cookbook in CI with no network and no secrets.",
        )
        .answer(MODEL, DRAFT_1)
        .answer(MODEL, CRITIQUE)
        .answer(MODEL, DRAFT_2)
        .answer(MODEL, "good")
        .fail(MODEL, "gemini-2.5-pro is overloaded")
        .answer(MODEL, POLISHED)
        .answer(MODEL, TIGHT_1)
        .answer(MODEL, TIGHT_2)
        .answer(
            MODEL,
            &json!({"headline": "The cookbook runs offline", "body": TIGHT_2}).to_string(),
        )
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
    let flash = |prompt: &str| format!("{MODEL}: {prompt}");
    let facts = "40 examples run offline\nno API key needed\nthe same output on every run";
    assert_eq!(
        script.asked(),
        [
            // The researcher, twice: its tool call, then its answer with the tool's result.
            flash(example::CHANGE),
            flash(example::CHANGE),
            // The two angles, at once, on the researcher's facts.
            flash(facts),
            flash(facts),
            // The writer on both angles (a fan-out's outputs, joined), the critic on its draft.
            flash(
                "A developer can try every example without a key and get the same output.\nAn operator can run the cookbook in CI with no network and no secrets."
            ),
            flash(DRAFT_1),
            flash(CRITIQUE),
            flash(DRAFT_2),
            // `/`: the primary (its request names gemini-2.5-pro) fails, the second answers.
            flash("good"),
            flash("good"),
            // `* 2`, then the packager.
            flash(POLISHED),
            flash(TIGHT_1),
            flash(TIGHT_2),
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
