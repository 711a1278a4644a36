//! Recording one client's session through the upstream (or, passing through, only
//! forwarding it).
//!
//! The proxy connects to the upstream with its own credential, forwards every frame both
//! ways unchanged (same bytes, same frame type) and records each one as it passes: client
//! frames `out`, upstream frames `in`, a close marker where a side closed.
//!
//! A recording is never left partial because the client went away:
//! when the client closes or drops while the upstream still owes something (the
//! `setupComplete` after a setup, the end of a model turn after client input), the proxy
//! keeps reading the upstream, recording what it sends, until the turn completes or the
//! drain timeout passes; then it closes the upstream with the client's close code and
//! records the client's close.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use reel_recorder::wire_log::Direction;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Utf8Bytes};
use tokio_util::sync::CancellationToken;

use super::client_socket::{ClientEvent, ClientFrame, ClientSocket, truncate_utf8};
use super::live_path::LivePath;
use super::open_recordings::OpenRecordings;
use super::recording::{Naming, Recording, recording_stem};
use super::replay_session::sendable;
use super::report::{End, Outcome, RecordFailed};
use super::test_name::TestName;
use super::turn_tracker::{Owed, TurnTracker};
use super::upstream::Upstream;
use super::{CLOSE_INVALID_FRAME, CLOSE_SHUTDOWN, CLOSE_TOO_LARGE, CLOSE_UPSTREAM};
use reel_recorder::redact::Redactor;

/// What a proxy session needs besides the socket.
pub(crate) struct ProxyContext<'a> {
    pub upstream: &'a Upstream,
    /// Where to record; `None`: pass through, record nothing.
    pub record_dir: Option<&'a Path>,
    /// The test the client named: its recording is the test's file.
    pub test: Option<&'a TestName>,
    pub redactor: Option<&'a Redactor>,
    pub live_path: Option<&'a LivePath>,
    pub drain_timeout: Duration,
    pub max_frame_bytes: usize,
    pub shutdown: &'a CancellationToken,
    /// The recordings in progress, this one among them while it is written.
    pub open: &'a OpenRecordings,
}

/// How the client side ended, for the upstream close and the recording.
struct ClientLeft {
    end: End,
    /// The close code to close the upstream with and record.
    code: Option<u16>,
    reason: Option<String>,
}

/// Proxies and records the session whose first client frame is `first`.
pub(crate) async fn proxy(
    socket: &mut ClientSocket,
    first: ClientFrame,
    context: ProxyContext<'_>,
) -> Outcome {
    let mut upstream = match context
        .upstream
        .connect(context.live_path, context.max_frame_bytes)
        .await
    {
        Ok(upstream) => upstream,
        Err(error) => {
            socket
                .close(CLOSE_UPSTREAM, "reel: the upstream could not be reached")
                .await;
            return Outcome::Failed(error);
        }
    };
    let recording = match context.record_dir {
        None => None,
        Some(dir) => {
            let naming = match context.test {
                Some(test) => Naming::Test(test),
                None => Naming::Model(recording_stem(&first.payload)),
            };
            match Recording::create(dir, &naming, context.redactor) {
                Ok(recording) => {
                    tracing::info!(recording = %recording.path().display(), "recording");
                    Some(recording)
                }
                Err(error) => {
                    let _ = upstream.close(None).await;
                    socket
                        .close(CLOSE_UPSTREAM, "reel: cannot create the recording")
                        .await;
                    return Outcome::Failed(error);
                }
            }
        }
    };
    // The recording is in progress until this function returns.
    let _held = recording
        .as_ref()
        .map(|recording| context.open.hold(recording.path()));
    let mut recording = Kept {
        recording,
        frames_out: 0,
        frames_in: 0,
    };
    let mut tracker = TurnTracker::default();
    let finished = |recording: Kept, end: End| recording.finish(end);

    recording.frame(Direction::Out, &first.payload, first.binary);
    tracker.client_sent(&first.payload);
    let mut upstream_ok = upstream
        .send(message(first.payload, first.binary))
        .await
        .is_ok();

    let left = loop {
        tokio::select! {
            event = socket.next() => match event {
                ClientEvent::Frame(frame) => {
                    recording.frame(Direction::Out, &frame.payload, frame.binary);
                    tracker.client_sent(&frame.payload);
                    if upstream_ok {
                        upstream_ok = upstream.send(message(frame.payload, frame.binary)).await.is_ok();
                    }
                }
                ClientEvent::Closed { code, reason } => {
                    break ClientLeft { end: End::ClientClosed { code, reason: reason.clone() }, code, reason };
                }
                ClientEvent::Gone { message } => {
                    break ClientLeft { end: End::ClientGone { message }, code: None, reason: None };
                }
                ClientEvent::NotUtf8 { number, reason } => {
                    break ClientLeft {
                        end: End::ClientGone { message: format!("frame {number} was a text frame that is not valid UTF-8") },
                        code: Some(CLOSE_INVALID_FRAME),
                        reason: Some(reason),
                    };
                }
                ClientEvent::TooLarge { size: _, limit } => {
                    let reason = format!("reel: frame over the {limit}-byte limit");
                    socket.close(CLOSE_TOO_LARGE, &reason).await;
                    break ClientLeft {
                        end: End::ClientGone { message: "a frame over the size limit".to_owned() },
                        code: Some(CLOSE_TOO_LARGE),
                        reason: Some(reason),
                    };
                }
            },
            next = upstream.next() => match upstream_event(next) {
                UpstreamEvent::Frame(payload, binary) => {
                    recording.frame(Direction::In, &payload, binary);
                    tracker.upstream_sent(&payload);
                    if let Err(message) = socket.send(payload, binary).await {
                        break ClientLeft { end: End::ClientGone { message }, code: None, reason: None };
                    }
                }
                UpstreamEvent::Skip => {}
                UpstreamEvent::Closed { code, reason } => {
                    recording.close(code, reason.clone(), false);
                    // Without a code the upstream dropped: so does the client's connection, when
                    // the caller drops the socket.
                    if let Some(code) = code.filter(|code| sendable(*code)) {
                        socket.close(code, reason.as_deref().unwrap_or_default()).await;
                    }
                    return finished(recording, End::ServerClosed { code, reason });
                }
            },
            () = context.shutdown.cancelled() => {
                let reason = "reel: the server is shutting down";
                socket.close(CLOSE_SHUTDOWN, reason).await;
                break ClientLeft { end: End::Shutdown, code: Some(CLOSE_SHUTDOWN), reason: Some(reason.to_owned()) };
            }
        }
    };

    // The client is gone: finish what the upstream owes, then close it.
    if tracker.owed() != Owed::Nothing {
        let deadline = tokio::time::Instant::now() + context.drain_timeout;
        while tracker.owed() != Owed::Nothing {
            let Ok(next) = tokio::time::timeout_at(deadline, upstream.next()).await else {
                tracing::warn!(
                    owed = ?tracker.owed(),
                    timeout_ms = context.drain_timeout.as_millis() as u64,
                    "the client left and the upstream did not finish in time; the recording ends mid-turn"
                );
                break;
            };
            match upstream_event(next) {
                UpstreamEvent::Frame(payload, binary) => {
                    recording.frame(Direction::In, &payload, binary);
                    tracker.upstream_sent(&payload);
                }
                UpstreamEvent::Skip => {}
                UpstreamEvent::Closed { code, reason } => {
                    recording.close(code, reason, false);
                    return finished(recording, left.end);
                }
            }
        }
    }
    let close = CloseFrame {
        code: left.code.unwrap_or(1000).into(),
        reason: Utf8Bytes::from(truncate_utf8(
            left.reason.as_deref().unwrap_or_default(),
            super::client_socket::MAX_CLOSE_REASON_BYTES,
        )),
    };
    let _ = upstream.close(Some(close)).await;
    recording.close(left.code, left.reason, true);
    finished(recording, left.end)
}

/// What the proxy keeps of a session: its recording (none when passing through) and the
/// frame counts.
struct Kept {
    recording: Option<Recording>,
    frames_out: u32,
    frames_in: u32,
}

impl Kept {
    fn frame(&mut self, dir: Direction, payload: &Bytes, binary: bool) {
        match dir {
            Direction::Out => self.frames_out += 1,
            Direction::In => self.frames_in += 1,
        }
        if let Some(recording) = &mut self.recording {
            recording.frame(dir, payload, binary);
        }
    }

    fn close(&mut self, code: Option<u16>, reason: Option<String>, client: bool) {
        if let Some(recording) = &mut self.recording {
            recording.close(code, reason, client);
        }
    }

    fn finish(self, end: End) -> Outcome {
        match self.recording {
            Some(recording) => {
                let finished = recording.finish();
                match finished.failure {
                    None => Outcome::Recorded {
                        path: finished.path,
                        frames_out: finished.frames_out,
                        frames_in: finished.frames_in,
                        end,
                    },
                    Some(failure) => Outcome::RecordFailed(RecordFailed {
                        path: finished.path,
                        kept: failure.kept,
                        error: failure.error,
                        frames_out: finished.frames_out,
                        frames_in: finished.frames_in,
                        end,
                    }),
                }
            }
            None => Outcome::Forwarded {
                frames_out: self.frames_out,
                frames_in: self.frames_in,
                end,
            },
        }
    }
}

/// A frame for the upstream, of the type the client used.
fn message(payload: Bytes, binary: bool) -> Message {
    if binary {
        return Message::Binary(payload);
    }
    match Utf8Bytes::try_from(payload.clone()) {
        Ok(text) => Message::Text(text),
        Err(_) => Message::Binary(payload),
    }
}

/// What the upstream did next.
enum UpstreamEvent {
    Frame(Bytes, bool),
    Skip,
    Closed {
        code: Option<u16>,
        reason: Option<String>,
    },
}

fn upstream_event(next: Option<Result<Message, WsError>>) -> UpstreamEvent {
    match next {
        Some(Ok(Message::Text(text))) => UpstreamEvent::Frame(Bytes::from(text), false),
        Some(Ok(Message::Binary(bytes))) => UpstreamEvent::Frame(bytes, true),
        Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => UpstreamEvent::Skip,
        Some(Ok(Message::Close(frame))) => match frame {
            Some(frame) => UpstreamEvent::Closed {
                code: Some(u16::from(frame.code)),
                reason: Some(frame.reason.as_str().to_owned()).filter(|r| !r.is_empty()),
            },
            None => UpstreamEvent::Closed {
                code: None,
                reason: None,
            },
        },
        Some(Err(error)) => UpstreamEvent::Closed {
            code: None,
            reason: Some(upstream_failure(&error)),
        },
        None => UpstreamEvent::Closed {
            code: None,
            reason: Some("connection dropped without a close frame".to_owned()),
        },
    }
}

fn upstream_failure(error: &WsError) -> String {
    match error {
        WsError::ConnectionClosed
        | WsError::AlreadyClosed
        | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            "connection dropped without a close frame".to_owned()
        }
        other => format!("connection failed: {other}"),
    }
}
