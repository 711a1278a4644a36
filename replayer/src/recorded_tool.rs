//! [`RecordedTool`]: a tool that is not run but answered from a recording, declared as the
//! recording declared it.

use std::fmt;
use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use reel_actors::tools::{ToolContext, ToolError, ToolFunction};
use reel_protocol::FunctionDeclaration;
use serde_json::Value;

use crate::tape_scan::TapeScan;

/// A tool answered from a recording.
///
/// For tools whose code is not the application's and must not run again in a replay —
/// MCP tools, whose server a replay never starts. The declaration is the recorded setup's,
/// byte for byte, and each call is answered with the response the runtime sent for that
/// call id in the recording, found by a [`TapeScan`] as the tape is read. Because the tool
/// goes through the dispatcher like any other, the responses go out in the same frames,
/// in the same order, as recorded.
///
/// - A recorded `{"error": "<text>"}` comes back as [`ToolError::Replayed`] (the call
///   counts as failed, as it did) whose text is the recorded one.
/// - Any other recorded response comes back as the tool's result, as it is.
/// - A call with no recorded response (cancelled, or cut off by the end of the recording)
///   waits: the recorded cancellation, or the end of the tape, ends it as it ended then.
#[derive(Clone)]
pub struct RecordedTool {
    declaration: FunctionDeclaration,
    name: String,
    description: String,
    scan: Arc<TapeScan>,
}

impl RecordedTool {
    /// A tool declared as `declaration` (taken from a recorded setup), answered with the
    /// responses `scan` finds in the recording.
    pub fn new(declaration: FunctionDeclaration, scan: Arc<TapeScan>) -> Self {
        RecordedTool {
            name: declaration.name.clone().unwrap_or_default(),
            description: declaration.description.clone().unwrap_or_default(),
            declaration,
            scan,
        }
    }
}

impl ToolFunction for RecordedTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Option<Value> {
        self.declaration.parameters.clone()
    }

    fn declaration(&self) -> FunctionDeclaration {
        self.declaration.clone()
    }

    fn call(&self, _args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let scan = Arc::clone(&self.scan);
        let name = self.name.clone();
        async move {
            let recorded = scan.answer(&ctx.call_id, &name, None).await;
            match recorded {
                Some(response) => answer(name, response.response.unwrap_or(Value::Null)),
                // Never answered in the recording: the recorded cancellation (or the end of
                // the tape) ends the call, as it did then.
                None => std::future::pending().await,
            }
        }
        .boxed()
    }
}

/// The recorded response body as the tool's outcome.
fn answer(tool: String, response: Value) -> Result<Value, ToolError> {
    if let Value::Object(object) = &response
        && object.len() == 1
        && let Some(Value::String(text)) = object.get("error")
    {
        return Err(ToolError::Replayed {
            tool,
            text: text.clone(),
        });
    }
    Ok(response)
}

impl fmt::Debug for RecordedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recorded_error_is_a_failed_call_with_the_recorded_text() {
        assert_eq!(
            answer("t".into(), json!({"error": "tool `t` timed out after 2s"})),
            Err(ToolError::Replayed {
                tool: "t".into(),
                text: "tool `t` timed out after 2s".into()
            })
        );
        assert_eq!(
            answer("t".into(), json!({"result": "5"})),
            Ok(json!({"result": "5"}))
        );
        assert_eq!(
            answer("t".into(), json!({"error": "x", "detail": 1})),
            Ok(json!({"error": "x", "detail": 1}))
        );
    }
}
