//! 03_composition: the state reshaped, the instruction composed, a cached tool asked twice
//! and run once, the first answer rejected by a guard and the second passed.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/03_composition.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::llm::LlmChunk;
use reel::protocol::FunctionCall;
use serde_json::json;

use super::support::{Script, check_printed, check_recorded, check_replayed};

fn calling(calls: &[(&str, &str, serde_json::Value)]) -> LlmChunk {
    LlmChunk {
        function_calls: calls
            .iter()
            .map(|(id, name, args)| FunctionCall {
                id: Some((*id).to_owned()),
                name: Some((*name).to_owned()),
                args: Some(args.clone().into()),
                ..FunctionCall::default()
            })
            .collect(),
        finish_reason: Some("STOP".to_owned()),
        ..LlmChunk::default()
    }
}

/// The answers the bundled cassette holds, in call order: two tool rounds (the plan's
/// terms asked twice), an answer promising a refund, and, asked again, one that does not.
fn script() -> Script {
    Script::new()
        .chunk(
            MODEL,
            calling(&[
                ("c1", "plan_terms", json!({"plan": "pro"})),
                ("c2", "account_status", json!({"customer": "Ana Silva"})),
            ]),
        )
        .chunk(MODEL, calling(&[("c3", "plan_terms", json!({"plan": "pro"}))]))
        .answer(MODEL, "Hi Ana! As a pro customer in good standing, your refund guaranteed within 5 days.")
        .answer(MODEL, "Hi Ana! On the pro plan, unused days of this month are credited to your next bill rather than refunded.")
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
    let asked = format!("{MODEL}: {}", example::QUESTION);
    assert_eq!(script.asked(), vec![asked; 4]);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn the_transform_reshapes_the_state_as_labelled() {
    let mut state = json!({
        "first_name": "Ana", "last_name": "Silva", "plan": "pro",
        "issue": "billing", "internal_id": "x-991"
    });
    example::reshape().apply(&mut state);
    assert_eq!(
        state,
        json!({
            "plan": "pro",
            "customer": {"first_name": "Ana", "last_name": "Silva"},
            "topic": "billing",
            "tone": "friendly"
        })
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
