//! Reading the API's answers: a `GenerateContentResponse` becomes an [`LlmChunk`], an error
//! body becomes [`LlmError::Http`].

use reel_protocol::{Content, PartKind};
use serde::Deserialize;

use crate::{LlmChunk, LlmError, LlmUsage};

/// How much of an error body that is not the API's JSON error goes into the message.
const MAX_ERROR_EXCERPT_CHARS: usize = 500;

/// The fields of a `GenerateContentResponse` this client reads; the rest is ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    candidates: Option<Vec<WireCandidate>>,
    #[serde(default)]
    prompt_feedback: Option<WirePromptFeedback>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    /// An error sent inside a stream, after the answer had started.
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCandidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
    #[serde(default)]
    block_reason_message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    total_token_count: Option<u64>,
}

/// `{"error": {"code", "message", "status"}}`.
#[derive(Debug, Default, Deserialize)]
struct WireErrorBody {
    error: WireError,
}

#[derive(Debug, Default, Deserialize)]
struct WireError {
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    message: Option<String>,
}

/// Where an answer came from, for the errors it may turn into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    /// The URL called (it never holds a credential).
    pub(crate) url: &'a str,
    /// The HTTP status the answer came with.
    pub(crate) status: u16,
    /// A credential to keep out of any message the API echoes back.
    pub(crate) secret: Option<&'a str>,
}

/// Reads one `GenerateContentResponse`: the text of the first candidate's parts (thoughts
/// left out), its function calls in order, its finish reason and the usage. A blocked prompt is [`LlmError::Blocked`]; an
/// `error` object is [`LlmError::Http`]; JSON that does not parse is [`LlmError::Decode`]
/// saying `context`.
pub(crate) fn read_chunk(
    json: &[u8],
    origin: Origin<'_>,
    context: impl FnOnce() -> String,
) -> Result<LlmChunk, LlmError> {
    let response: WireResponse =
        serde_json::from_slice(json).map_err(|error| LlmError::Decode {
            context: context(),
            reason: error.to_string(),
        })?;
    if let Some(error) = response.error {
        return Err(http_error(origin, error.code, error.message));
    }
    if let Some(reason) = response.prompt_feedback.and_then(blocked_reason) {
        return Err(LlmError::Blocked { reason });
    }
    let candidate = response.candidates.and_then(|mut all| {
        if all.is_empty() {
            None
        } else {
            Some(all.swap_remove(0))
        }
    });
    let (content, finish_reason) = match candidate {
        Some(candidate) => (candidate.content, candidate.finish_reason),
        None => (None, None),
    };
    let parts = content
        .and_then(|content| content.parts)
        .unwrap_or_default();
    let text = parts
        .iter()
        .filter_map(|part| match part.kind() {
            PartKind::Text(text) => Some(text.to_owned()),
            _ => None,
        })
        .collect();
    let function_calls = parts
        .into_iter()
        .filter_map(|part| part.function_call)
        .collect();
    let usage = response.usage_metadata.map(|usage| LlmUsage {
        prompt_tokens: usage.prompt_token_count.unwrap_or(0),
        response_tokens: usage.candidates_token_count.unwrap_or(0),
        total_tokens: usage.total_token_count.unwrap_or(0),
    });
    Ok(LlmChunk {
        text,
        finish_reason,
        usage,
        function_calls,
    })
}

/// The error for an answer with an error status: the API's `error.message` when the body
/// is its JSON error (alone or as the first item of an array), else an excerpt of the body,
/// else the status's reason phrase.
pub(crate) fn error_answer(body: &[u8], origin: Origin<'_>) -> LlmError {
    // The array first: serde would also read `[{"error": …}]` as a struct, field by field.
    let parsed = serde_json::from_slice::<Vec<WireErrorBody>>(body)
        .map(|mut all| {
            if all.is_empty() {
                WireErrorBody::default()
            } else {
                all.swap_remove(0)
            }
        })
        .or_else(|_| serde_json::from_slice::<WireErrorBody>(body));
    let message = match parsed {
        Ok(WireErrorBody { error }) if error.message.is_some() => error.message,
        _ => {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            (!text.is_empty()).then(|| text.chars().take(MAX_ERROR_EXCERPT_CHARS).collect())
        }
    };
    http_error(origin, None, message)
}

fn http_error(origin: Origin<'_>, code: Option<u16>, message: Option<String>) -> LlmError {
    let status = code.unwrap_or(origin.status);
    let message = message.filter(|m| !m.is_empty()).unwrap_or_else(|| {
        hyper::StatusCode::from_u16(status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .unwrap_or("no message")
            .to_owned()
    });
    LlmError::Http {
        status,
        url: origin.url.to_owned(),
        message: scrub(message, origin.secret),
    }
}

fn blocked_reason(feedback: WirePromptFeedback) -> Option<String> {
    let reason = feedback.block_reason?;
    Some(match feedback.block_reason_message {
        Some(message) if !message.is_empty() => format!("{reason}: {message}"),
        _ => reason,
    })
}

/// `text` with every occurrence of `secret` replaced by `REDACTED`.
fn scrub(text: String, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() && text.contains(secret) => {
            text.replace(secret, "REDACTED")
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: Origin<'static> = Origin {
        url: "http://h/v1beta/models/m:generateContent",
        status: 200,
        secret: Some("sekrit"),
    };

    fn chunk(json: &str) -> Result<LlmChunk, LlmError> {
        read_chunk(json.as_bytes(), ORIGIN, || "the response body".into())
    }

    #[test]
    fn text_parts_are_joined_thoughts_left_out_and_function_calls_kept() {
        let chunk = chunk(
            r#"{"candidates":[{"content":{"role":"model","parts":[
                {"text":"thinking…","thought":true},{"text":"Hel"},{"functionCall":{"name":"f"}},{"text":"lo"}]},
                "finishReason":"STOP"},{"content":{"parts":[{"text":"second candidate"}]}}],
                "usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":9,"thoughtsTokenCount":3},
                "modelVersion":"gemini-2.5-flash"}"#,
        )
        .unwrap();
        assert_eq!(
            chunk,
            LlmChunk {
                text: "Hello".into(),
                finish_reason: Some("STOP".into()),
                usage: Some(LlmUsage {
                    prompt_tokens: 4,
                    response_tokens: 2,
                    total_tokens: 9
                }),
                function_calls: vec![reel_protocol::FunctionCall {
                    name: Some("f".into()),
                    ..Default::default()
                }],
            }
        );
    }

    #[test]
    fn an_answer_without_candidates_is_an_empty_chunk() {
        assert_eq!(chunk("{}").unwrap(), LlmChunk::default());
        assert_eq!(
            chunk(r#"{"candidates":[],"usageMetadata":{"promptTokenCount":1}}"#).unwrap(),
            LlmChunk {
                usage: Some(LlmUsage {
                    prompt_tokens: 1,
                    ..LlmUsage::default()
                }),
                ..LlmChunk::default()
            }
        );
    }

    #[test]
    fn a_block_reason_is_blocked() {
        let error = chunk(r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#).unwrap_err();
        assert_eq!(error.to_string(), "the model refused the request: SAFETY");
        let error = chunk(
            r#"{"promptFeedback":{"blockReason":"OTHER","blockReasonMessage":"not allowed"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the model refused the request: OTHER: not allowed"
        );
    }

    #[test]
    fn bad_json_is_a_decode_error_saying_where() {
        let error = read_chunk(b"{\"candidates\":", ORIGIN, || {
            "event 2 of the stream".into()
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "could not read the model's answer (event 2 of the stream): \
             EOF while parsing a value at line 1 column 14"
        );
    }

    #[test]
    fn an_error_object_in_an_answer_is_an_http_error() {
        let error =
            chunk(r#"{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#)
                .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the model API answered 503 for http://h/v1beta/models/m:generateContent: overloaded"
        );
    }

    #[test]
    fn error_bodies_give_the_api_message_or_an_excerpt() {
        let origin = Origin {
            status: 400,
            ..ORIGIN
        };
        let message = |body: &str| match error_answer(body.as_bytes(), origin) {
            LlmError::Http {
                status: 400,
                message,
                ..
            } => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message(
                r#"{"error":{"code":400,"message":"bad key sekrit","status":"INVALID_ARGUMENT"}}"#
            ),
            "bad key REDACTED"
        );
        assert_eq!(
            message(r#"[{"error":{"code":400,"message":"in an array"}}]"#),
            "in an array"
        );
        assert_eq!(
            message("  <html>proxy says no</html>\n"),
            "<html>proxy says no</html>"
        );
        assert_eq!(message(""), "Bad Request");
        assert_eq!(message(&"x".repeat(600)).len(), 500);
    }
}
