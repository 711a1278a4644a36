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

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::{SinkExt, StreamExt};
use reel_recorder::live_feed::{LiveMessage, MAX_LIVE_MESSAGE_BYTES, is_live_name};
use reel_recorder::wire_line::write_entry;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

pub use reel_recorder::live_feed::LIVE_FEED_PATH;

/// The most recordings one name may take (`NAME`, `NAME.2`, … `NAME.999`).
const MAX_SUFFIX: u32 = 999;

/// How long a feed closed at its cap waits for the session's answering close.
const CLOSE_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Close code of a feed that reached its cap (RFC 6455 "policy violation").
pub const CLOSE_FEED_FULL: u16 = 1008;

/// Where a live feed goes, and how much it may write.
pub(super) struct Feed {
    /// The studio's directory.
    pub(super) dir: Arc<PathBuf>,
    /// The calls streaming in now.
    pub(super) live: Arc<LiveCalls>,
    /// The most bytes the feed writes, across its files.
    pub(super) max_bytes: u64,
}

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

/// Accepts a live feed on `tcp`, whose request head (`head_len` bytes of `read`, the rest
/// already the socket's first bytes) asked for `name` with WebSocket key `key`; answers the
/// handshake, then records what arrives until the session closes the socket.
pub(super) async fn accept(
    mut tcp: TcpStream,
    feed: Feed,
    name: Option<String>,
    key: Option<Vec<u8>>,
    rest: Vec<u8>,
) {
    use tokio::io::AsyncWriteExt;
    let Feed {
        dir,
        live,
        max_bytes,
    } = feed;
    let files = match (name, key) {
        (_, None) => Err(LiveRefusal::NotWebSocket),
        (Some(name), Some(_)) if !is_live_name(&name) => Err(LiveRefusal::BadName(name)),
        (None, Some(_)) => Err(LiveRefusal::BadName(String::new())),
        (Some(name), Some(key)) => {
            let dir = Arc::clone(&dir);
            tokio::task::spawn_blocking(move || create_files(&dir, &name))
                .await
                .unwrap_or_else(|_| {
                    Err(LiveRefusal::NoFile {
                        name: String::new(),
                        reason: "the task creating it failed".into(),
                    })
                })
                .map(|files| (files, key))
        }
    };
    let (files, key) = match files {
        Ok(ok) => ok,
        Err(refusal) => {
            let body = serde_json::json!({ "error": refusal.to_string() }).to_string();
            let head = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            // One write: a WebSocket client reads the refusal's body only from what came
            // with its head (tungstenite keeps what it read past the headers), so a body in
            // a second segment would be lost.
            let _ = tcp.write_all(format!("{head}{body}").as_bytes()).await;
            let _ = tcp.shutdown().await;
            return;
        }
    };
    let accept_key = tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key);
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: {accept_key}\r\n\r\n"
    );
    if tcp.write_all(answer.as_bytes()).await.is_err() {
        return;
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_LIVE_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_LIVE_MESSAGE_BYTES));
    let socket = WebSocketStream::from_partially_read(tcp, rest, Role::Server, Some(config)).await;
    let wire_name = files.wire_name.clone();
    let paths = [files.wire_path.clone(), files.journal_path.clone()];
    live.lock().insert(wire_name.clone(), LiveStatus::default());
    let lines = record(socket, files, &live, max_bytes).await;
    if lines == 0 {
        // A feed that carried nothing (its session failed to start) leaves no recording.
        for path in paths {
            let _ = std::fs::remove_file(path);
        }
    }
    live.lock().remove(&wire_name);
}

/// Which file a message goes to.
#[derive(Debug, Clone, Copy)]
enum Sink {
    Wire,
    Journal,
    Notes,
}

/// Appends what arrives to the files, one whole line at a time, up to `max_bytes` in all;
/// returns how many lines.
async fn record(
    mut socket: WebSocketStream<TcpStream>,
    files: LiveFiles,
    live: &LiveCalls,
    max_bytes: u64,
) -> u64 {
    let files = Arc::new(Mutex::new(files));
    let mut number = 0u64;
    let mut lines = 0u64;
    let mut feed_bytes = 0u64;
    while let Some(message) = socket.next().await {
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
