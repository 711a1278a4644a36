//! Between the model types ([`LlmRequest`], [`LlmChunk`] and its function calls, [`LlmUsage`]) and their recorded
//! form in tapes and cassettes (reel-recorder's JSON-level types).

use std::time::Duration;

use reel_protocol::FunctionCall;
use reel_recorder::llm_tape::{RecordedChunk, RecordedFunctionCall, RecordedUsage};
use serde_json::{Map, Value};

use super::{LlmChunk, LlmRequest, LlmUsage, TapeError};

/// The request as it is recorded: its JSON object (the Gemini REST API's camelCase).
pub(crate) fn request_json(request: &LlmRequest) -> Result<Map<String, Value>, TapeError> {
    match serde_json::to_value(request) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(TapeError::Encode {
            reason: format!("it became {} instead of an object", kind_of(&other)),
        }),
        Err(error) => Err(TapeError::Encode {
            reason: error.to_string(),
        }),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `chunk` as recorded, `delay` after the one before.
pub(crate) fn record_chunk(chunk: &LlmChunk, delay: Duration) -> RecordedChunk {
    RecordedChunk {
        delay_ns: nanos(delay),
        text: chunk.text.clone(),
        finish_reason: chunk.finish_reason.clone(),
        usage: chunk.usage.map(record_usage),
        function_calls: chunk.function_calls.iter().map(record_call).collect(),
        raw: None,
    }
}

/// `call` as recorded: its id, name and arguments (a REST answer's calls carry nothing
/// else; a call without a name is recorded with an empty one).
fn record_call(call: &FunctionCall) -> RecordedFunctionCall {
    RecordedFunctionCall {
        id: call.id.clone(),
        name: call.name.clone().unwrap_or_default(),
        args: call.args.clone().map(serde_json::Value::from),
    }
}

/// The call a recorded call stands for.
fn replay_call(call: &RecordedFunctionCall) -> FunctionCall {
    FunctionCall {
        id: call.id.clone(),
        name: Some(call.name.clone()),
        args: call.args.clone().map(reel_protocol::Args::from),
        ..FunctionCall::default()
    }
}

/// The chunk a recorded chunk stands for.
pub(crate) fn replay_chunk(chunk: &RecordedChunk) -> LlmChunk {
    LlmChunk {
        text: chunk.text.clone(),
        finish_reason: chunk.finish_reason.clone(),
        usage: chunk.usage.map(|usage| LlmUsage {
            prompt_tokens: usage.prompt_tokens,
            response_tokens: usage.response_tokens,
            total_tokens: usage.total_tokens,
        }),
        function_calls: chunk.function_calls.iter().map(replay_call).collect(),
    }
}

/// `usage` as recorded.
pub(crate) fn record_usage(usage: LlmUsage) -> RecordedUsage {
    RecordedUsage {
        prompt_tokens: usage.prompt_tokens,
        response_tokens: usage.response_tokens,
        total_tokens: usage.total_tokens,
    }
}

/// `duration` in whole nanoseconds (saturating at `u64::MAX`, some 584 years).
pub(crate) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The request's last user text, cut to 80 characters, for error messages.
pub(crate) fn prompt_summary(request: &LlmRequest) -> Option<String> {
    const LIMIT: usize = 80;
    let text = request.last_user_text()?;
    Some(match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}
