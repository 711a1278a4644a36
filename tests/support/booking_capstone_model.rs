//! The model's side of the `booking` capstone's call, as a script: what the model says to
//! each frame the agent sends. It stands in for the API when the bundled tape is made
//! (`tests/it/cookbook/ex39_booking.rs`). It tries to book before anything was checked: the flow
//! refuses.

use std::time::Duration;

use reel::demo::model_script::{answered, first_response, play_script};
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer.
pub const THINKING: Duration = Duration::from_millis(210);

fn book(id: &str, party_size: u32) -> Vec<Value> {
    vec![json!({"toolCall": {"functionCalls": [{
        "id": id,
        "name": "book_table",
        "args": {"party_size": party_size, "date": "2025-06-05", "time": "19:00"}
    }]}})]
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
            "bk-1" => answered("Happy to help! How many guests, and for when?"),
            "bk-2" => answered("Booked! Your reference is R-0412. See you tomorrow at 7pm."),
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
    if said("Hi, I'd like to book a table.") {
        book("bk-1", 2)
    } else if said("A table for 4 tomorrow at 7pm.") {
        answered("Let me check that for you.")
    } else if said("Is it free?") {
        answered("Good news: a table for 4 is free tomorrow at 7pm. Shall I book it?")
    } else if said("Yes, book it.") {
        book("bk-2", 4)
    } else {
        Vec::new()
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
