//! The entries of a trace: a [`TraceRequest`] and a [`TraceResponse`] per turn (or model
//! call), with reel's optional additions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::timestamp::Timestamp;

/// One entry: `{"type":"Request",…}` or `{"type":"Response",…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum TraceEntry {
    /// What was asked.
    Request(TraceRequest),
    /// What the model answered.
    Response(TraceResponse),
}

impl TraceEntry {
    /// The turn (or call) the entry belongs to, 0-based.
    pub fn index(&self) -> u64 {
        match self {
            TraceEntry::Request(request) => request.index,
            TraceEntry::Response(response) => response.index,
        }
    }

    /// When the entry happened.
    pub fn timestamp(&self) -> Timestamp {
        match self {
            TraceEntry::Request(request) => request.timestamp,
            TraceEntry::Response(response) => response.timestamp,
        }
    }
}

/// What was asked in turn (or call) `index`.
///
/// Seed 001 has `prompt`; everything else is reel's, written only when it says something.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceRequest {
    /// The turn (or call), 0-based: Request N is the N-th request of the trace.
    pub index: u64,
    /// When the request was complete: the last input before the model's first output.
    pub timestamp: Timestamp,
    /// What the user typed (a live session's client content and realtime text; a model
    /// call's last user text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// What the user said, as the server transcribed it (live sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// What the application sent in the turn, summarized (no audio bytes), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<TraceInput>,
    /// A new system instruction the application set during the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// The model asked, when it differs from the trace's `model` (or the trace has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The text agent whose call this is, when a `reel-agents` pipeline made it (its
    /// `LlmTextAgent`'s name): each such call is a step of the pipeline's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The whole request as sent, for model calls (the REST body: contents, system
    /// instruction, generation config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

/// One thing the application sent, or a run of frames of one kind (audio).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceInput {
    /// The frame's kind, as `reel show` names it: `clientContent`, `realtimeInput.audio`,
    /// `realtimeInput.text`, `realtimeInput.activityEnd`, …
    pub kind: String,
    /// Its text, if it carried any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// How many consecutive frames of this kind (written when more than one).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub frames: u64,
    /// Playing time of the audio, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_ms: Option<f64>,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// What the model answered in turn (or call) `index`.
///
/// Seed 001 has `text`, `durationMs`, `toolCalls` and `tokenUsage`; everything else is
/// reel's, written only when it says something.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceResponse {
    /// The request this answers.
    pub index: u64,
    /// When the answer was complete (a live turn's `turnComplete`).
    pub timestamp: Timestamp,
    /// The answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// What the model said, as the server transcribed its audio (live sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// Playing time of the model's audio, in ms (live sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_ms: Option<f64>,
    /// From the request to the end of the answer, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// From the request to the model's first output (text, audio, transcript, thought or
    /// tool call), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token_ms: Option<u64>,
    /// The function calls the model made, in order, with their results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<TraceToolCall>,
    /// Tokens used, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<TokenUsage>,
    /// Why the model stopped, when it said (`STOP`, `MAX_TOKENS`, a live turn's
    /// `turnCompleteReason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The user barged in: the model was cut off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The recording ended before the answer did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The answer's streamed pieces of text, in order, when it came in more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<String>,
    /// Why the call failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A function call the model made, and what it got back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceToolCall {
    /// The function.
    pub name: String,
    /// The call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The arguments (`null` when none were given).
    #[serde(default)]
    pub arguments: Value,
    /// What the function returned (a live session's `toolResponse`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// When the model asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// From the call to its result, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The server cancelled the call (`toolCallCancellation`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

/// Tokens of one turn or call. Seed 001 has `prompt` and `completion`; each count is
/// written only when reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Tokens in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
    /// Tokens in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<u64>,
    /// All tokens billed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Tokens spent thinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thoughts: Option<u64>,
    /// Prompt tokens served from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<u64>,
}
