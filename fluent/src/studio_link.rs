//! Live attach: a running session streams its recording to `reel studio` as it happens
//! ([`LiveBuilder::studio`]).
//!
//! The link is one more recorder beside the session's own: every wire entry and journal
//! mutation is queued (never awaited on the session's path) and a task sends them over one
//! WebSocket to the studio's [`LIVE_FEED_PATH`] as [`LiveMessage`]s. The studio writes them
//! to `NAME.wire.jsonl` and `NAME.journal.jsonl` in its directory, where they are a
//! recording like any other. The queue is bounded: a studio that cannot keep up loses
//! messages (counted, and told to the studio, which shows the gap), the session never
//! waits for it. The studio going away mid-call is logged once and costs the session
//! nothing.
//!
//! The studio writes a feed only for a session presenting the token it printed at start
//! ([`LiveBuilder::studio_token`], or [`STUDIO_TOKEN_ENV`]), sent as `Authorization:
//! Bearer` so it never appears in a URL or a log line.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::SinkExt;
use reel_actors::{EventStream, LiveEvent};
use reel_protocol::Secret;
use reel_recorder::journal::{JournalSink, StateMutation};
use reel_recorder::live_feed::{LIVE_FEED_PATH, LiveMessage, SessionNote, is_live_name};
use reel_recorder::wire_log::{WireEntry, WireRecorder};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::http::header::AUTHORIZATION;

use crate::builder::LiveBuilder;
use crate::error::ConnectError;

/// How many messages may wait for the studio; more are dropped and counted.
pub const STUDIO_QUEUE: usize = 16_384;

/// The most messages sent before the socket is flushed.
const BATCH: usize = 256;

/// The environment variable a session reads the studio's token from when the builder was
/// given none ([`LiveBuilder::studio_token`]).
pub const STUDIO_TOKEN_ENV: &str = "REEL_STUDIO_TOKEN";

/// Where a session streams to: the studio's address, the recording's name there, and the
/// studio's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StudioTarget {
    pub(crate) addr: String,
    pub(crate) name: Option<String>,
    pub(crate) token: Option<Secret>,
}

/// The sending end of a live feed: a [`WireRecorder`] and a [`JournalSink`] that queue
/// for the studio.
pub struct StudioLink {
    queue: mpsc::Sender<LiveMessage>,
    dropped: Arc<AtomicU64>,
}

impl fmt::Debug for StudioLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StudioLink")
            .field("queued", &(STUDIO_QUEUE - self.queue.capacity()))
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl StudioLink {
    /// Connects to the studio at `addr` (`host:port`, or a `ws://` URL) and starts sending
    /// in a task of its own; the recording is called `name` there. The studio's token is
    /// taken from [`STUDIO_TOKEN_ENV`]. Fails when `name` is not a plain file stem or the
    /// studio does not answer or refuses.
    pub async fn connect(addr: &str, name: &str) -> Result<StudioLink, ConnectError> {
        StudioLink::connect_with_token(addr, name, None).await
    }

    /// [`connect`](StudioLink::connect), presenting `token` (the one `reel studio` printed;
    /// `None`: [`STUDIO_TOKEN_ENV`], if set) as `Authorization: Bearer`: never in the URL,
    /// which may be logged.
    pub async fn connect_with_token(
        addr: &str,
        name: &str,
        token: Option<&Secret>,
    ) -> Result<StudioLink, ConnectError> {
        if !is_live_name(name) {
            return Err(ConnectError::Studio {
                addr: addr.to_owned(),
                reason: format!(
                    "{name:?} cannot name a recording: use 1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot"
                ),
            });
        }
        let base = addr.trim_end_matches('/');
        let base = base
            .strip_prefix("http://")
            .map_or_else(|| base.to_owned(), |rest| format!("ws://{rest}"));
        let url = if base.starts_with("ws://") || base.starts_with("wss://") {
            format!("{base}{LIVE_FEED_PATH}?name={name}")
        } else {
            format!("ws://{base}{LIVE_FEED_PATH}?name={name}")
        };
        let fail = |reason: String| ConnectError::Studio {
            addr: addr.to_owned(),
            reason,
        };
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|error| fail(format!("{url} is not a WebSocket address: {error}")))?;
        let token = token
            .cloned()
            .or_else(|| std::env::var(STUDIO_TOKEN_ENV).ok().map(Secret::new));
        if let Some(token) = token {
            let value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
                .map_err(|_| fail("the studio token cannot go in a header".to_owned()))?;
            request.headers_mut().insert(AUTHORIZATION, value);
        }
        let (socket, _) = match tokio_tungstenite::connect_async(request).await {
            Ok(connected) => connected,
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let body = response
                    .body()
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default()
                    .into_owned();
                return Err(fail(format!(
                    "{url} refused the feed with HTTP {}: {}",
                    response.status().as_u16(),
                    body.trim()
                )));
            }
            Err(error) => {
                return Err(fail(format!(
                    "{url} did not answer as a studio: {error}; is `reel studio` running there?"
                )));
            }
        };
        let (queue, receiver) = mpsc::channel(STUDIO_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        tokio::spawn(send_all(socket, receiver, Arc::clone(&dropped), url));
        Ok(StudioLink { queue, dropped })
    }

    /// Messages dropped because the studio did not keep up (or went away).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Sends the events of `session` that leave no trace in a recording — restarts,
    /// reconnects, a resume — as [`SessionNote`]s, stamped with this process's clock.
    /// `session` must be subscribed before the session's first event.
    pub(crate) fn forward_notes(self: &Arc<Self>, mut session: EventStream) {
        let link = Arc::clone(self);
        tokio::spawn(async move {
            while let Some(envelope) = session.recv().await {
                let (kind, detail) = match envelope.event {
                    LiveEvent::Restarted {
                        actor,
                        restarts,
                        reason,
                    } => (
                        "restarted",
                        format!("{actor} restarted ({restarts}): {reason}"),
                    ),
                    LiveEvent::Reconnecting { attempt, reason } => (
                        "reconnecting",
                        format!("reconnecting (attempt {attempt}): {reason}"),
                    ),
                    LiveEvent::Reconnected { resumed } => (
                        "reconnected",
                        if resumed {
                            "reconnected, the session resumed".to_owned()
                        } else {
                            "reconnected, a new session".to_owned()
                        },
                    ),
                    LiveEvent::Resumed { phase, turn_count } => (
                        "resumed",
                        format!("resumed from a snapshot: phase {phase:?}, {turn_count} turns"),
                    ),
                    _ => continue,
                };
                let ts_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                link.push(LiveMessage::Note(SessionNote {
                    ts_ms,
                    kind: kind.to_owned(),
                    detail,
                }));
            }
        });
    }

    fn push(&self, message: LiveMessage) {
        if self.queue.try_send(message).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Sends what the session queues, in batches, until the session drops its recorders; then
/// closes the socket, which tells the studio the call ended.
async fn send_all(
    mut socket: Socket,
    mut receiver: mpsc::Receiver<LiveMessage>,
    dropped: Arc<AtomicU64>,
    url: String,
) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut told = 0;
    while receiver.recv_many(&mut batch, BATCH).await > 0 {
        let lost = dropped.load(Ordering::Relaxed);
        if lost != told {
            batch.push(LiveMessage::Dropped(lost));
            told = lost;
        }
        let mut failed = None;
        for message in batch.drain(..) {
            let text = match serde_json::to_string(&message) {
                Ok(text) => text,
                Err(error) => {
                    failed = Some(error.to_string());
                    break;
                }
            };
            if let Err(error) = socket.feed(Message::text(text)).await {
                failed = Some(error.to_string());
                break;
            }
        }
        if failed.is_none()
            && let Err(error) = socket.flush().await
        {
            failed = Some(error.to_string());
        }
        if let Some(error) = failed {
            tracing::warn!(%url, %error, "the studio link broke; the session goes on without it");
            receiver.close();
            // What is still queued is lost to the studio: count it.
            let mut rest = 0;
            while receiver.recv().await.is_some() {
                rest += 1;
            }
            dropped.fetch_add(rest, Ordering::Relaxed);
            return;
        }
    }
    let _ = socket.close(None).await;
}

impl WireRecorder for StudioLink {
    fn record(&self, entry: WireEntry) {
        self.push(LiveMessage::Wire(entry));
    }
}

impl JournalSink for StudioLink {
    fn record(&self, mutation: &StateMutation) {
        self.push(LiveMessage::Journal(mutation.clone()));
    }
}

/// The session's own wire recorder (if any) and the studio link: the recorder's errors
/// are the session's recording errors, the link's drops are not.
pub(crate) struct WireTee {
    pub(crate) recording: Option<Arc<dyn WireRecorder>>,
    pub(crate) link: Arc<StudioLink>,
}

impl WireRecorder for WireTee {
    fn record(&self, entry: WireEntry) {
        match &self.recording {
            Some(recording) => {
                WireRecorder::record(&*self.link, entry.clone());
                recording.record(entry);
            }
            None => WireRecorder::record(&*self.link, entry),
        }
    }

    fn flush(&self) {
        if let Some(recording) = &self.recording {
            recording.flush();
        }
    }

    fn error_count(&self) -> u64 {
        self.recording.as_ref().map_or(0, |r| r.error_count())
    }
}

/// The session's own journal sink (if any) and the studio link.
pub(crate) struct JournalTee {
    pub(crate) journal: Option<Arc<dyn JournalSink>>,
    pub(crate) link: Arc<StudioLink>,
}

impl JournalSink for JournalTee {
    fn record(&self, mutation: &StateMutation) {
        JournalSink::record(&*self.link, mutation);
        if let Some(journal) = &self.journal {
            journal.record(mutation);
        }
    }

    fn flush(&self) {
        if let Some(journal) = &self.journal {
            journal.flush();
        }
    }

    fn does_io(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| j.does_io())
    }

    fn flush_blocks(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| j.flush_blocks())
    }
}

impl LiveBuilder {
    /// Streams the session to `reel studio` at `addr` (`127.0.0.1:7878`, or a `ws://` URL)
    /// while it runs: its frames and state changes appear in the studio as they happen,
    /// and stay there as a recording afterwards. The recording is named after the wire log
    /// file (`calls/support.wire.jsonl` → `support`), else `session`; the studio adds
    /// `.2`, `.3`, … when the name is taken.
    ///
    /// The studio's token goes with [`studio_token`](LiveBuilder::studio_token) (or the
    /// `REEL_STUDIO_TOKEN` environment variable): without it the studio refuses the feed.
    /// The studio must answer when the session starts ([`ConnectError::Studio`] otherwise);
    /// after that it is best effort: the session never waits for it (a bounded queue of
    /// [`STUDIO_QUEUE`] messages; what overflows is dropped and the studio shows how much),
    /// and a studio that goes away costs the session nothing. A replay does not stream.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().record_wire("calls/support.wire.jsonl").studio("127.0.0.1:7878");
    /// # drop(builder);
    /// ```
    pub fn studio(mut self, addr: impl Into<String>) -> Self {
        let token = self.studio_token_given();
        self.recording.studio = Some(StudioTarget {
            addr: addr.into(),
            name: None,
            token,
        });
        self
    }

    /// [`studio`](LiveBuilder::studio), with the name the recording gets in the studio.
    pub fn studio_as(mut self, addr: impl Into<String>, name: impl Into<String>) -> Self {
        let token = self.studio_token_given();
        self.recording.studio = Some(StudioTarget {
            addr: addr.into(),
            name: Some(name.into()),
            token,
        });
        self
    }

    /// The token `reel studio` printed when it started: a live feed is written only for a
    /// session that presents it (sent as `Authorization: Bearer`, never logged). Without
    /// it, the session reads [`STUDIO_TOKEN_ENV`] (`REEL_STUDIO_TOKEN`). Given before or
    /// after [`studio`](LiveBuilder::studio), alike.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().studio("127.0.0.1:7878").studio_token("3f9a…");
    /// # drop(builder);
    /// ```
    pub fn studio_token(mut self, token: impl Into<String>) -> Self {
        let token = Secret::new(token.into());
        match &mut self.recording.studio {
            Some(target) => target.token = Some(token),
            None => self.recording.studio_token = Some(token),
        }
        self
    }

    /// A token given before the studio's address.
    fn studio_token_given(&mut self) -> Option<Secret> {
        self.recording
            .studio
            .as_ref()
            .and_then(|target| target.token.clone())
            .or_else(|| self.recording.studio_token.take())
    }
}
