//! An MCP `tools/call` result → what the model gets.
//!
//! - `isError: true` → [`ToolError::ExecutionFailed`] with the result's text: the model
//!   reads ``{"error": "tool `x` failed: <text>"}``.
//! - `structuredContent` that is a JSON object → that object, as the response.
//! - content that is all text → `{"result": "<the texts, one per line>"}`.
//! - anything else (images, audio, resources) → `{"content": [<the blocks as MCP writes
//!   them>]}`.
//!
//! An MCP error (JSON-RPC error: unknown tool, invalid arguments) is
//! [`ToolError::ExecutionFailed`]; a transport failure (the connection closed, the process
//! died) is [`ToolError::Unreachable`].

use rmcp::ServiceError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::ToolError;

/// The answer for a `tools/call` result of tool `tool` (the declared name).
pub(crate) fn from_result(tool: &str, result: CallToolResult) -> Result<Value, ToolError> {
    if result.is_error == Some(true) {
        let text = texts(&result.content)
            .unwrap_or_else(|| "the MCP server reported an error without text".to_owned());
        return Err(ToolError::ExecutionFailed {
            tool: tool.to_owned(),
            message: text,
        });
    }
    if let Some(Value::Object(object)) = result.structured_content {
        return Ok(Value::Object(object));
    }
    let mut object = Map::new();
    match texts(&result.content) {
        Some(text) => {
            object.insert("result".into(), Value::String(text));
        }
        None => {
            let blocks = serde_json::to_value(&result.content).unwrap_or(Value::Null);
            object.insert("content".into(), blocks);
        }
    }
    Ok(Value::Object(object))
}

/// The error for a `tools/call` that did not produce a result.
pub(crate) fn from_service_error(tool: &str, server: &str, error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(data) => ToolError::ExecutionFailed {
            tool: tool.to_owned(),
            message: data.message.to_string(),
        },
        ServiceError::Cancelled { .. } => ToolError::Cancelled {
            tool: tool.to_owned(),
        },
        other => ToolError::Unreachable {
            tool: tool.to_owned(),
            message: format!("the MCP server `{server}` failed: {other}"),
        },
    }
}

/// The blocks' texts joined by newlines, if every block is text (and there is one).
fn texts(content: &[ContentBlock]) -> Option<String> {
    if content.is_empty() {
        return None;
    }
    let texts: Option<Vec<&str>> = content
        .iter()
        .map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    texts.map(|texts| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn results_become_objects_and_errors_typed_errors() {
        let text = result(json!({"content": [{"type": "text", "text": "5"}]}));
        assert_eq!(from_result("add", text), Ok(json!({"result": "5"})));
        let two = result(json!({"content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}
        ]}));
        assert_eq!(from_result("add", two), Ok(json!({"result": "a\nb"})));
        let structured = result(json!({
            "content": [{"type": "text", "text": "{\"sum\":5}"}],
            "structuredContent": {"sum": 5}
        }));
        assert_eq!(from_result("add", structured), Ok(json!({"sum": 5})));
        let image = result(json!({"content": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]}));
        assert_eq!(
            from_result("draw", image),
            Ok(json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}))
        );
        let failed = result(json!({
            "content": [{"type": "text", "text": "no such city"}], "isError": true
        }));
        assert_eq!(
            from_result("get_weather", failed),
            Err(ToolError::ExecutionFailed {
                tool: "get_weather".into(),
                message: "no such city".into()
            })
        );
        let empty = result(json!({"content": []}));
        assert_eq!(from_result("ping", empty), Ok(json!({"content": []})));
    }

    #[test]
    fn a_closed_transport_is_unreachable() {
        assert_eq!(
            from_service_error("add", "python3 server.py", ServiceError::TransportClosed),
            ToolError::Unreachable {
                tool: "add".into(),
                message: "the MCP server `python3 server.py` failed: Transport closed".into()
            }
        );
    }
}
