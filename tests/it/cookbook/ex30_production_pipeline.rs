//! 30_production_pipeline: the drafter, the editor and the publisher on their script; the
//! metrics, the trace and the evaluation of what they did.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/30_production_pipeline.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, RELEASE};

use super::support::{Script, check_printed, check_recorded, check_replayed};

const DRAFT: &str = "reel 0.2.0 is out. Every cookbook example now replays offline, and `reel eval` scores your recordings. We guarantee you will love it.";
const EDITED: &str = "reel 0.2.0 is out. Every cookbook example now replays offline, `reel eval` scores your recordings, and `reel trace show` lists agent traces.";
const PUBLISHED: &str = r#"{"title":"reel 0.2.0","summary":"Cookbook examples replay offline, reel eval scores recordings, reel trace show lists agent traces.","version":"0.2.0"}"#;

fn script() -> Script {
    Script::new()
        .answer(MODEL, DRAFT)
        .answer(MODEL, EDITED)
        .answer(MODEL, PUBLISHED)
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
            format!("{MODEL}: {RELEASE}"),
            format!("{MODEL}: {DRAFT}"),
            format!("{MODEL}: {EDITED}"),
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
