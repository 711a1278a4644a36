//! 23_deep_research: the researcher (Google Search declared) over three sources, its
//! grounded answers citing pages, then the synthesis.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/23_deep_research.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, QUESTION, SOURCES};
use serde_json::json;

use super::support::{Script, check_printed, check_recorded, check_replayed};

const BLOGS: &str = "Teams record real model calls once and replay them in CI, so tests are fast and free [1]. Some pin the recordings in the repository next to the tests [2].\n[1] https://example.com/blog/replay-llm-tests\n[2] https://example.com/blog/cassettes-in-git";
const TOOLING: &str = "Test tools offer cassettes that match requests and fail on a miss instead of calling out [1]. Scripted fake models cover unit tests [2].\n[1] https://example.com/docs/cassettes\n[2] https://example.com/docs/fake-llm";
const PAPERS: &str = "Papers evaluate agents over recorded trajectories rather than live runs, for repeatable scores [1]; live evaluation is kept for drift checks [2].\n[1] https://example.org/papers/trajectory-eval\n[2] https://example.org/papers/agent-drift";
const BRIEF: &str = "- Record model calls once, replay them in CI with no key [1][2].\n- Fail on a cassette miss; use scripted models for unit tests [3][4].\n- Score recorded trajectories for repeatable evaluation; papers keep some live runs to catch drift, which blogs do not mention [5][6].";

fn script() -> Script {
    Script::new()
        .answer(MODEL, BLOGS)
        .answer(MODEL, TOOLING)
        .answer(MODEL, PAPERS)
        .answer(MODEL, BRIEF)
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
    let asked = |source: &str| format!("{MODEL}: Question: {QUESTION}\nSource: {source}");
    assert_eq!(
        script.asked(),
        [
            asked(SOURCES[0]),
            asked(SOURCES[1]),
            asked(SOURCES[2]),
            format!("{MODEL}: {BLOGS}\n{TOOLING}\n{PAPERS}"),
        ]
    );
    // The three research calls declare Google Search; the synthesis declares no tool.
    let cassette: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(super::support::bundled_cassette(NAME)).unwrap(),
    )
    .unwrap();
    let tools: Vec<serde_json::Value> = cassette["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["request"].get("tools").cloned().unwrap_or(json!(null)))
        .collect();
    let search = json!([{"googleSearch": {}}]);
    assert_eq!(tools, [search.clone(), search.clone(), search, json!(null)]);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
