//! The model's side of the `call_screening` example's call, as a script: what the model
//! says to each frame the assistant sends. It stands in for the API when the bundled tape
//! is made (`tests/it/example_call_screening.rs`). Context turns that do not ask for an
//! answer get none; a prompting context frame gets the answer its turns call for.

use std::time::Duration;

use reel::demo::model_script::{answered, first_response, play_script, tool_call};
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer.
pub const THINKING: Duration = Duration::from_millis(210);

fn call(id: &str, name: &str, args: Value) -> Vec<Value> {
    vec![tool_call(id, name, args)]
}

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
            "sc-1" => answered("Thank you, Jane."),
            "sc-2" => answered("Noted."),
            "sc-3" => answered("Connecting you to Alex now. Have a great call!"),
            _ => Vec::new(),
        };
    }
    let Some(content) = &message.client_content else {
        return Vec::new();
    };
    let turns = content.turns.as_deref().unwrap_or_default();
    let said: Vec<String> = turns
        .iter()
        .map(|turn| {
            turn.parts()
                .first()
                .and_then(|part| part.text.clone())
                .unwrap_or_default()
        })
        .collect();
    let has = |t: &str| said.iter().any(|s| s == t);
    if turns.iter().any(|t| t.role.as_deref() == Some("user")) {
        return if has("Hi, I'm Jane Smith from Marketing.") {
            call(
                "sc-1",
                "check_contact_list",
                json!({"name": "Jane Smith", "organization": "Marketing"}),
            )
        } else if has("I need to discuss the Q3 budget with Alex.") {
            call("sc-2", "record_purpose", json!({"purpose": "Q3 budget"}))
        } else {
            Vec::new()
        };
    }
    if content.turn_complete != Some(true) {
        return Vec::new();
    }
    if has("Answer on behalf of Alex Rivera and ask who is calling.") {
        answered("Hello, you've reached Alex Rivera's office. Who's calling, please?")
    } else if has("I'll ask Jane Smith what the call is about.") {
        answered("What is the call about, Jane?")
    } else if has("I'll connect the caller to Alex now.") {
        call("sc-3", "transfer_call", json!({}))
    } else {
        Vec::new()
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
