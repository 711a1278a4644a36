//! The model's side of the getting-started guide's session, as a script: what a weather
//! model says to each frame the guide's assistant sends. It stands in for the API when the
//! bundled tape `assets/tapes/guide.wire.jsonl` is made (`tests/it/guide.rs`), so that tape
//! is recorded by reel from the guide's own application, not written by hand.

use std::time::Duration;

use reel::demo::model_script::play_script;
use reel_actors::testing::ServerConn;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer (virtual time when the tape is
/// made, so the tape has realistic gaps).
pub const THINKING: Duration = Duration::from_millis(200);

fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": t}]}}})
}

/// The model's answer in `chunks`, then the end of its turn with its token counts.
fn answered(chunks: &[&str], prompt: u32, response: u32) -> Vec<Value> {
    let mut frames: Vec<Value> = chunks.iter().map(|chunk| text(chunk)).collect();
    frames.push(json!({"serverContent": {"generationComplete": true}}));
    frames.push(json!({
        "serverContent": {"turnComplete": true},
        "usageMetadata": {
            "promptTokenCount": prompt,
            "responseTokenCount": response,
            "totalTokenCount": prompt + response
        }
    }));
    frames
}

/// What the model answers to `message`: nothing for an instruction update.
pub fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if message.tool_response.is_some() {
        return answered(&["It's 14°C and cloudy in London right now."], 118, 12);
    }
    let said = message
        .client_content
        .as_ref()
        .and_then(|c| c.turns.as_ref())
        .and_then(|turns| turns.first())
        .and_then(|turn| turn.parts().first())
        .and_then(|part| part.text.clone())
        .unwrap_or_default();
    match said.as_str() {
        "Hello!" => answered(
            &[
                "Hi! I'm your weather assistant.",
                " Which city would you like the weather for?",
            ],
            46,
            17,
        ),
        "What's the weather in London?" => vec![json!({"toolCall": {"functionCalls": [
            {"id": "fc-1", "name": "get_weather", "args": {"city": "London"}}
        ]}})],
        "Thanks, that's all." => answered(&["You're welcome. Goodbye!"], 152, 6),
        _ => Vec::new(),
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}
