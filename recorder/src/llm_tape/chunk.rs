//! One recorded chunk of a streamed model answer, shared by tapes and cassettes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One chunk of a streamed answer as it was received, with when it came.
///
/// ```json
/// {"delayNs": 12000000, "text": "Hello"}
/// ```
///
/// `finishReason`, `usage` and `functionCalls` are optional additions, written only when the
/// chunk carried them; `raw` is the chunk exactly as the REST API sent it (a `GenerateContentResponse`),
/// kept by the tape server for the calls it records, so that it can answer them again byte
/// for byte (function calls, thoughts and safety ratings included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedChunk {
    /// Nanoseconds after the previous chunk (the first chunk: after the call started).
    pub delay_ns: u64,
    /// The text the chunk added, exactly as received (may be empty).
    pub text: String,
    /// Why the model stopped, on the chunk that ended the answer (`STOP`, `MAX_TOKENS`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token usage so far, when the chunk reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
    /// The function calls the chunk carried, in order (cassette format 2; a chunk of an
    /// older file has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_calls: Vec<RecordedFunctionCall>,
    /// The chunk as the REST API sent it, when the tape server recorded the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<serde_json::Value>,
}

impl RecordedChunk {
    /// A chunk holding only `text`, `delay_ns` after the one before.
    pub fn text(delay_ns: u64, text: impl Into<String>) -> Self {
        RecordedChunk {
            delay_ns,
            text: text.into(),
            finish_reason: None,
            usage: None,
            function_calls: Vec::new(),
            raw: None,
        }
    }
}

/// Token usage of a call, as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedUsage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub response_tokens: u64,
    /// All tokens billed.
    pub total_tokens: u64,
}

/// A function call the model made, as recorded: the REST API's `functionCall` object.
///
/// ```json
/// {"id": "call-1", "name": "get_weather", "args": {"city": "Lisbon"}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedFunctionCall {
    /// The call id, when the model gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function called.
    pub name: String,
    /// The arguments, a JSON object, when the model gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
}
