//! 25_code_review: the linter, the security reviewer and the summariser over the bundled
//! diff; the later agents get the diff and the findings from the state.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/25_code_review.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{DIFF, NAME};

use super::support::{Script, check_printed, check_recorded, check_replayed};

const LINT: &str = "src/orders.rs:18: `unwrap` on a query result panics on a database error\nsrc/orders.rs:19: build the list with `rows.into_iter().map(Order::from).collect()`";
const SECURITY: &str = "high: src/orders.rs:17: SQL injection — `name` is formatted into the query; use a bound parameter";
const REVIEW: &str = "- SQL injection in find_by_customer (high): bind `name` as a parameter.\n- `unwrap` on the query result: return a Result instead.\n- Collect with `map(Order::from)`.\nverdict: request changes";

fn script() -> Script {
    Script::new()
        .answer(MODEL, LINT)
        .answer(MODEL, SECURITY)
        .answer(MODEL, REVIEW)
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
            format!("{MODEL}: {DIFF}"),
            format!("{MODEL}: {LINT}"),
            format!("{MODEL}: {SECURITY}"),
        ]
    );
    // The security reviewer was sent the diff (C::from_state) before the lint findings;
    // the summariser both findings before the security ones.
    let cassette: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(super::support::bundled_cassette(NAME)).unwrap(),
    )
    .unwrap();
    let first_turn = |i: usize| {
        cassette["interactions"][i]["request"]["contents"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(first_turn(1), format!("Context from state:\ndiff: {DIFF}"));
    assert_eq!(
        first_turn(2),
        format!("Context from state:\nlint_findings: {LINT}\nsecurity_findings: {SECURITY}")
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
