//! The model's side of the demo conversation, as a script: what a weather-savvy model says
//! to each frame of the demo. It stands in for the API when the bundled tape is made (see
//! `tests/it/demo_tape.rs`), so the tape is produced by reel itself, not written by hand.
//! The frames' builders ([`model_text`], [`answered`], [`tool_call`]), [`first_response`]
//! and [`play_script`] serve every scripted model of the examples' bundled tapes.

use std::time::Duration;

use reel_actors::testing::ServerConn;
use reel_protocol::{ClientMessage, FunctionResponse};
use serde_json::{Value, json};

/// How long the scripted model "thinks" before each answer (virtual time when the tape is
/// made, so the tape has realistic gaps).
pub const THINKING: Duration = Duration::from_millis(180);

/// A piece of the model's answer: a `serverContent.modelTurn` frame holding `text`.
pub fn model_text(text: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": text}]}}})
}

/// A whole answer of the model's: `text`, then `generationComplete` and `turnComplete`.
pub fn answered(text: &str) -> Vec<Value> {
    vec![
        model_text(text),
        json!({"serverContent": {"generationComplete": true}}),
        json!({"serverContent": {"turnComplete": true}}),
    ]
}

/// The model calls function `name` with `args`, as call `id`: a `toolCall` frame.
pub fn tool_call(id: &str, name: &str, args: Value) -> Value {
    json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": args}]}})
}

/// The first function response `message` carries, if it answers a tool call.
pub fn first_response(message: &ClientMessage) -> Option<&FunctionResponse> {
    message
        .tool_response
        .as_ref()?
        .function_responses
        .as_ref()?
        .first()
}

fn turn_complete(prompt: u32, response: u32) -> Value {
    json!({
        "serverContent": {"turnComplete": true},
        "usageMetadata": {
            "promptTokenCount": prompt,
            "responseTokenCount": response,
            "totalTokenCount": prompt + response
        }
    })
}

/// What the model answers to `message`: nothing for an instruction update, the next lines
/// of the conversation otherwise.
pub fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![
            json!({"setupComplete": {}}),
            json!({"sessionResumptionUpdate": {"newHandle": "demo-handle-1", "resumable": true}}),
        ];
    }
    if message.tool_response.is_some() {
        return vec![
            model_text("It's 14°C and cloudy in London right now."),
            model_text(" Anything else I can help with?"),
            json!({"serverContent": {"generationComplete": true}}),
            turn_complete(121, 19),
        ];
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
        "Hello!" => vec![
            model_text("Hi! I'm your weather assistant."),
            model_text(" Which city would you like the weather for?"),
            json!({"serverContent": {"generationComplete": true}}),
            turn_complete(48, 17),
        ],
        "What's the weather in London?" => {
            vec![tool_call("fc-1", "get_weather", json!({"city": "London"}))]
        }
        "Thanks, that's all I needed." => vec![
            model_text("You're welcome. Have a lovely day!"),
            json!({"serverContent": {"generationComplete": true}}),
            json!({"sessionResumptionUpdate": {"newHandle": "demo-handle-2", "resumable": true}}),
            turn_complete(160, 9),
        ],
        _ => Vec::new(),
    }
}

/// Plays the model on `conn` until the client closes the connection.
pub async fn play(conn: &mut ServerConn) {
    play_script(conn, THINKING, answer).await;
}

/// Plays a scripted model on `conn` until the client closes the connection: each frame that
/// reads as a client message gets the frames `answer` gives for it, after `thinking`
/// (a frame with no answer gets none, and no pause).
pub async fn play_script(
    conn: &mut ServerConn,
    thinking: Duration,
    answer: impl Fn(&ClientMessage) -> Vec<Value>,
) {
    while let Some(frame) = conn.recv().await {
        let Ok(message) = frame.message() else {
            continue;
        };
        let answers = answer(&message);
        if !answers.is_empty() {
            tokio::time::sleep(thinking).await;
        }
        for value in answers {
            conn.send_json(&value).await;
        }
    }
}
