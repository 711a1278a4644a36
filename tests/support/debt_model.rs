//! The model's side of the `debt_collection` example's call, as a script: what the model
//! says to each frame the agent sends. It stands in for the API when the bundled tape is
//! made (`tests/it/example_debt_collection.rs`), so the tape is recorded by reel from the
//! example's own application. Context turns that do not ask for an answer get none; a
//! prompting context frame (an enter prompt, a first nudge) gets the answer its last
//! recognized turn calls for.

use std::time::Duration;

use reel::demo::model_script::{answered, first_response, model_text, play_script, tool_call};
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer.
pub const THINKING: Duration = Duration::from_millis(240);

/// What the model answers to `message`.
pub fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if message.tool_response.is_some() {
        let id = first_response(message)
            .and_then(|r| r.id.as_deref())
            .unwrap_or_default();
        return match id {
            "fc-1" => answered("Is now a good time to talk?"),
            "fc-2" => answered("Thank you, Ada, you're verified."),
            "fc-3" => answered("I understand, and I'm sorry this is stressful."),
            "fc-4" => answered("Thank you. Let's find a plan that works for you."),
            "fc-5" => answered("Five monthly payments of $250. I'll set that up."),
            _ => Vec::new(),
        };
    }
    let Some(content) = &message.client_content else {
        return Vec::new();
    };
    let turns = content.turns.as_deref().unwrap_or_default();
    let text_of = |turn: &reel_protocol::Content| {
        turn.parts()
            .first()
            .and_then(|part| part.text.clone())
            .unwrap_or_default()
    };
    if let Some(user) = turns.iter().find(|t| t.role.as_deref() == Some("user")) {
        return match text_of(user).as_str() {
            "Hello?" => vec![
                model_text(
                    "Hi, this is Sam from Reel Recovery. This is an attempt to collect a debt, \
                     and any information obtained will be used for that purpose.",
                ),
                tool_call(
                    "fc-1",
                    "record_fact",
                    json!({"key": "disclosure_given", "value": true}),
                ),
            ],
            "This is Ada Lovelace, born December 10th, 1815." => vec![tool_call(
                "fc-2",
                "verify_identity",
                json!({"name": "Ada Lovelace", "date_of_birth": "1815-12-10"}),
            )],
            "This is ridiculous, I'm so angry!" => vec![tool_call(
                "fc-3",
                "record_fact",
                json!({"key": "emotional_state", "value": "angry"}),
            )],
            "Fine, yes, I owe it." => vec![tool_call(
                "fc-4",
                "record_fact",
                json!({"key": "debt_acknowledged", "value": true}),
            )],
            "Can I pay over 5 months?" => {
                vec![tool_call(
                    "fc-5",
                    "calculate_payment_plan",
                    json!({"months": 5}),
                )]
            }
            _ => Vec::new(),
        };
    }
    if content.turn_complete != Some(true) {
        return Vec::new();
    }
    let said: Vec<String> = turns.iter().map(text_of).collect();
    let has = |t: &str| said.iter().any(|s| s == t);
    if has("I'll now verify who I'm speaking with.") {
        answered("Before we go on, could you confirm your full name and date of birth?")
    } else if has("Thank you, Ada Lovelace. I'll explain the account now.") {
        answered(
            "Your account shows a balance of $1,250 owed to Acme Bank. Do you acknowledge this \
             debt?",
        )
    } else if has("I still need to collect: debt_acknowledged.") {
        answered("I hear you. Can you confirm that you owe the $1,250?")
    } else if has("Wrapping up the call.") {
        answered(
            "You're all set: five payments of $250 starting next month. Thank you, Ada. \
             Goodbye!",
        )
    } else {
        Vec::new()
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
