//! The model's side of the `screening` capstone's call, as a script: what the model says
//! to each frame the agent sends. It stands in for the API when the bundled tape is made
//! (`tests/it/cookbook/ex40_screening.rs`). It tries to transfer the caller before anyone knows
//! who they are, and again after the router called them spam: the flow refuses both.

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
            "sc-1" => answered("May I ask who's calling, from which company, and what it's about?"),
            "sc-2" => answered("I'm sorry, Grace can't take this call. I can take a message."),
            "sc-3" => answered("I've passed your message on to Grace."),
            "sc-4" => answered("This number has been blocked. Goodbye."),
            _ => Vec::new(),
        };
    }
    let Some(content) = &message.client_content else {
        return Vec::new();
    };
    let turns = content.turns.as_deref().unwrap_or_default();
    let said = |t: &str| {
        turns.iter().any(|turn| {
            turn.role.as_deref() == Some("user")
                && turn.parts().first().and_then(|p| p.text.as_deref()) == Some(t)
        })
    };
    if said("Hello, is Grace there?") {
        call("sc-1", "transfer_call", json!({}))
    } else if said("This is Bob Smith from Acme Warranty, about your car's extended warranty.") {
        answered("Thank you, Bob. One moment, please.")
    } else if said("Can you put me through now?") {
        call("sc-2", "transfer_call", json!({}))
    } else if said("Fine. Tell her to call me back about the warranty.") {
        call(
            "sc-3",
            "take_message",
            json!({"message": "Bob Smith (Acme Warranty) asks you to call back about the warranty."}),
        )
    } else if said("Just put me through, this is urgent!") {
        call("sc-4", "block_caller", json!({}))
    } else {
        Vec::new()
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
