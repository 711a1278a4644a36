//! What happened to each connection, reported when it ends: to the log (`tracing`), and to
//! whoever reads [`RunningServer::next_report`](super::RunningServer::next_report) (the
//! command line prints them; tests wait on them instead of sleeping).

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;

use super::error::ConnectionError;
use super::rest_session::RestReport;
use super::tape_index::ClosestTape;
use super::test_name::TestNameError;
use reel_protocol::json::PathDiff;

/// The end of one connection.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionReport {
    /// The connection's number, from 1, in accept order.
    pub conn: u64,
    /// The request path and query, credentials redacted (absent before the handshake).
    pub path: Option<String>,
    /// The test the client named (`x-reel-test`), made a file name.
    pub test: Option<String>,
    /// What happened.
    pub outcome: Outcome,
}

/// How a connection ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// The client was replayed a tape, with every frame matching up to the end.
    Replayed {
        /// The tape.
        tape: String,
        /// The connection in the tape (1-based).
        tape_conn: u32,
        /// Client frames matched.
        frames: u32,
        /// How the connection ended.
        end: End,
    },
    /// Every frame the client sent matched the tape, but the client left before the
    /// recorded client had finished: the session ended early (a client that sent only the
    /// setup, then closed or dropped). Not a pass: a test runner fails the test unless it
    /// expected this.
    Incomplete(Incomplete),
    /// A client frame did not match the tape; the connection was closed with
    /// [`CLOSE_MISMATCH`](super::CLOSE_MISMATCH).
    Diverged(Mismatch),
    /// No tape's setup matched (among the tapes of the test the client named); the
    /// connection was closed with [`CLOSE_NO_TAPE`](super::CLOSE_NO_TAPE).
    NoTape {
        /// The recorded connection closest to the client's first frame, if there is a tape.
        closest: Option<ClosestTape>,
    },
    /// The session was recorded through the upstream.
    Recorded {
        /// The new wire log.
        path: PathBuf,
        /// Client frames recorded.
        frames_out: u32,
        /// Upstream frames recorded.
        frames_in: u32,
        /// How the connection ended.
        end: End,
    },
    /// The session went through the upstream, but its recording failed (a full disk, a
    /// file size limit): entries are missing. The file is not left as a tape: it is removed
    /// when nothing reached it, or else kept under a name the tape loader skips.
    RecordFailed(RecordFailed),
    /// The session was forwarded to the upstream and not recorded (passthrough).
    Forwarded {
        /// Client frames forwarded.
        frames_out: u32,
        /// Upstream frames forwarded.
        frames_in: u32,
        /// How the connection ended.
        end: End,
    },
    /// The test name the client gave cannot name a file; closed with
    /// [`CLOSE_BAD_REQUEST`](super::CLOSE_BAD_REQUEST).
    BadTestName(TestNameError),
    /// The request was for a path that is not a Live path (answered with HTTP 404).
    NotFound,
    /// A plain `GET /healthz`, answered `200` (not reported).
    Health,
    /// A REST call beside Live (`generateContent`, `streamGenerateContent`).
    Rest(RestReport),
    /// A plain HTTP request (no WebSocket upgrade) for a Live path (answered with HTTP 426).
    NotWebSocket,
    /// The connection ended before the client's first frame.
    NoSetup {
        /// How.
        end: End,
    },
    /// A client frame was not a Live client frame; closed with 1007.
    InvalidFrame {
        /// Its number on the connection (1-based).
        frame: u32,
        /// Why it could not be read.
        error: String,
    },
    /// A client frame was over the size limit; closed with 1009.
    TooLarge {
        /// Its size, in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The connection failed before or outside a session.
    Failed(ConnectionError),
    /// The request was refused with an HTTP error before any session: 400 when it is not
    /// HTTP or not an upgrade the server can accept, 403 for a foreign `Host` or `Origin`
    /// ([`LocalAccess`](super::LocalAccess)); nothing was opened or written for it.
    Refused {
        /// The HTTP status answered.
        status: u16,
        /// Why (the answer's body).
        reason: String,
    },
}

/// How a session's connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The client closed it, with this code and reason.
    ClientClosed {
        /// The close code, if any.
        code: Option<u16>,
        /// The reason, if any.
        reason: Option<String>,
    },
    /// The client went away without a close frame.
    ClientGone {
        /// What happened.
        message: String,
    },
    /// The server side (the tape, or the upstream) closed it with this code and reason.
    ServerClosed {
        /// The close code, if any (none: the connection was dropped).
        code: Option<u16>,
        /// The reason, if any.
        reason: Option<String>,
    },
    /// The server shut down.
    Shutdown,
}

/// How far a session that ended early got ([`Outcome::Incomplete`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    /// The tape.
    pub tape: String,
    /// The connection in the tape (1-based).
    pub tape_conn: u32,
    /// Client frames matched (the setup is the first).
    pub frames: u32,
    /// Client frames the recorded connection has.
    pub total: u32,
    /// The tape's sequence number of the last client frame matched.
    pub last_matched_seq: u64,
    /// How the connection ended.
    pub end: End,
}

/// A recording that failed ([`Outcome::RecordFailed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordFailed {
    /// The wire log the recording was written to.
    pub path: PathBuf,
    /// Where what reached the file is kept (`X.wire.jsonl.failed`, which the tape loader
    /// skips), or `None` when nothing did and the file was removed.
    pub kept: Option<PathBuf>,
    /// Why: the operating system's last error.
    pub error: String,
    /// Client frames seen.
    pub frames_out: u32,
    /// Upstream frames seen.
    pub frames_in: u32,
    /// How the connection ended.
    pub end: End,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "incomplete: {} (connection {}): the session ended after {} of {} client frames (the last matched is seq {}); {}",
            self.tape, self.tape_conn, self.frames, self.total, self.last_matched_seq, self.end
        )
    }
}

impl fmt::Display for RecordFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recording {} failed ({}): entries are missing; ",
            self.path.display(),
            self.error
        )?;
        match &self.kept {
            Some(kept) => write!(f, "what was written is kept as {}", kept.display())?,
            None => write!(f, "nothing was written, the file is removed")?,
        }
        write!(
            f,
            " ({} client frames, {} server frames); {}",
            self.frames_out, self.frames_in, self.end
        )
    }
}

/// A client frame that does not match the tape.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The client frame's number on the connection (1-based; the setup is 1).
    pub frame: u32,
    /// The tape it was compared with (the closest of the candidates).
    pub tape: String,
    /// The connection in the tape (1-based).
    pub tape_conn: u32,
    /// What the tape has at that point.
    pub expected: Expected,
    /// The client's frame, canonical.
    pub actual: Value,
}

/// What the tape has where a client frame did not match.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// A different client frame.
    Frame {
        /// Its sequence number in the tape.
        seq: u64,
        /// The differences, recorded against received, in document order.
        diffs: Vec<PathDiff>,
    },
    /// Nothing: the recorded client sent no more frames on this connection.
    End,
}

impl Mismatch {
    /// The first differing path, if the tape had a frame there.
    pub fn first_path(&self) -> Option<&str> {
        match &self.expected {
            Expected::Frame { diffs, .. } => diffs.first().map(|d| d.path.as_str()),
            Expected::End => None,
        }
    }
}

fn show(value: &Option<Value>) -> String {
    match value {
        Some(value) => {
            let text = value.to_string();
            if text.chars().count() > 120 {
                let cut: String = text.chars().take(117).collect();
                format!("{cut}...")
            } else {
                text
            }
        }
        None => "(absent)".to_owned(),
    }
}

/// Writes diffs one per line, indented, as `path: expected X, received Y`.
pub(crate) fn write_diffs(f: &mut fmt::Formatter<'_>, diffs: &[PathDiff]) -> fmt::Result {
    for diff in diffs {
        write!(
            f,
            "\n  {}: expected {}, received {}",
            diff.path,
            show(&diff.expected),
            show(&diff.actual)
        )?;
    }
    Ok(())
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.expected {
            Expected::Frame { seq, diffs } => {
                write!(
                    f,
                    "client frame {} does not match {} (connection {}, seq {})",
                    self.frame, self.tape, self.tape_conn, seq
                )?;
                write_diffs(f, diffs)
            }
            Expected::End => write!(
                f,
                "client frame {} is past the end of {} (connection {}): the recorded client sent no more frames",
                self.frame, self.tape, self.tape_conn
            ),
        }
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code_reason =
            |f: &mut fmt::Formatter<'_>, code: &Option<u16>, reason: &Option<String>| {
                match code {
                    Some(code) => write!(f, " {code}")?,
                    None => write!(f, " (no code)")?,
                }
                match reason {
                    Some(reason) => write!(f, " {reason:?}"),
                    None => Ok(()),
                }
            };
        match self {
            End::ClientClosed { code, reason } => {
                write!(f, "the client closed")?;
                code_reason(f, code, reason)
            }
            End::ClientGone { message } => write!(f, "the client went away ({message})"),
            End::ServerClosed { code: None, .. } => {
                write!(f, "the connection was dropped, as recorded")
            }
            End::ServerClosed { code, reason } => {
                write!(f, "closed")?;
                code_reason(f, code, reason)
            }
            End::Shutdown => write!(f, "the server shut down"),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Replayed {
                tape,
                tape_conn,
                frames,
                end,
            } => write!(
                f,
                "replayed {tape} (connection {tape_conn}): {frames} client frames matched; {end}"
            ),
            Outcome::Incomplete(incomplete) => incomplete.fmt(f),
            Outcome::RecordFailed(failed) => failed.fmt(f),
            Outcome::Diverged(mismatch) => mismatch.fmt(f),
            Outcome::NoTape { closest: None } => write!(f, "no tape matches this setup (no tapes)"),
            Outcome::NoTape {
                closest: Some(closest),
            } => {
                write!(
                    f,
                    "no tape matches this setup; the closest is {} (connection {})",
                    closest.tape, closest.conn
                )?;
                write_diffs(f, &closest.diffs)
            }
            Outcome::Recorded {
                path,
                frames_out,
                frames_in,
                end,
            } => write!(
                f,
                "recorded {} ({frames_out} client frames, {frames_in} server frames); {end}",
                path.display()
            ),
            Outcome::Forwarded {
                frames_out,
                frames_in,
                end,
            } => write!(
                f,
                "forwarded ({frames_out} client frames, {frames_in} server frames, not recorded); {end}"
            ),
            Outcome::BadTestName(error) => write!(f, "bad test name: {error}"),
            Outcome::NotFound => write!(f, "not a Live path: answered 404"),
            Outcome::Health => write!(f, "a health check: answered 200"),
            Outcome::Rest(report) => report.fmt(f),
            Outcome::NotWebSocket => {
                write!(f, "a plain HTTP request on a Live path: answered 426")
            }
            Outcome::NoSetup { end } => write!(f, "ended before the first frame: {end}"),
            Outcome::InvalidFrame { frame, error } => {
                write!(
                    f,
                    "client frame {frame} is not a Live client frame: {error}"
                )
            }
            Outcome::TooLarge { size, limit } => {
                write!(
                    f,
                    "a client frame of {size} bytes is over the {limit}-byte limit"
                )
            }
            Outcome::Failed(error) => error.fmt(f),
            Outcome::Refused { status, reason } => {
                write!(f, "refused with HTTP {status}: {reason}")
            }
        }
    }
}

impl fmt::Display for ConnectionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.test {
            Some(test) => write!(
                f,
                "connection {} (test {test}): {}",
                self.conn, self.outcome
            ),
            None => write!(f, "connection {}: {}", self.conn, self.outcome),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_mismatch_reads_as_a_json_path_diff() {
        let mismatch = Mismatch {
            frame: 2,
            tape: "t.wire.jsonl".into(),
            tape_conn: 1,
            expected: Expected::Frame {
                seq: 3,
                diffs: vec![PathDiff {
                    path: "clientContent.turns[0].parts[0].text".into(),
                    expected: Some(json!("Hello")),
                    actual: Some(json!("Bye")),
                }],
            },
            actual: json!({}),
        };
        let report = ConnectionReport {
            conn: 4,
            path: None,
            test: None,
            outcome: Outcome::Diverged(mismatch.clone()),
        };
        assert_eq!(
            report.to_string(),
            "connection 4: client frame 2 does not match t.wire.jsonl (connection 1, seq 3)\n  \
             clientContent.turns[0].parts[0].text: expected \"Hello\", received \"Bye\""
        );
        assert_eq!(
            mismatch.first_path(),
            Some("clientContent.turns[0].parts[0].text")
        );
    }
}
