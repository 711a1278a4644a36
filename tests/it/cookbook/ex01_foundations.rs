//! 01_foundations: the forecaster calls both its tools in one round, then answers.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/01_foundations.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::llm::LlmChunk;
use reel::protocol::FunctionCall;
use serde_json::json;

use super::support::{Script, check_printed, check_recorded, check_replayed};

fn call(id: &str, name: &str, args: serde_json::Value) -> FunctionCall {
    FunctionCall {
        id: Some(id.to_owned()),
        name: Some(name.to_owned()),
        args: Some(args.into()),
        ..FunctionCall::default()
    }
}

/// The answers the bundled cassette holds, in call order: the model calls the typed tool
/// and the simple tool in one round, then answers from their results.
fn script() -> Script {
    Script::new()
        .chunk(
            MODEL,
            LlmChunk {
                function_calls: vec![
                    call(
                        "c1",
                        "get_weather",
                        json!({"city": "Lisbon", "days_ahead": 1}),
                    ),
                    call("c2", "local_time", json!({"city": "Lisbon"})),
                ],
                finish_reason: Some("STOP".to_owned()),
                ..LlmChunk::default()
            },
        )
        .answer(
            MODEL,
            "Lisbon tomorrow: sunny, 16 to 24 °C — it is 09:30 there now.",
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
    assert_eq!(
        script.asked(),
        [
            "gemini-2.5-flash: Tomorrow in Lisbon?",
            "gemini-2.5-flash: Tomorrow in Lisbon?",
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
