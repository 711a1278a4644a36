//! Live attach, the studio's end: a running session (built with
//! `Live::builder().studio(addr)`) opens a WebSocket on
//! [`LIVE_FEED_PATH`]`?name=NAME` and streams its recording as
//! [`LiveMessage`]s; the studio appends them to `NAME.wire.jsonl` and `NAME.journal.jsonl`
//! in its directory, and the tree's restarts and reconnects, which no recording holds, to
//! `NAME.supervisor.jsonl` (`NAME.2…` when the name is taken; an existing file is never
//! overwritten or appended to). While the socket is open the recording is *live*: the list marks it and
//! the page polls it. When the session ends it stays, a recording like any other.
//!
//! Files are written in whole lines, one batch at a time, and every reader of the studio
//! takes a torn last line as the end of the log: a request that reads while a batch is
//! being written sees the call as it was a moment earlier, never an error.
//!
//! Bad input ends the feed, not the studio: a message that is not a [`LiveMessage`] closes
//! the socket with code 1007 and a reason naming the message's number and what was wrong;
//! what came before it stays recorded.
//!
//! A feed writes at most its cap (`--max-feed-bytes`,
//! [`StudioOptions::max_feed_bytes`](super::StudioOptions::max_feed_bytes), 256 MiB by
//! default) across its files: the line that would pass it is not written, and the socket is
//! closed with [`CLOSE_FEED_FULL`] and a reason saying so. What was written is whole lines,
//! a recording like any other. Only a session presenting the studio's token gets here
//! ([`access`](super::access)).
//!
//! The handshake is hyper's upgrade: the request (a `GET` with `Upgrade: websocket`, a
//! `Sec-WebSocket-Key` and `Sec-WebSocket-Version: 13`, else HTTP 400 with the reason) is
//! answered `101 Switching Protocols`, and the connection hyper hands over becomes the
//! feed's WebSocket. When the studio stops, a feed is closed with 1001 after the line it is
//! writing.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{
    CONNECTION, HeaderMap, HeaderValue, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use reel_recorder::live_feed::{LiveMessage, MAX_LIVE_MESSAGE_BYTES, is_live_name};
use reel_recorder::wire_line::write_entry;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

use super::http::{Answer, STOP_GRACE, Studio};

pub use reel_recorder::live_feed::LIVE_FEED_PATH;

/// The most recordings one name may take (`NAME`, `NAME.2`, … `NAME.999`).
const MAX_SUFFIX: u32 = 999;

/// How long a feed closed at its cap waits for the session's answering close.
const CLOSE_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Close code of a feed that reached its cap (RFC 6455 "policy violation").
pub const CLOSE_FEED_FULL: u16 = 1008;

/// What the studio knows of a call in progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveStatus {
    /// Messages the session dropped because the studio did not keep up.
    pub dropped: u64,
}

/// The calls streaming into the studio now, by recording file name (`NAME.wire.jsonl`).
#[derive(Debug, Default)]
pub struct LiveCalls {
    calls: Mutex<HashMap<String, LiveStatus>>,
}

impl LiveCalls {
    /// The status of recording `name` if it is live.
    pub fn status(&self, name: &str) -> Option<LiveStatus> {
        self.lock().get(name).copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, LiveStatus>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a live feed could not start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LiveRefusal {
    /// The name is not a plain file stem.
    #[error(
        "{0:?} cannot name a recording: use 1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot"
    )]
    BadName(String),
    /// The request did not ask for a WebSocket.
    #[error("{LIVE_FEED_PATH} takes a WebSocket (Upgrade: websocket with a Sec-WebSocket-Key)")]
    NotWebSocket,
    /// A WebSocket upgrade with a method other than `GET` (the method).
    #[error("a WebSocket upgrade is a GET request, not {0}")]
    NotGet(String),
    /// A WebSocket upgrade without `Sec-WebSocket-Version`.
    #[error("{LIVE_FEED_PATH} needs Sec-WebSocket-Version: 13")]
    NoVersion,
    /// A WebSocket version other than 13 (the version asked for, at most 20 characters).
    #[error("WebSocket version {0:?} is not served: Sec-WebSocket-Version must be 13")]
    BadVersion(String),
    /// Every name from `NAME` to `NAME.999` is taken, or the files cannot be created.
    #[error("cannot create a recording for {name:?} in the studio's directory: {reason}")]
    NoFile {
        /// The name asked for.
        name: String,
        /// Why.
        reason: String,
    },
}

/// The two files of one live recording, created new (never an existing one).
struct LiveFiles {
    wire_name: String,
    wire_path: PathBuf,
    journal_path: PathBuf,
    wire: File,
    journal: File,
    /// `NAME.supervisor.jsonl`, created with the first note.
    notes_path: PathBuf,
    notes: Option<File>,
}

/// Creates `NAME.wire.jsonl` and `NAME.journal.jsonl` (or `NAME.K.…` for the first K from 2
/// for which neither exists).
fn create_files(dir: &Path, name: &str) -> Result<LiveFiles, LiveRefusal> {
    let fail = |reason: String| LiveRefusal::NoFile {
        name: name.to_owned(),
        reason,
    };
    for k in 1..=MAX_SUFFIX {
        let stem = if k == 1 {
            name.to_owned()
        } else {
            format!("{name}.{k}")
        };
        let wire_path = dir.join(format!("{stem}.wire.jsonl"));
        let journal_path = dir.join(format!("{stem}.journal.jsonl"));
        if journal_path.exists() || dir.join(format!("{stem}.supervisor.jsonl")).exists() {
            continue;
        }
        let wire = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&wire_path)
        {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(fail(format!("{}: {error}", wire_path.display()))),
        };
        let journal = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&journal_path)
        {
            Ok(file) => file,
            Err(error) => {
                let _ = std::fs::remove_file(&wire_path);
                if error.kind() == std::io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(fail(format!("{}: {error}", journal_path.display())));
            }
        };
        return Ok(LiveFiles {
            wire_name: format!("{stem}.wire.jsonl"),
            notes_path: dir.join(format!("{stem}.supervisor.jsonl")),
            notes: None,
            wire_path,
            journal_path,
            wire,
            journal,
        });
    }
    Err(fail(format!(
        "{name}.wire.jsonl to {name}.{MAX_SUFFIX}.wire.jsonl are all taken"
    )))
}

/// The `name` query parameter of a live feed's request target.
pub fn requested_name(target: &str) -> Option<String> {
    let (_, query) = target.split_once('?')?;
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == "name")
        .map(|(_, value)| {
            String::from_utf8_lossy(&reel_protocol::percent_decode(value)).into_owned()
        })
}

/// Whether a request asks for a WebSocket (`Upgrade: websocket`, one of its tokens).
pub(super) fn asks_for_websocket(headers: &HeaderMap) -> bool {
    headers
        .get_all(UPGRADE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("websocket"))
}

/// The `Sec-WebSocket-Key` of a `GET` that asks for a WebSocket of version 13, or why the
/// request is not one.
fn handshake_key(headers: &HeaderMap) -> Result<&HeaderValue, LiveRefusal> {
    let key = headers
        .get(SEC_WEBSOCKET_KEY)
        .filter(|_| asks_for_websocket(headers))
        .ok_or(LiveRefusal::NotWebSocket)?;
    match headers
        .get(SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
    {
        Some(b"13") => Ok(key),
        Some(version) => Err(LiveRefusal::BadVersion(
            String::from_utf8_lossy(&version[..version.len().min(20)]).into_owned(),
        )),
        None => Err(LiveRefusal::NoVersion),
    }
}

/// The answer to a feed refused before its upgrade: HTTP 400 with the reason, and the
/// connection closed. The versions served go with it (RFC 6455 4.2.2) for a client to
/// retry with.
pub(super) fn refused(refusal: &LiveRefusal) -> Response<Full<Bytes>> {
    let mut response = Answer::error(400, &refusal.to_string()).into_response(None, false);
    response
        .headers_mut()
        .insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
    response
}

/// Opens a live feed for `request` (its head checked and its target `target`): creates
/// its files and answers `101 Switching Protocols`; once hyper hands the connection over,
/// records what arrives on its own task until the session closes the socket or the studio
/// stops. A request that is not a WebSocket upgrade of version 13, or whose name is not a
/// plain stem, or for which no file can be created, is answered 400 with the reason.
pub(super) async fn open(
    mut request: Request<Incoming>,
    target: &str,
    studio: Arc<Studio>,
) -> Response<Full<Bytes>> {
    let accept_key = match handshake_key(request.headers()) {
        Ok(key) => derive_accept_key(key.as_bytes()),
        Err(refusal) => return refused(&refusal),
    };
    let files = match requested_name(target) {
        None => Err(LiveRefusal::BadName(String::new())),
        Some(name) if !is_live_name(&name) => Err(LiveRefusal::BadName(name)),
        Some(name) => {
            let dir = Arc::clone(&studio.dir);
            tokio::task::spawn_blocking(move || create_files(&dir, &name))
                .await
                .unwrap_or_else(|_| {
                    Err(LiveRefusal::NoFile {
                        name: String::new(),
                        reason: "the task creating it failed".into(),
                    })
                })
        }
    };
    let files = match files {
        Ok(files) => files,
        Err(refusal) => return refused(&refusal),
    };
    let wire_name = files.wire_name.clone();
    // Live from the moment the session is told it may stream.
    studio
        .live
        .lock()
        .insert(wire_name.clone(), LiveStatus::default());
    let upgraded = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let paths = [files.wire_path.clone(), files.journal_path.clone()];
        let lines = match upgraded.await {
            Ok(upgraded) => {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(MAX_LIVE_MESSAGE_BYTES))
                    .max_frame_size(Some(MAX_LIVE_MESSAGE_BYTES));
                let socket = WebSocketStream::from_raw_socket(
                    TokioIo::new(upgraded),
                    Role::Server,
                    Some(config),
                )
                .await;
                record(socket, files, &studio).await
            }
            Err(error) => {
                tracing::warn!(%error, recording = %wire_name, "a live feed's upgrade failed");
                0
            }
        };
        if lines == 0 {
            // A feed that carried nothing (its session failed to start) leaves no recording.
            for path in paths {
                let _ = std::fs::remove_file(path);
            }
        }
        studio.live.lock().remove(&wire_name);
    });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(value) = HeaderValue::try_from(accept_key) {
        headers.insert(SEC_WEBSOCKET_ACCEPT, value);
    }
    response
}

/// Which file a message goes to.
#[derive(Debug, Clone, Copy)]
enum Sink {
    Wire,
    Journal,
    Notes,
}

/// Appends what arrives to the files, one whole line at a time, up to the studio's
/// `max_feed_bytes` in all, until the session closes the socket or the studio stops;
/// returns how many lines.
async fn record<S: AsyncRead + AsyncWrite + Unpin>(
    mut socket: WebSocketStream<S>,
    files: LiveFiles,
    studio: &Studio,
) -> u64 {
    let (live, max_bytes) = (&*studio.live, studio.max_feed_bytes);
    let files = Arc::new(Mutex::new(files));
    let mut number = 0u64;
    let mut lines = 0u64;
    let mut feed_bytes = 0u64;
    loop {
        // Between lines: a line being written is finished before the studio stops.
        let message = tokio::select! {
            message = socket.next() => message,
            () = studio.stop.cancelled() => {
                close_on_stop(&mut socket).await;
                break;
            }
        };
        let Some(message) = message else { break };
        let text = match message {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        number += 1;
        let message = match serde_json::from_str::<LiveMessage>(text.as_str()) {
            Ok(message) => message,
            Err(error) => {
                let reason = format!("message {number} is not a live-feed message: {error}");
                let reason: String = reason.chars().take(120).collect();
                let _ = socket
                    .send(Message::Close(Some(CloseFrame {
                        code: CloseCode::Invalid,
                        reason: reason.into(),
                    })))
                    .await;
                break;
            }
        };
        let mut line = Vec::with_capacity(text.len());
        let target = match &message {
            LiveMessage::Wire(entry) => write_entry(entry, &mut line).map(|()| Some(Sink::Wire)),
            LiveMessage::Journal(mutation) => {
                serde_json::to_writer(&mut line, mutation).map(|()| Some(Sink::Journal))
            }
            LiveMessage::Note(note) => {
                serde_json::to_writer(&mut line, note).map(|()| Some(Sink::Notes))
            }
            LiveMessage::Dropped(count) => {
                let wire_name = lock(&files).wire_name.clone();
                if let Some(status) = live.lock().get_mut(&wire_name) {
                    status.dropped = *count;
                }
                Ok(None)
            }
        };
        let Ok(Some(sink)) = target else { continue };
        line.push(b'\n');
        let size = u64::try_from(line.len()).unwrap_or(u64::MAX);
        if feed_bytes.saturating_add(size) > max_bytes {
            let reason = format!(
                "reel studio: the feed reached its {max_bytes}-byte cap (--max-feed-bytes); the recording ends here"
            );
            let reason: String = reason.chars().take(120).collect();
            let _ = socket
                .send(Message::Close(Some(CloseFrame {
                    code: CloseCode::from(CLOSE_FEED_FULL),
                    reason: reason.into(),
                })))
                .await;
            tracing::warn!(
                recording = %lock(&files).wire_name,
                max_bytes,
                "a live feed reached its cap; the recording ends there"
            );
            // Read (and drop) what the session still sends until it answers the close, so
            // the socket is not reset under the reason before the session reads it.
            let answered = async { while let Some(Ok(_)) = socket.next().await {} };
            let _ = tokio::time::timeout(CLOSE_ANSWER_WAIT, answered).await;
            break;
        }
        feed_bytes += size;
        let shared = Arc::clone(&files);
        let written = tokio::task::spawn_blocking(move || {
            let mut files = lock(&shared);
            let files = &mut *files;
            let file = match sink {
                Sink::Wire => &mut files.wire,
                Sink::Journal => &mut files.journal,
                Sink::Notes => match &mut files.notes {
                    Some(file) => file,
                    None => files.notes.insert(
                        OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&files.notes_path)?,
                    ),
                },
            };
            file.write_all(&line)
        })
        .await;
        if !matches!(written, Ok(Ok(()))) {
            tracing::warn!(
                recording = %lock(&files).wire_name,
                "cannot write a live recording; the feed stops here"
            );
            break;
        }
        lines += 1;
    }
    lines
}

/// Closes a feed because the studio stops (1001, going away), within [`STOP_GRACE`]: a
/// session that reads nothing cannot hold the stop.
async fn close_on_stop<S: AsyncRead + AsyncWrite + Unpin>(socket: &mut WebSocketStream<S>) {
    let close = socket.send(Message::Close(Some(CloseFrame {
        code: CloseCode::Away,
        reason: "reel studio stopped".into(),
    })));
    let _ = tokio::time::timeout(STOP_GRACE, close).await;
}

fn lock(files: &Mutex<LiveFiles>) -> std::sync::MutexGuard<'_, LiveFiles> {
    files.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_the_next_free_suffix() {
        let dir = tempdir("taken");
        std::fs::write(dir.join("call.wire.jsonl"), "").unwrap();
        std::fs::write(dir.join("call.2.journal.jsonl"), "").unwrap();
        let files = create_files(&dir, "call").unwrap();
        assert_eq!(files.wire_name, "call.3.wire.jsonl");
        assert!(dir.join("call.3.journal.jsonl").is_file());
        assert_eq!(std::fs::read(dir.join("call.wire.jsonl")).unwrap(), b"");
    }

    #[test]
    fn the_name_comes_from_the_query() {
        assert_eq!(
            requested_name("/api/live?x=1&name=a%2Eb"),
            Some("a.b".to_owned())
        );
        assert_eq!(requested_name("/api/live"), None);
    }

    fn tempdir(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("reel-live-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
