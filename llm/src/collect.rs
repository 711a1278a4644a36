//! Turning a stream of chunks into one answer.

use futures_util::StreamExt;

use super::{LlmError, LlmResponse, LlmStream};

/// Reads `stream` to its end and joins it into one answer: the texts concatenated, the
/// function calls in order, the last finish reason and the last usage reported.
pub async fn collect_stream(mut stream: LlmStream) -> Result<LlmResponse, LlmError> {
    let mut response = LlmResponse::default();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        response.text.push_str(&chunk.text);
        response.function_calls.extend(chunk.function_calls);
        if chunk.finish_reason.is_some() {
            response.finish_reason = chunk.finish_reason;
        }
        if chunk.usage.is_some() {
            response.usage = chunk.usage;
        }
    }
    Ok(response)
}
