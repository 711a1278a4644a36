//! What a background tool tells the model: that it started, how it ended, or that it was
//! cancelled.

use reel_protocol::FunctionCall;
use serde_json::{Value, json};

use super::ToolError;

/// Shapes the responses of a background (non-blocking) tool.
///
/// A background tool answers twice: at once with [`format_running`](Self::format_running)
/// (the model keeps talking), then with [`format_result`](Self::format_result) when the
/// tool is done, or [`format_cancelled`](Self::format_cancelled) if it was cancelled.
pub trait ResultFormatter: Send + Sync + 'static {
    /// The immediate acknowledgement that the tool is running.
    fn format_running(&self, call: &FunctionCall) -> Value;

    /// The final result (or error) of the tool.
    fn format_result(&self, call: &FunctionCall, result: &Result<Value, ToolError>) -> Value;

    /// The response for a call cancelled before it finished.
    fn format_cancelled(&self, call_id: &str) -> Value;
}

/// The formatter used when a background tool has none of its own.
///
/// ```
/// use reel_actors::tools::{DefaultResultFormatter, ResultFormatter, ToolError};
/// use reel_protocol::FunctionCall;
/// use serde_json::json;
///
/// let call = FunctionCall { id: Some("fc_1".into()), name: Some("find_flights".into()), ..Default::default() };
/// let formatter = DefaultResultFormatter;
/// assert_eq!(formatter.format_running(&call), json!({ "status": "running", "tool": "find_flights" }));
/// assert_eq!(
///     formatter.format_result(&call, &Ok(json!(["LH 123"]))),
///     json!({ "status": "completed", "tool": "find_flights", "result": ["LH 123"] })
/// );
/// assert_eq!(formatter.format_cancelled("fc_1"), json!({ "status": "cancelled", "call_id": "fc_1" }));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultResultFormatter;

impl ResultFormatter for DefaultResultFormatter {
    fn format_running(&self, call: &FunctionCall) -> Value {
        json!({ "status": "running", "tool": tool_name(call) })
    }

    fn format_result(&self, call: &FunctionCall, result: &Result<Value, ToolError>) -> Value {
        match result {
            Ok(value) => json!({ "status": "completed", "tool": tool_name(call), "result": value }),
            Err(error) => {
                json!({ "status": "error", "tool": tool_name(call), "error": error.to_string() })
            }
        }
    }

    fn format_cancelled(&self, call_id: &str) -> Value {
        json!({ "status": "cancelled", "call_id": call_id })
    }
}

fn tool_name(call: &FunctionCall) -> &str {
    call.name.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> FunctionCall {
        FunctionCall {
            id: Some("fc_123".into()),
            name: Some("find_flights".into()),
            args: Some(json!({ "to": "LIS" }).into()),
            ..FunctionCall::default()
        }
    }

    #[test]
    fn default_shapes_are_exact() {
        let formatter = DefaultResultFormatter;
        assert_eq!(
            formatter.format_running(&call()).to_string(),
            r#"{"status":"running","tool":"find_flights"}"#
        );
        assert_eq!(
            formatter
                .format_result(&call(), &Ok(json!({ "flights": 3 })))
                .to_string(),
            r#"{"status":"completed","tool":"find_flights","result":{"flights":3}}"#
        );
        let error = ToolError::ExecutionFailed {
            tool: "find_flights".into(),
            message: "no route".into(),
        };
        assert_eq!(
            formatter.format_result(&call(), &Err(error)).to_string(),
            r#"{"status":"error","tool":"find_flights","error":"tool `find_flights` failed: no route"}"#
        );
        assert_eq!(
            formatter.format_cancelled("fc_123").to_string(),
            r#"{"status":"cancelled","call_id":"fc_123"}"#
        );
    }
}
