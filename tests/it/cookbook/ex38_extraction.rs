//! 38_extraction: the recognizers fill `derived:quantity`, `size`, `budget`, `name` and
//! `confirmed` from the caller's words, turn by turn; `captured([..])` completes `collect`,
//! `is_true(derived:confirmed)` completes `confirm`, and `place_order` — refused by the
//! flow when the model tries it first — runs once `place` is active.
//!
//! The bundled tape (`assets/cookbook/38_extraction.wire.jsonl`) is what reel records
//! today when the agent talks to the scripted model below, regenerated here byte for
//! byte; what it prints is `assets/cookbook/38_extraction.out`. After an intended change:
//! `REEL_BLESS=1 cargo test --test it cookbook::ex38`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/38_extraction.rs"]
mod example;

use super::example_process::check_live_needs_a_key;
use super::support::{as_tape, refused_frames};
use crate::scripted_call::{ScriptedCall, talk};
use std::path::PathBuf;
use std::time::Duration;

use example::{NAME, Target, converse, order_agent, order_flow};
use reel::demo::model_script::play_script;
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

use super::support::{bundled_output, check_output, check_printed};

/// The tape's start time: 2026-11-27T00:00:00Z.
const START_MS: u64 = 1_795_737_600_000;

/// How long the scripted model "thinks" before each answer.
const THINKING: Duration = Duration::from_millis(180);

fn answered(text: &str) -> Vec<Value> {
    vec![
        json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": text}]}}}),
        json!({"serverContent": {"generationComplete": true}}),
        json!({"serverContent": {"turnComplete": true}}),
    ]
}

fn place_order(id: &str, args: Value) -> Vec<Value> {
    vec![json!({"toolCall": {"functionCalls": [{"id": id, "name": "place_order", "args": args}]}})]
}

/// The model's side of the call: it tries to place the order before anything is known
/// (`ex-1`), then again once the caller said go ahead (`ex-2`).
fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if let Some(response) = &message.tool_response {
        let id = response
            .function_responses
            .as_ref()
            .and_then(|responses| responses.first())
            .and_then(|r| r.id.clone())
            .unwrap_or_default();
        return match id.as_str() {
            "ex-1" => {
                answered("Happy to help! How many pizzas, what size, what budget, and your name?")
            }
            "ex-2" => answered("Done: order P-0042, three large pizzas for Ada Lovelace."),
            _ => Vec::new(),
        };
    }
    let Some(content) = &message.client_content else {
        return Vec::new();
    };
    let said = content
        .turns
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|turn| turn.role.as_deref() == Some("user"))
        .find_map(|turn| turn.parts().first().and_then(|p| p.text.clone()))
        .unwrap_or_default();
    match said.as_str() {
        "Hi, I'd like to order pizzas for the office." => place_order(
            "ex-1",
            json!({"quantity": 1, "size": "medium", "name": "guest"}),
        ),
        "We want 3 large ones, and keep it under $40." => {
            answered("Three large pizzas, up to $40. And your name?")
        }
        "It's Ada Lovlace." => {
            answered("Thank you, Ms Lovelace: three large pizzas, up to $40. Is that right?")
        }
        "Yes, that's right." => answered("Lovely. Shall I place it now?"),
        "Great, go ahead." => place_order(
            "ex-2",
            json!({"quantity": 3, "size": "large", "name": "Lovelace"}),
        ),
        _ => Vec::new(),
    }
}

fn bundled_tape_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/cookbook/38_extraction.wire.jsonl")
}

/// What the example prints after the flow's diagram, for the call.
fn printed_call() -> String {
    let printed = std::fs::read_to_string(bundled_output(NAME)).unwrap();
    let head = format!("{}\n", order_flow().to_mermaid());
    printed
        .strip_prefix(&head)
        .unwrap_or_else(|| panic!("the bundled output starts with the flow's diagram"))
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn the_bundled_tape_is_what_reel_records_today() {
    let agent = order_agent();
    let ScriptedCall {
        call: printed,
        wire,
        ..
    } = talk(
        agent,
        START_MS,
        async |conn: &mut ServerConn| play_script(conn, THINKING, answer).await,
        converse,
    )
    .await;
    assert_eq!(
        refused_frames(&wire),
        [json!({"toolResponse": {"functionResponses": [{
            "id": "ex-1",
            "name": "place_order",
            "response": {"error": "tool `place_order` was refused by the flow: \"place_order\" is not allowed by any active step (active: collect)"}
        }]}})]
    );
    check_output(NAME, &format!("{}\n{printed}", order_flow().to_mermaid()));

    let tape = as_tape(&wire);
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::write(bundled_tape_path(), &tape).unwrap();
        return;
    }
    assert_eq!(
        tape,
        example::EXTRACTION_TAPE,
        "assets/cookbook/38_extraction.wire.jsonl is stale: re-bless it with REEL_BLESS=1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_talks_to_the_bundled_tape_on_loopback() {
    let printed = example::run(Target::BundledTape { speed: None })
        .await
        .unwrap();
    assert_eq!(printed, printed_call());
}

#[tokio::test(start_paused = true)]
async fn the_bundled_tape_replays_clean_with_the_recognizers_run_again() {
    let printed = example::run(Target::Replay).await.unwrap();
    assert_eq!(
        printed,
        "the recognizers, run again on the recorded words:\n  \
         flow:done = []\n  \
         derived:quantity = 3\n  \
         derived:size = \"large\"\n  \
         derived:budget = {\"amount\":40.0,\"currency\":\"USD\"}\n  \
         derived:name = \"Lovelace\"\n  \
         flow:done = [\"collect\"]\n  \
         derived:confirmed = true\n  \
         flow:done = [\"collect\",\"confirm\"]\n  \
         flow:done = [\"collect\",\"confirm\",\"place\",\"done\"]\n\
         replay CLEAN: 7 frames sent, each the recorded one\n"
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}

#[test]
fn live_without_a_key_fails_naming_the_missing_variable() {
    check_live_needs_a_key("38_extraction", "");
}
