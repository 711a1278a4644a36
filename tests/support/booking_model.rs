//! The model's side of the `phases` example's call, as a script: what a booking-savvy model
//! says to each frame the assistant sends. It stands in for the API when the bundled tape
//! is made (`tests/it/example_phases.rs`), so the tape is recorded by reel from the example's
//! own application, not written by hand.

use std::time::Duration;

use reel::demo::model_script::{first_response, model_text, play_script, tool_call};
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer (virtual time when the tape is
/// made, so the tape has realistic gaps).
pub const THINKING: Duration = Duration::from_millis(220);

fn answered(t: &str, prompt: u32, response: u32) -> Vec<Value> {
    vec![
        model_text(t),
        json!({"serverContent": {"generationComplete": true}}),
        json!({
            "serverContent": {"turnComplete": true},
            "usageMetadata": {
                "promptTokenCount": prompt,
                "responseTokenCount": response,
                "totalTokenCount": prompt + response
            }
        }),
    ]
}

fn call(id: &str, name: &str, args: Value) -> Vec<Value> {
    vec![tool_call(id, name, args)]
}

/// What the model answers to `message`: nothing for an instruction update.
pub fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if message.tool_response.is_some() {
        let name = first_response(message)
            .and_then(|r| r.name.as_deref())
            .unwrap_or_default();
        return match name {
            "note_name" => answered(
                "Thank you, Ada! How many guests, and for what time?",
                96,
                14,
            ),
            "note_party" => answered("A table for eight at 20:00. Shall I book it?", 131, 13),
            "confirm_booking" => answered(
                "You're booked! Your reference is TR-2000-8; parties of seven or more leave \
                 a 50 euro deposit.",
                170,
                24,
            ),
            _ => Vec::new(),
        };
    }
    let said = message
        .client_content
        .as_ref()
        .and_then(|c| c.turns.as_ref())
        .and_then(|turns| turns.first())
        .filter(|turn| turn.role.as_deref() == Some("user"))
        .and_then(|turn| turn.parts().first())
        .and_then(|part| part.text.clone())
        .unwrap_or_default();
    match said.as_str() {
        "Hello!" => answered(
            "Welcome to Trattoria Reel! May I have your name for the booking?",
            58,
            15,
        ),
        "It's Ada Lovelace." => call("fc-1", "note_name", json!({"name": "Ada Lovelace"})),
        "Eight of us, at eight tonight." => call(
            "fc-2",
            "note_party",
            json!({"party_size": 8, "time": "20:00"}),
        ),
        "Yes, please book it." => call("fc-3", "confirm_booking", json!({})),
        "Thank you, goodbye!" => answered("See you tonight, Ada. Goodbye!", 205, 9),
        _ => Vec::new(),
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
