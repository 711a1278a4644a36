//! Replaying a tape to one client.
//!
//! The client's first frame has selected the candidates: every recorded connection whose
//! first client frame matches, in tape order. Then, step by step:
//!
//! 1. the server frames recorded after the client frame just matched are sent, exactly as
//!    recorded (text or binary), at once or at the recorded pace scaled by the speed; a
//!    recorded close by the server closes with its code and reason (a recorded drop drops
//!    the connection); a recorded close by the client waits for the client to close;
//! 2. the client's next frame must match the next recorded client frame.
//!
//! When several recorded connections matched (two recordings of the same setup), the first
//! one's frames are sent, and candidates whose recorded frames differ from what was sent
//! drop out; the client's frames then pick among the others. A frame that matches no
//! candidate closes the connection with [`CLOSE_MISMATCH`] and reports the difference from
//! the closest candidate as JSON paths.

use std::sync::Arc;
use std::time::Duration;

use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use super::client_socket::{ClientEvent, ClientSocket};
use super::matching::FrameMatcher;
use super::report::{End, Expected, Incomplete, Mismatch, Outcome};
use super::tape_index::{Reply, TapeConn};
use super::{CLOSE_INVALID_FRAME, CLOSE_MISMATCH, CLOSE_SHUTDOWN, CLOSE_TOO_LARGE};

/// How fast recorded server frames are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Pace {
    /// All the frames that followed a client frame, at once. The default.
    #[default]
    AtOnce,
    /// At the recorded pace, divided by `speed` (2.0 is twice as fast).
    Recorded {
        /// Speed factor, > 0.
        speed: f64,
    },
}

impl Pace {
    pub(crate) fn wait(&self, delay_ms: u64) -> Option<Duration> {
        match self {
            Pace::AtOnce => None,
            Pace::Recorded { speed } if delay_ms > 0 => {
                Some(Duration::from_secs_f64(delay_ms as f64 / 1000.0 / speed))
            }
            Pace::Recorded { .. } => None,
        }
    }
}

/// What a replay needs besides the socket.
pub(crate) struct ReplayContext<'a> {
    pub matcher: &'a FrameMatcher,
    pub pace: Pace,
    pub shutdown: &'a CancellationToken,
}

/// How sending a step's replies ended.
enum Sent {
    /// All sent; wait for the client.
    Continue,
    /// The session is over.
    Done(Outcome),
}

/// Replays to `socket`, whose first frame matched every one of `candidates` (not empty).
pub(crate) async fn replay(
    socket: &mut ClientSocket,
    mut candidates: Vec<Arc<TapeConn>>,
    context: ReplayContext<'_>,
) -> Outcome {
    let mut step = 0usize;
    let mut matched = 1u32;
    loop {
        let Some(primary) = candidates.first().cloned() else {
            // Unreachable: the candidates are never empty.
            return Outcome::Replayed {
                tape: String::new(),
                tape_conn: 0,
                frames: matched,
                end: End::Shutdown,
            };
        };
        candidates.retain(|candidate| candidate.replies_match(&primary, step));
        match send_replies(socket, &primary, step, matched, &context).await {
            Sent::Continue => {}
            Sent::Done(outcome) => return outcome,
        }
        step += 1;
        let replayed = |end| Outcome::Replayed {
            tape: primary.tape.to_string(),
            tape_conn: primary.conn,
            frames: matched,
            end,
        };
        // The client left: a pass only if the recorded client had nothing more to send.
        let left = |end| ended(&primary, matched, end);
        let event = tokio::select! {
            event = socket.next() => event,
            () = context.shutdown.cancelled() => {
                socket.close(CLOSE_SHUTDOWN, "reel: the server is shutting down").await;
                return replayed(End::Shutdown);
            }
        };
        let frame = match event {
            ClientEvent::Frame(frame) => frame,
            ClientEvent::Closed { code, reason } => {
                return left(End::ClientClosed { code, reason });
            }
            ClientEvent::Gone { message } => return left(End::ClientGone { message }),
            ClientEvent::TooLarge { size, limit } => {
                let reason = format!("reel: frame over the {limit}-byte limit");
                socket.close(CLOSE_TOO_LARGE, &reason).await;
                return Outcome::TooLarge { size, limit };
            }
            ClientEvent::NotUtf8 { number, .. } => return super::connection::not_utf8(number),
        };
        if recorded_as_is(&candidates, step, &frame.payload) {
            // The same bytes as every candidate recorded: prepared, it could only be what
            // each expects (most clients send what they sent when the tape was recorded).
            matched += 1;
            continue;
        }
        let actual = match context.matcher.prepare(&frame.payload) {
            Ok(actual) => actual,
            Err(error) => {
                let reason = format!("reel: frame {} is not a Live client frame", frame.number);
                socket.close(CLOSE_INVALID_FRAME, &reason).await;
                return Outcome::InvalidFrame {
                    frame: frame.number,
                    error: error.to_string(),
                };
            }
        };
        match match_step(&candidates, step, frame.number, actual) {
            Ok(survivors) => candidates = survivors,
            Err(mismatch) => {
                socket
                    .close(CLOSE_MISMATCH, &mismatch_reason(&mismatch))
                    .await;
                return Outcome::Diverged(*mismatch);
            }
        }
        matched += 1;
    }
}

/// Whether every candidate recorded its client frame `step` as exactly `payload`, and reel
/// reads that frame: then the frame matches every candidate, as preparing and comparing it
/// would find (the same bytes prepare to the same form), without either.
pub(crate) fn recorded_as_is(candidates: &[Arc<TapeConn>], step: usize, payload: &[u8]) -> bool {
    !candidates.is_empty()
        && candidates.iter().all(|candidate| {
            candidate
                .steps
                .get(step)
                .and_then(|s| s.recorded.as_deref())
                .is_some_and(|recorded| recorded == payload)
        })
}

/// The candidates whose recorded client frame `step` is `actual` (prepared), or, when none
/// is, the mismatch against the closest one; `frame` is the client frame's number.
pub(crate) fn match_step(
    candidates: &[Arc<TapeConn>],
    step: usize,
    frame: u32,
    actual: serde_json::Value,
) -> Result<Vec<Arc<TapeConn>>, Box<Mismatch>> {
    let survivors: Vec<Arc<TapeConn>> = candidates
        .iter()
        .filter(|candidate| {
            candidate
                .steps
                .get(step)
                .is_some_and(|s| FrameMatcher::diff(&s.expected, &actual).is_empty())
        })
        .cloned()
        .collect();
    if survivors.is_empty() {
        return Err(Box::new(closest_mismatch(candidates, step, frame, actual)));
    }
    Ok(survivors)
}

/// Sends what `conn` recorded after its client frame `step`.
async fn send_replies(
    socket: &mut ClientSocket,
    conn: &TapeConn,
    step: usize,
    matched: u32,
    context: &ReplayContext<'_>,
) -> Sent {
    let Some(current) = conn.steps.get(step) else {
        return Sent::Continue;
    };
    let done = |end| {
        Sent::Done(Outcome::Replayed {
            tape: conn.tape.to_string(),
            tape_conn: conn.conn,
            frames: matched,
            end,
        })
    };
    for reply in &current.replies {
        let delay_ms = match reply {
            Reply::Frame { delay_ms, .. } | Reply::Close { delay_ms, .. } => *delay_ms,
        };
        if let Some(wait) = context.pace.wait(delay_ms) {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = context.shutdown.cancelled() => {
                    socket.close(CLOSE_SHUTDOWN, "reel: the server is shutting down").await;
                    return done(End::Shutdown);
                }
            }
        }
        match reply {
            Reply::Frame {
                payload, binary, ..
            } => {
                if let Err(message) = socket.send(payload.clone(), *binary).await {
                    // Replies were left unsent: the session did not run to its end.
                    return Sent::Done(Outcome::Incomplete(incomplete(
                        conn,
                        matched,
                        End::ClientGone { message },
                    )));
                }
            }
            // The recorded client closed here: wait for this one to.
            Reply::Close { mark, .. } if mark.client => return Sent::Continue,
            Reply::Close { mark, .. } => {
                // No code (or one a close frame cannot carry, 1006 say): the recorded
                // connection dropped; dropping the socket does that.
                if let Some(code) = mark.code.filter(|code| sendable(*code)) {
                    socket
                        .close(code, mark.reason.as_deref().unwrap_or_default())
                        .await;
                }
                return done(End::ServerClosed {
                    code: mark.code,
                    reason: mark.reason.clone(),
                });
            }
        }
    }
    Sent::Continue
}

/// The outcome of a session whose client left after `matched` frames, all matching
/// `conn`: replayed when the recorded client sent no more, incomplete when it did.
pub(crate) fn ended(conn: &TapeConn, matched: u32, end: End) -> Outcome {
    if usize::try_from(matched).is_ok_and(|matched| matched >= conn.steps.len()) {
        return Outcome::Replayed {
            tape: conn.tape.to_string(),
            tape_conn: conn.conn,
            frames: matched,
            end,
        };
    }
    Outcome::Incomplete(incomplete(conn, matched, end))
}

/// How far a session on `conn` got: `matched` client frames (at least the setup).
fn incomplete(conn: &TapeConn, matched: u32, end: End) -> Incomplete {
    let last = usize::try_from(matched)
        .ok()
        .and_then(|matched| matched.checked_sub(1))
        .and_then(|index| conn.steps.get(index));
    Incomplete {
        tape: conn.tape.to_string(),
        tape_conn: conn.conn,
        frames: matched,
        total: u32::try_from(conn.steps.len()).unwrap_or(u32::MAX),
        last_matched_seq: last.map_or(0, |step| step.seq),
        end,
    }
}

/// Whether a close frame may carry `code` (RFC 6455 section 7.4).
pub(crate) fn sendable(code: u16) -> bool {
    CloseCode::from(code).is_allowed()
}

/// The mismatch against the candidate closest to the client's frame.
fn closest_mismatch(
    candidates: &[Arc<TapeConn>],
    step: usize,
    frame: u32,
    actual: serde_json::Value,
) -> Mismatch {
    let mut best: Option<(&Arc<TapeConn>, Expected)> = None;
    for candidate in candidates {
        let expected = match candidate.steps.get(step) {
            Some(recorded) => Expected::Frame {
                seq: recorded.seq,
                diffs: FrameMatcher::diff(&recorded.expected, &actual),
            },
            None => Expected::End,
        };
        let better = match (&best, &expected) {
            (None, _) => true,
            (Some((_, Expected::End)), Expected::Frame { .. }) => true,
            (Some((_, Expected::Frame { diffs: a, .. })), Expected::Frame { diffs: b, .. }) => {
                b.len() < a.len()
            }
            _ => false,
        };
        if better {
            best = Some((candidate, expected));
        }
    }
    let (tape, tape_conn, expected) = match best {
        Some((conn, expected)) => (conn.tape.to_string(), conn.conn, expected),
        None => (String::new(), 0, Expected::End),
    };
    Mismatch {
        frame,
        tape,
        tape_conn,
        expected,
        actual,
    }
}

/// The close reason for a mismatch: `reel: frame N does not match the tape at PATH`, or
/// `reel: frame N is past the end of the tape` (cut to fit a close frame by the socket).
pub(crate) fn mismatch_reason(mismatch: &Mismatch) -> String {
    match mismatch.first_path() {
        Some(path) => format!(
            "reel: frame {} does not match the tape at {path}",
            mismatch.frame
        ),
        None if matches!(mismatch.expected, Expected::End) => {
            format!("reel: frame {} is past the end of the tape", mismatch.frame)
        }
        None => format!("reel: frame {} does not match the tape", mismatch.frame),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_pace_divides_by_the_speed() {
        assert_eq!(Pace::AtOnce.wait(500), None);
        assert_eq!(
            Pace::Recorded { speed: 2.0 }.wait(500),
            Some(Duration::from_millis(250))
        );
        assert_eq!(Pace::Recorded { speed: 1.0 }.wait(0), None);
    }
}
