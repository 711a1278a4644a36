//! 19_agent_tool: the assistant's model calls the packing expert as a tool, the expert's
//! answer is the tool's result, and the assistant answers from it.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/19_agent_tool.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, TOOL};
use reel::llm::{Cassette, CassetteMode, LlmChunk};
use reel::protocol::FunctionCall;
use serde_json::json;

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

const REQUEST: &str = "Four days in Reykjavik in March";
const LIST: &str = "waterproof shell jacket\nwool base layers\nhat and gloves\nwaterproof boots\nswimsuit for the pools";
const FINAL: &str = "Pack for wind and wet: a waterproof shell over wool layers, a hat, gloves and waterproof boots. And bring a swimsuit for the geothermal pools!";

/// In call order, all of the one model: the assistant calls the tool, the expert answers,
/// the assistant answers.
fn script() -> Script {
    let call = LlmChunk {
        function_calls: vec![FunctionCall {
            id: Some("call-1".to_owned()),
            name: Some(TOOL.to_owned()),
            args: Some(json!({ "request": REQUEST }).into()),
            ..FunctionCall::default()
        }],
        finish_reason: Some("STOP".to_owned()),
        ..LlmChunk::default()
    };
    Script::new()
        .chunk(MODEL, call)
        .answer(MODEL, LIST)
        .answer(MODEL, FINAL)
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
            format!("{MODEL}: {}", example::QUESTION),
            format!("{MODEL}: {REQUEST}"),
            format!("{MODEL}: {}", example::QUESTION),
        ]
    );
}

#[tokio::test]
async fn the_assistants_second_request_holds_the_call_and_the_experts_answer() {
    let file = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay)
        .unwrap()
        .snapshot()
        .await;
    assert_eq!(file.interactions.len(), 3);
    let first = &file.interactions[0].request;
    assert_eq!(
        first["tools"][0]["functionDeclarations"][0]["name"],
        json!(TOOL)
    );
    let second = &file.interactions[2].request;
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(
        contents[1]["parts"][0]["functionCall"],
        json!({"id": "call-1", "name": TOOL, "args": {"request": REQUEST}})
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"],
        json!({ "result": LIST })
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
