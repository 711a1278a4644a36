//! 11_route_branching: four tickets, four branches, no model call.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/11_route_branching.rs"]
mod example;

use example::NAME;
use example::cookbook::Models;
use reel::actors::state::State;
use reel::agents::TextAgent;

use super::support::{Script, check_printed, check_recorded, check_replayed};

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_empty_as_no_model_is_asked() {
    // A script with no answers: any model call would fail the run.
    let script = Script::new();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert_eq!(script.asked(), Vec::<String>::new());
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn the_first_rule_that_holds_wins_over_later_ones() {
    // Urgent and VIP: the urgent rule comes first.
    let state = State::new();
    state.set("input", "Our dashboard is down").await.unwrap();
    state.set("tier", "vip").await.unwrap();
    state.set("language", "pt").await.unwrap();
    assert_eq!(
        example::triage().run(&state).await.unwrap(),
        "on_call_engineer takes \"Our dashboard is down\""
    );
    // Nothing set but the text: the default.
    let state = State::new();
    state.set("input", "hello").await.unwrap();
    assert_eq!(
        example::triage().run(&state).await.unwrap(),
        "general_queue takes \"hello\""
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
