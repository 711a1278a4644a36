//! The model's side of the `governed_flow` example's call, as a script: what the model
//! says to each frame the agent sends. It stands in for the API when the bundled tape is
//! made (`tests/it/cookbook/ex37_governed_flow.rs`). It tries the card before the caller is
//! verified and again after it was charged: the flow refuses both.

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
            "gf-1" => answered(
                "Before anything else, could you confirm your full name and date of birth?",
            ),
            "gf-2" => {
                answered("Thank you, Ada, you're verified. You owe $1,250; what can you pay?")
            }
            "gf-3" => answered("I've noted $250 on Friday. Shall I charge your card now?"),
            "gf-4" => answered("Done: $250 charged. Thank you, Ada!"),
            "gf-5" => answered("Your card was already charged once; you're all set. Goodbye!"),
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
    if said("Hello?") {
        call("gf-1", "charge_card", json!({}))
    } else if said("This is Ada Lovelace, born December 10th, 1815.") {
        call(
            "gf-2",
            "lookup_account",
            json!({"name": "Ada Lovelace", "date_of_birth": "1815-12-10"}),
        )
    } else if said("I can pay $250 on Friday.") {
        call(
            "gf-3",
            "record_promise",
            json!({"amount": 250, "date": "Friday"}),
        )
    } else if said("Yes, please charge my card now.") {
        call("gf-4", "charge_card", json!({}))
    } else if said("Charge it again, just to be sure.") {
        call("gf-5", "charge_card", json!({}))
    } else {
        Vec::new()
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
