//! A connection report as one JSON object, for `reel serve --json` and test runners that read
//! it line by line.
//!
//! Every report has `event` (`"connection"`), `conn`, `path` (credentials redacted), `test`,
//! `outcome` (a kind, below), `close` (`{"by": "client"|"server", "code", "reason"}`, or
//! `null` when no WebSocket was opened) and `message` (the line `reel serve` prints). Then,
//! by outcome:
//!
//! | `outcome` | also |
//! |---|---|
//! | `replayed` | `tape`, `tape_conn`, `frames_matched` |
//! | `incomplete` | `tape`, `tape_conn`, `frames_matched`, `frames_total` (the recorded client's), `last_matched_seq` |
//! | `record_failed` | `recording` (the file written to), `kept` (`X.wire.jsonl.failed`, or `null`: nothing was written, the file is removed), `error`, `frames_out`, `frames_in` |
//! | `diverged` | `tape`, `tape_conn`, `frames_matched` (before the mismatch), `first_mismatch`: `{frame, seq, path, expected, actual}` (`path` `null` past the end of the tape) |
//! | `no_tape` | `closest`: `{tape, tape_conn, first_mismatch: {path, expected, actual}}` or `null` |
//! | `recorded` | `recording`, `frames_out`, `frames_in` |
//! | `forwarded` | `frames_out`, `frames_in` |
//! | `bad_test_name`, `failed`, `invalid_frame` | `error` (and `frame` for `invalid_frame`) |
//! | `too_large` | `size`, `limit` |
//! | `refused` | `status` (400, 403), `error` (the reason answered) |
//! | `not_found`, `not_websocket`, `no_setup` | — |
//! | `rest_replayed` | `method`, `model`, `cassette`, `call` (1-based), `chunks` |
//! | `rest_recorded` | `method`, `model`, `recording`, `call`, `chunks` |
//! | `rest_forwarded` | `method`, `model`, `status` |
//! | `rest_no_match` | `method`, `model`, `closest`: `{cassette, call, first_mismatch}` or `null` |
//! | `rest_refused`, `rest_failed` | `method`, `model`, `error` (and `status`) |

use serde_json::{Map, Value, json};

use super::replay_session::mismatch_reason;
use super::report::{ConnectionReport, End, Expected, Mismatch, Outcome};
use super::rest_session::RestResult;
use super::{
    CLOSE_BAD_REQUEST, CLOSE_INVALID_FRAME, CLOSE_MISMATCH, CLOSE_NO_TAPE, CLOSE_SHUTDOWN,
    CLOSE_TOO_LARGE, CLOSE_UPSTREAM, PathDiff,
};

impl ConnectionReport {
    /// The report as one JSON object: `event`, `conn`, `path`, `test`, `outcome`, `close`,
    /// `message`, and the fields of its outcome (listed in `docs/cli.md`, `reel serve
    /// --json`).
    ///
    /// ```
    /// use reel_tape_server::{ConnectionReport, Outcome};
    /// use serde_json::json;
    ///
    /// let report = ConnectionReport { conn: 3, path: Some("/nope".into()), test: None, outcome: Outcome::NotFound };
    /// assert_eq!(report.to_json(), json!({
    ///     "event": "connection", "conn": 3, "path": "/nope", "test": null,
    ///     "outcome": "not_found", "close": null,
    ///     "message": "connection 3: not a Live path: answered 404"
    /// }));
    /// ```
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("event".into(), json!("connection"));
        object.insert("conn".into(), json!(self.conn));
        object.insert("path".into(), json!(self.path));
        object.insert("test".into(), json!(self.test));
        object.insert("outcome".into(), json!(kind(&self.outcome)));
        let mut put = |key: &str, value: Value| {
            object.insert(key.to_owned(), value);
        };
        let close = match &self.outcome {
            Outcome::Replayed {
                tape,
                tape_conn,
                frames,
                end,
            } => {
                put("tape", json!(tape));
                put("tape_conn", json!(tape_conn));
                put("frames_matched", json!(frames));
                end_close(end)
            }
            Outcome::Incomplete(incomplete) => {
                put("tape", json!(incomplete.tape));
                put("tape_conn", json!(incomplete.tape_conn));
                put("frames_matched", json!(incomplete.frames));
                put("frames_total", json!(incomplete.total));
                put("last_matched_seq", json!(incomplete.last_matched_seq));
                end_close(&incomplete.end)
            }
            Outcome::RecordFailed(failed) => {
                put("recording", json!(failed.path.display().to_string()));
                put(
                    "kept",
                    json!(failed.kept.as_ref().map(|kept| kept.display().to_string())),
                );
                put("error", json!(failed.error));
                put("frames_out", json!(failed.frames_out));
                put("frames_in", json!(failed.frames_in));
                end_close(&failed.end)
            }
            Outcome::Diverged(mismatch) => {
                put("tape", json!(mismatch.tape));
                put("tape_conn", json!(mismatch.tape_conn));
                put("frames_matched", json!(mismatch.frame.saturating_sub(1)));
                put("first_mismatch", first_mismatch(mismatch));
                server_close(CLOSE_MISMATCH, Some(mismatch_reason(mismatch)))
            }
            Outcome::NoTape { closest } => {
                let closest = closest.as_ref().map(|closest| {
                    json!({
                        "tape": closest.tape,
                        "tape_conn": closest.conn,
                        "first_mismatch": closest.diffs.first().map(diff_json),
                    })
                });
                put("closest", json!(closest));
                server_close(CLOSE_NO_TAPE, None)
            }
            Outcome::Recorded {
                path,
                frames_out,
                frames_in,
                end,
            } => {
                put("recording", json!(path.display().to_string()));
                put("frames_out", json!(frames_out));
                put("frames_in", json!(frames_in));
                end_close(end)
            }
            Outcome::Forwarded {
                frames_out,
                frames_in,
                end,
            } => {
                put("frames_out", json!(frames_out));
                put("frames_in", json!(frames_in));
                end_close(end)
            }
            Outcome::BadTestName(error) => {
                put("error", json!(error.to_string()));
                server_close(
                    CLOSE_BAD_REQUEST,
                    Some(format!("reel: bad test name: {error}")),
                )
            }
            Outcome::InvalidFrame { frame, error } => {
                put("frame", json!(frame));
                put("error", json!(error));
                server_close(CLOSE_INVALID_FRAME, None)
            }
            Outcome::TooLarge { size, limit } => {
                put("size", json!(size));
                put("limit", json!(limit));
                server_close(CLOSE_TOO_LARGE, None)
            }
            Outcome::Failed(error) => {
                put("error", json!(error.to_string()));
                match error {
                    super::ConnectionError::Upstream { .. }
                    | super::ConnectionError::Recording { .. } => {
                        server_close(CLOSE_UPSTREAM, None)
                    }
                    _ => Value::Null,
                }
            }
            Outcome::NoSetup { end } => end_close(end),
            Outcome::Refused { status, reason } => {
                put("status", json!(status));
                put("error", json!(reason));
                Value::Null
            }
            Outcome::Rest(report) => {
                put("method", json!(report.method.as_str()));
                put("model", json!(report.model));
                match &report.result {
                    RestResult::Replayed {
                        cassette,
                        index,
                        chunks,
                    } => {
                        put("cassette", json!(cassette));
                        put("call", json!(index + 1));
                        put("chunks", json!(chunks));
                    }
                    RestResult::Recorded {
                        cassette,
                        index,
                        chunks,
                    } => {
                        put("recording", json!(cassette));
                        put("call", json!(index + 1));
                        put("chunks", json!(chunks));
                    }
                    RestResult::Forwarded { status } => put("status", json!(status)),
                    RestResult::NoMatch { closest } => {
                        let closest = closest.as_ref().map(|(cassette, index, diffs)| {
                            json!({
                                "cassette": cassette,
                                "call": index + 1,
                                "first_mismatch": diffs.first().map(diff_json),
                            })
                        });
                        put("closest", json!(closest));
                    }
                    RestResult::Refused { status, message } => {
                        put("status", json!(status));
                        put("error", json!(message));
                    }
                    RestResult::UpstreamFailed { message } => put("error", json!(message)),
                }
                Value::Null
            }
            Outcome::NotFound | Outcome::NotWebSocket | Outcome::Health => Value::Null,
        };
        object.insert("close".into(), close);
        object.insert("message".into(), json!(self.to_string()));
        Value::Object(object)
    }
}

/// The outcome's kind, as `outcome` names it.
fn kind(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Replayed { .. } => "replayed",
        Outcome::Incomplete(_) => "incomplete",
        Outcome::RecordFailed(_) => "record_failed",
        Outcome::Diverged(_) => "diverged",
        Outcome::NoTape { .. } => "no_tape",
        Outcome::Recorded { .. } => "recorded",
        Outcome::Forwarded { .. } => "forwarded",
        Outcome::BadTestName(_) => "bad_test_name",
        Outcome::NotFound => "not_found",
        Outcome::NotWebSocket => "not_websocket",
        Outcome::Health => "health",
        Outcome::NoSetup { .. } => "no_setup",
        Outcome::InvalidFrame { .. } => "invalid_frame",
        Outcome::TooLarge { .. } => "too_large",
        Outcome::Failed(_) => "failed",
        Outcome::Refused { .. } => "refused",
        Outcome::Rest(report) => match report.result {
            RestResult::Replayed { .. } => "rest_replayed",
            RestResult::Recorded { .. } => "rest_recorded",
            RestResult::Forwarded { .. } => "rest_forwarded",
            RestResult::NoMatch { .. } => "rest_no_match",
            RestResult::Refused { .. } => "rest_refused",
            RestResult::UpstreamFailed { .. } => "rest_failed",
        },
    }
}

fn diff_json(diff: &PathDiff) -> Value {
    json!({"path": diff.path, "expected": diff.expected, "actual": diff.actual})
}

fn first_mismatch(mismatch: &Mismatch) -> Value {
    match &mismatch.expected {
        Expected::Frame { seq, diffs } => {
            let first = diffs.first();
            json!({
                "frame": mismatch.frame,
                "seq": seq,
                "path": first.map(|d| d.path.clone()),
                "expected": first.and_then(|d| d.expected.clone()),
                "actual": first.and_then(|d| d.actual.clone()),
            })
        }
        Expected::End => json!({
            "frame": mismatch.frame,
            "seq": null,
            "path": null,
            "expected": null,
            "actual": mismatch.actual,
        }),
    }
}

fn server_close(code: u16, reason: Option<String>) -> Value {
    json!({"by": "server", "code": code, "reason": reason})
}

fn end_close(end: &End) -> Value {
    match end {
        End::ClientClosed { code, reason } => {
            json!({"by": "client", "code": code, "reason": reason})
        }
        End::ClientGone { .. } => json!({"by": "client", "code": null, "reason": null}),
        End::ServerClosed { code, reason } => {
            json!({"by": "server", "code": code, "reason": reason})
        }
        End::Shutdown => server_close(
            CLOSE_SHUTDOWN,
            Some("reel: the server is shutting down".to_owned()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_divergence_names_its_first_mismatch_and_close() {
        let report = ConnectionReport {
            conn: 2,
            path: Some("/ws/x".into()),
            test: Some("weather".into()),
            outcome: Outcome::Diverged(Mismatch {
                frame: 3,
                tape: "tapes/weather.wire.jsonl".into(),
                tape_conn: 1,
                expected: Expected::Frame {
                    seq: 5,
                    diffs: vec![PathDiff {
                        path: "clientContent.turns[0].parts[0].text".into(),
                        expected: Some(json!("Paris")),
                        actual: Some(json!("Rome")),
                    }],
                },
                actual: json!({}),
            }),
        };
        let value = report.to_json();
        assert_eq!(value["outcome"], "diverged");
        assert_eq!(value["frames_matched"], 2);
        assert_eq!(
            value["first_mismatch"],
            json!({"frame": 3, "seq": 5, "path": "clientContent.turns[0].parts[0].text", "expected": "Paris", "actual": "Rome"})
        );
        assert_eq!(
            value["close"],
            json!({"by": "server", "code": 4001, "reason": "reel: frame 3 does not match the tape at clientContent.turns[0].parts[0].text"})
        );
        assert_eq!(value["test"], "weather");
    }

    #[test]
    fn a_recording_names_its_file_and_counts() {
        let report = ConnectionReport {
            conn: 1,
            path: None,
            test: None,
            outcome: Outcome::Recorded {
                path: "tapes/t.wire.jsonl".into(),
                frames_out: 2,
                frames_in: 5,
                end: End::ClientClosed {
                    code: Some(1000),
                    reason: None,
                },
            },
        };
        let value = report.to_json();
        assert_eq!(
            (
                &value["recording"],
                &value["frames_out"],
                &value["frames_in"],
                &value["close"]
            ),
            (
                &json!("tapes/t.wire.jsonl"),
                &json!(2),
                &json!(5),
                &json!({"by": "client", "code": 1000, "reason": null})
            )
        );
    }
}
