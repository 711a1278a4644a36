//! One REST call beside Live (`generateContent`, `streamGenerateContent`): answered from
//! the test's cassette, or forwarded to the upstream and recorded into it, as the mode says.
//! Each call is one HTTP/1.1 exchange on its own connection (`Connection: close`).

use std::time::Duration;

use bytes::Bytes;
use reel_recorder::cassette::Interaction;
use reel_recorder::llm_tape::{RecordedChunk, RecordedUsage};
use reel_recorder::trace::Timestamp;
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::listener::Shared;
use super::replay_session::Pace;
use super::report::Outcome;
use super::rest_cassettes::{Lookup, RecordedCall, append, call_request, cassette_path};
use super::rest_path::{RestMethod, RestPath};
use super::rest_upstream::forward;
use super::test_name::TestName;
use super::{Mode, PathDiff};

/// What happened to one REST call.
#[derive(Debug, Clone, PartialEq)]
pub struct RestReport {
    /// The method called.
    pub method: RestMethod,
    /// The model named in the path.
    pub model: String,
    /// How it was answered.
    pub result: RestResult,
}

/// How a REST call was answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RestResult {
    /// From a cassette.
    Replayed {
        /// The cassette.
        cassette: String,
        /// The call's place in it (0-based).
        index: usize,
        /// The pieces sent.
        chunks: usize,
    },
    /// Forwarded to the upstream and recorded.
    Recorded {
        /// The cassette written.
        cassette: String,
        /// The call's place in it (0-based).
        index: usize,
        /// The pieces recorded.
        chunks: usize,
    },
    /// Forwarded to the upstream, not recorded (passthrough, or an error status).
    Forwarded {
        /// The upstream's HTTP status.
        status: u16,
    },
    /// No recorded call matches; answered `400` with the reason.
    NoMatch {
        /// The closest recorded call of the test (cassette, place), and how the call
        /// differs from it, if the test has any.
        closest: Option<(String, usize, Vec<PathDiff>)>,
    },
    /// The request could not be served as it was (answered with this status).
    Refused {
        /// The HTTP status sent.
        status: u16,
        /// Why.
        message: String,
    },
    /// The upstream could not be reached or its answer read (answered `502`).
    UpstreamFailed {
        /// What went wrong.
        message: String,
    },
}

impl std::fmt::Display for RestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let call = format!("{} {}", self.method.as_str(), self.model);
        match &self.result {
            RestResult::Replayed {
                cassette,
                index,
                chunks,
            } => write!(
                f,
                "{call}: answered from {cassette} (call {}, {chunks} piece(s))",
                index + 1
            ),
            RestResult::Recorded {
                cassette,
                index,
                chunks,
            } => write!(
                f,
                "{call}: recorded into {cassette} (call {}, {chunks} piece(s))",
                index + 1
            ),
            RestResult::Forwarded { status } => {
                write!(f, "{call}: forwarded, answered {status}, not recorded")
            }
            RestResult::NoMatch { closest: None } => {
                write!(
                    f,
                    "{call}: no recorded call matches (none recorded); answered 400"
                )
            }
            RestResult::NoMatch {
                closest: Some((cassette, index, diffs)),
            } => {
                write!(
                    f,
                    "{call}: no recorded call matches; the closest is {cassette} (call {}); answered 400",
                    index + 1
                )?;
                super::report::write_diffs(f, diffs)
            }
            RestResult::Refused { status, message } => {
                write!(f, "{call}: refused with {status}: {message}")
            }
            RestResult::UpstreamFailed { message } => {
                write!(f, "{call}: the upstream failed: {message}")
            }
        }
    }
}

/// The Gemini API's error shape, for an answer the SDKs report with its message.
fn error_body(code: u16, status: &str, message: &str) -> String {
    json!({"error": {"code": code, "message": message, "status": status}}).to_string()
}

async fn answer<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    status: u16,
    reason: &str,
    content_type: &str,
    body: &[u8],
) {
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = client.write_all(head.as_bytes()).await;
    let _ = client.write_all(body).await;
    let _ = client.flush().await;
    let _ = client.shutdown().await;
}

/// Answers `status` with the API's error shape carrying `message`, and closes.
pub(crate) async fn refuse<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    status: u16,
    reason: &str,
    message: String,
) -> RestResult {
    let api_status = if status == 400 {
        "INVALID_ARGUMENT"
    } else {
        "FAILED_PRECONDITION"
    };
    let body = error_body(status, api_status, &message);
    answer(client, status, reason, "application/json", body.as_bytes()).await;
    RestResult::Refused { status, message }
}

/// Serves the call at `path` with `body` (read whole) to `client`.
pub(crate) async fn serve_rest<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    path: RestPath,
    body: Bytes,
    test: Option<&TestName>,
    shared: &Shared,
) -> Outcome {
    let result = run(client, &path, body, test, shared).await;
    Outcome::Rest(RestReport {
        method: path.method,
        model: path.model,
        result,
    })
}

async fn run<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    path: &RestPath,
    body: Bytes,
    test: Option<&TestName>,
    shared: &Shared,
) -> RestResult {
    let request_body: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(error) => {
            let message = format!("reel: the request body is not JSON: {error}");
            return refuse(client, 400, "Bad Request", message).await;
        }
    };
    let request = call_request(path.method, &path.model, &request_body);
    let replay_only = match shared.mode {
        Mode::Replay => true,
        Mode::Once => {
            shared.rest.had_cassette(test) || test.is_some_and(|t| shared.index.has_test(t))
        }
        Mode::Auto => false,
        Mode::Record | Mode::Passthrough => {
            return record(client, path, &body, request, test, shared).await;
        }
    };
    match shared.rest.lookup(&request, test, shared.index.matcher()) {
        Lookup::Found(call) => replay(client, path, &call, shared.pace).await,
        Lookup::Missing(closest) if replay_only => {
            let whose = match test {
                Some(test) => format!("of test {test} "),
                None => String::new(),
            };
            let mut message = format!(
                "reel: no recorded {} call {whose}matches this request",
                path.method.as_str()
            );
            if let Some((cassette, index, diffs)) = &closest
                && let Some(first) = diffs.first()
            {
                message.push_str(&format!(
                    "; the closest ({}, call {}) differs at {}",
                    cassette.display(),
                    index + 1,
                    first.path
                ));
            }
            let body = error_body(400, "FAILED_PRECONDITION", &message);
            answer(
                client,
                400,
                "Bad Request",
                "application/json",
                body.as_bytes(),
            )
            .await;
            RestResult::NoMatch {
                closest: closest
                    .map(|(cassette, index, diffs)| (cassette.display().to_string(), index, diffs)),
            }
        }
        Lookup::Missing(_) => record(client, path, &body, request, test, shared).await,
    }
}

/// Answers from a recorded call: its pieces as the API sent them, as JSON, as events, or as
/// a JSON array, as the client asked.
async fn replay<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    path: &RestPath,
    call: &RecordedCall,
    pace: Pace,
) -> RestResult {
    let pieces: Option<Vec<&Value>> = call
        .interaction
        .response
        .iter()
        .map(|chunk| chunk.raw.as_ref())
        .collect();
    let Some(pieces) = pieces else {
        let message = format!(
            "reel: call {} of {} was recorded without the API's answer (`raw`); record it again through reel serve",
            call.index + 1,
            call.cassette.display()
        );
        return refuse(client, 500, "Internal Server Error", message).await;
    };
    let json_body = match (path.method, path.sse) {
        (RestMethod::Generate, _) => {
            Some(pieces.first().map(|v| v.to_string()).unwrap_or_default())
        }
        (RestMethod::Stream, false) => {
            Some(Value::Array(pieces.iter().map(|v| (*v).clone()).collect()).to_string())
        }
        (RestMethod::Stream, true) => None,
    };
    match json_body {
        Some(body) => {
            answer(
                client,
                200,
                "OK",
                "application/json; charset=UTF-8",
                body.as_bytes(),
            )
            .await;
        }
        None => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            let _ = client.write_all(head.as_bytes()).await;
            for (piece, chunk) in pieces.iter().zip(&call.interaction.response) {
                if let Some(wait) = pace.wait(chunk.delay_ns / 1_000_000) {
                    tokio::time::sleep(wait).await;
                }
                let event = format!("data: {piece}\r\n\r\n");
                if client.write_all(event.as_bytes()).await.is_err() {
                    break;
                }
                let _ = client.flush().await;
            }
            let _ = client.shutdown().await;
        }
    }
    RestResult::Replayed {
        cassette: call.cassette.display().to_string(),
        index: call.index,
        chunks: pieces.len(),
    }
}

/// Forwards the call; records a `200` answer into the test's cassette unless passing
/// through.
async fn record<W: AsyncWrite + Unpin + ?Sized>(
    client: &mut W,
    path: &RestPath,
    body: &Bytes,
    request: serde_json::Map<String, Value>,
    test: Option<&TestName>,
    shared: &Shared,
) -> RestResult {
    let Some(upstream) = &shared.upstream else {
        // Unreachable: recording servers have an upstream.
        return refuse(
            client,
            500,
            "Internal Server Error",
            "reel: no upstream".into(),
        )
        .await;
    };
    let recorded_at = Timestamp::from_epoch_ms(reel_recorder::clock::wall_clock_ms());
    let forwarded = match forward(upstream, path, body, client).await {
        Ok(forwarded) => forwarded,
        Err(failed) => {
            let message = failed.message;
            if failed.answered {
                // Part of the answer reached the client: it can only see the connection end.
                let _ = client.shutdown().await;
            } else {
                let body = error_body(502, "UNAVAILABLE", &format!("reel: {message}"));
                answer(
                    client,
                    502,
                    "Bad Gateway",
                    "application/json",
                    body.as_bytes(),
                )
                .await;
            }
            return RestResult::UpstreamFailed { message };
        }
    };
    let _ = client.shutdown().await;
    let (Some(dir), true) = (
        shared
            .record_dir
            .as_deref()
            .filter(|_| shared.mode != Mode::Passthrough),
        forwarded.status == 200,
    ) else {
        return RestResult::Forwarded {
            status: forwarded.status,
        };
    };
    let mut previous = Duration::ZERO;
    let response: Vec<RecordedChunk> = forwarded
        .chunks
        .iter()
        .map(|(at, raw)| {
            let delay = at.saturating_sub(previous);
            previous = *at;
            chunk_of(delay, raw)
        })
        .collect();
    let interaction = Interaction {
        request: request.clone(),
        duration_ns: Some(u64::try_from(previous.as_nanos()).unwrap_or(u64::MAX)),
        failure: None,
        usage: response.iter().rev().find_map(|chunk| chunk.usage),
        response,
        recorded_at,
    };
    let cassette = cassette_path(dir, test);
    let appended = {
        let _one_writer = shared.rest_writes.lock().await;
        append(&cassette, interaction.clone())
    };
    match appended {
        Ok(index) => {
            let chunks = interaction.response.len();
            if shared.mode == Mode::Auto {
                shared.rest.add(RecordedCall {
                    cassette: cassette.clone(),
                    index,
                    request,
                    interaction,
                });
            }
            RestResult::Recorded {
                cassette: cassette.display().to_string(),
                index,
                chunks,
            }
        }
        Err(error) => RestResult::UpstreamFailed {
            message: format!("the call was answered but not recorded: {error}"),
        },
    }
}

/// A recorded chunk for one piece of an answer: its text (first candidate's text parts,
/// thoughts left out), finish reason, usage and function calls for readers of the cassette,
/// and the piece itself to answer with.
fn chunk_of(delay: Duration, raw: &Value) -> RecordedChunk {
    let candidate = &raw["candidates"][0];
    let text: String = candidate["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|part| part["thought"] != Value::Bool(true))
                .filter_map(|part| part["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let usage = raw.get("usageMetadata").map(|usage| {
        let count = |key: &str| usage[key].as_u64().unwrap_or(0);
        RecordedUsage {
            prompt_tokens: count("promptTokenCount"),
            response_tokens: count("candidatesTokenCount"),
            total_tokens: count("totalTokenCount"),
        }
    });
    RecordedChunk {
        delay_ns: u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX),
        text,
        finish_reason: candidate["finishReason"].as_str().map(str::to_owned),
        usage,
        // The calls are also kept apart (cassette format 2), for replays that read the
        // cassette without the tape server.
        function_calls: candidate["content"]["parts"]
            .as_array()
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|part| part.get("functionCall"))
                    .filter_map(|call| serde_json::from_value(call.clone()).ok())
                    .collect()
            })
            .unwrap_or_default(),
        raw: Some(raw.clone()),
    }
}

#[cfg(test)]
mod tests {
    use reel_recorder::llm_tape::RecordedFunctionCall;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pieces_function_calls_are_recorded_beside_it() {
        let raw = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Checking."},
            {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}}},
            {"functionCall": {"name": "now"}}
        ]}, "finishReason": "STOP"}]});
        let chunk = chunk_of(Duration::from_millis(2), &raw);
        assert_eq!(chunk.text, "Checking.");
        assert_eq!(
            chunk.function_calls,
            [
                RecordedFunctionCall {
                    id: Some("c1".into()),
                    name: "get_weather".into(),
                    args: Some(json!({"city": "Lisbon"})),
                },
                RecordedFunctionCall {
                    id: None,
                    name: "now".into(),
                    args: None,
                },
            ]
        );
        assert_eq!(chunk.raw, Some(raw));
    }
}
