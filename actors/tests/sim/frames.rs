//! The model's frames, as JSON exactly as the Live API sends them, and reading the ids
//! back out of what reaches the application.

use serde_json::{Value, json};

use super::plan::Step;

/// The name of the simulation's tool.
pub const TOOL: &str = "sim_tool";

/// The name of the simulation's input-streaming tool: it listens to the caller's audio
/// (calls `l{n}`).
pub const LISTEN: &str = "sim_listen";

/// How many audio chunks a call of [`LISTEN`] hears before it answers.
pub const LISTEN_CHUNKS: u32 = 8;

/// Whether call `id` is one of the input-streaming tool's.
pub fn is_listen(id: &str) -> bool {
    id.starts_with('l')
}

/// `setupComplete`.
pub fn setup_complete() -> Value {
    json!({"setupComplete": {}})
}

/// A `goAway` with a second left.
pub fn go_away() -> Value {
    json!({"goAway": {"timeLeft": "1s"}})
}

/// The frame of a script step.
pub fn frame(step: &Step) -> Value {
    match step {
        Step::Text(n) => {
            json!({"serverContent": {"modelTurn": {"parts": [{"text": text_id(*n)}]}}})
        }
        Step::Audio(n) => json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {
            "mimeType": "audio/pcm;rate=24000",
            "data": reel_protocol::Base64Data(bytes::Bytes::copy_from_slice(&n.to_le_bytes())).encode()
        }}]}}}),
        Step::Usage(n) => json!({"usageMetadata": {"totalTokenCount": n}}),
        Step::Interrupted => json!({"serverContent": {"interrupted": true}}),
        Step::ToolCall { calls, .. } => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|id| match is_listen(id) {
                    true => json!({"id": id, "name": LISTEN, "args": {}}),
                    false => json!({"id": id, "name": TOOL, "args": {"n": call_number(id)}}),
                })
                .collect();
            json!({"toolCall": {"functionCalls": calls}})
        }
        Step::TurnComplete => json!({"serverContent": {"turnComplete": true}}),
        Step::Resumption(handle) => {
            json!({"sessionResumptionUpdate": {"newHandle": handle, "resumable": true}})
        }
        Step::GoAway => go_away(),
    }
}

/// The text of delta `n`: `t{n}`.
pub fn text_id(n: u32) -> String {
    format!("t{n}")
}

/// The delta number in a text delta the application got, if it is one of ours.
pub fn parse_text(text: &str) -> Option<u32> {
    text.strip_prefix('t')?.parse().ok()
}

/// The chunk number in an audio chunk the application got.
pub fn parse_audio(pcm: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(pcm.try_into().ok()?))
}

/// The number in a call id `c{n}`.
pub fn call_number(id: &str) -> u64 {
    id.trim_start_matches('c').parse().unwrap_or(0)
}

/// What a client frame says, as far as the model cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientSaid {
    /// The setup, presenting this resumption handle (if any).
    Setup(Option<String>),
    /// A `toolResponse` answering these call ids, in order (results that say more
    /// follow — `willContinue` — are not answers).
    ToolResponse(Vec<String>),
    /// Context the runtime sent (`clientContent` of model turns, or none with
    /// `turnComplete`): the turns' texts, and whether it asks the model to answer.
    Context(Vec<String>, bool),
    /// Anything else.
    Other,
}

/// Reads a client frame.
pub fn client_said(frame: &Value) -> ClientSaid {
    if let Some(setup) = frame.get("setup") {
        let handle = setup
            .pointer("/sessionResumption/handle")
            .and_then(Value::as_str)
            .map(str::to_owned);
        return ClientSaid::Setup(handle);
    }
    if let Some(responses) = frame.pointer("/toolResponse/functionResponses") {
        let ids = responses
            .as_array()
            .map(|responses| {
                responses
                    .iter()
                    .filter(|r| r.get("willContinue") != Some(&Value::Bool(true)))
                    .map(|r| r.get("id").and_then(Value::as_str).unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        return ClientSaid::ToolResponse(ids);
    }
    if let Some(content) = frame.get("clientContent") {
        let turns = content
            .get("turns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let prompt = content.get("turnComplete") == Some(&Value::Bool(true));
        if turns.iter().all(|t| t.get("role") == Some(&json!("model"))) {
            let texts = turns
                .iter()
                .map(|t| {
                    t.pointer("/parts/0/text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                })
                .collect();
            return ClientSaid::Context(texts, prompt);
        }
    }
    ClientSaid::Other
}
