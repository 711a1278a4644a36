//! The link seam: what the Transport actor talks to when it moves bytes.
//!
//! A link is one connection, split in two halves so reading and writing run independently:
//! a [`LinkSender`] that writes frames and a [`LinkReceiver`] that yields [`LinkEvent`]s.
//! A [`Connector`] opens links. The WebSocket connector stands behind this seam live; a test
//! script or a tape reader can stand behind it instead, and the Transport actor does not
//! know the difference.
//!
//! Errors never carry a credential: every URL in a [`LinkError`] is the redacted one
//! ([`reel_protocol::ConnectRequest::redacted_url`]).

use std::future::Future;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reel_protocol::{ConnectRequest, DEFAULT_MAX_FRAME_BYTES, FrameKind};

/// A frame's place in the session: its sequence number and session time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Sequence number, from 1, shared by both directions.
    pub seq: u64,
    /// Session time, epoch milliseconds.
    pub ts_ms: u64,
}

/// One WebSocket data frame: its kind (text or binary) and its payload, exactly as it
/// crossed (or will cross) the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkFrame {
    /// Text or binary. Google AI sends JSON in text frames, Vertex AI in binary frames.
    pub kind: FrameKind,
    /// The payload. For a text frame it is UTF-8.
    pub bytes: Bytes,
}

impl LinkFrame {
    /// A text frame.
    pub fn text(text: impl Into<String>) -> Self {
        LinkFrame {
            kind: FrameKind::Text,
            bytes: Bytes::from(text.into()),
        }
    }

    /// A binary frame.
    pub fn binary(bytes: impl Into<Bytes>) -> Self {
        LinkFrame {
            kind: FrameKind::Binary,
            bytes: bytes.into(),
        }
    }

    /// A frame of `kind` carrying `bytes` (the way a frame is rebuilt from a recording).
    pub fn new(kind: FrameKind, bytes: impl Into<Bytes>) -> Self {
        LinkFrame {
            kind,
            bytes: bytes.into(),
        }
    }
}

/// What a [`LinkReceiver`] yields.
///
/// A link yields any number of frames, then exactly one `Closed` or `Failed`, then `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// A data frame from the peer.
    Frame(LinkFrame),
    /// The peer closed the link with a close frame. The server explains why a session ended
    /// this way (for example `1007` and the reason a setup was refused), so both reach the
    /// application. A close frame without a status carries neither.
    Closed {
        /// The close code, if the close frame carried one.
        code: Option<u16>,
        /// The close reason, if the close frame carried one.
        reason: Option<String>,
    },
    /// The link broke: the connection dropped without a close frame, a frame was over the
    /// size limit, or the peer broke the protocol. The link is unusable afterwards.
    Failed(LinkError),
}

/// What [`LinkSender::try_send`] did with a frame.
#[derive(Debug)]
pub enum TrySent {
    /// Written and flushed, as [`LinkSender::send`] would have.
    Sent,
    /// Taken by the connection, but its flush could not finish without waiting: finish it
    /// with [`LinkSender::flush`] before the link is used otherwise.
    Unflushed,
    /// Not taken: the connection could not take it without waiting. Send it with
    /// [`LinkSender::send`].
    WouldWait(LinkFrame),
    /// Refused or failed, as [`LinkSender::send`] would have.
    Failed(LinkError),
}

/// The writing half of a link.
pub trait LinkSender: Send + 'static {
    /// Writes one frame; resolves once the frame has been handed to the connection
    /// (written and flushed, for a socket).
    fn send(&mut self, frame: LinkFrame) -> BoxFuture<'_, Result<(), LinkError>>;

    /// Writes one frame now if the connection takes it without waiting: the way a caller
    /// that cannot wait (the application's `send_audio`) writes in place (decision 0091).
    /// The default takes nothing: a link that does not say otherwise is written through
    /// [`LinkSender::send`] only.
    fn try_send(&mut self, frame: LinkFrame) -> TrySent {
        TrySent::WouldWait(frame)
    }

    /// Finishes writing what [`LinkSender::try_send`] left [`TrySent::Unflushed`]. The
    /// default has nothing to finish.
    fn flush(&mut self) -> BoxFuture<'_, Result<(), LinkError>> {
        Box::pin(async { Ok(()) })
    }

    /// Starts the closing handshake with `code` and `reason`. The peer's answering close
    /// arrives on the receiver as [`LinkEvent::Closed`]. Closing a link the peer has
    /// already closed succeeds.
    fn close(&mut self, code: u16, reason: String) -> BoxFuture<'_, Result<(), LinkError>>;
}

/// The reading half of a link.
///
/// Polled, as a `Stream` is, rather than asked for a future each time: the transport's
/// reader waits on its link for every frame of a session, and a boxed future a frame was
/// an allocation and, at thousands of sessions, one more cold cache line each time a frame
/// came (decision 0095). A caller that wants a future awaits `recv()` on the
/// `dyn LinkReceiver`.
pub trait LinkReceiver: Send + 'static {
    /// Polls for the next event: `Ready(Some(event))`, `Ready(None)` once `Closed` or
    /// `Failed` has been yielded, or `Pending` with `cx`'s waker registered to be woken
    /// when there may be one.
    ///
    /// Returning `Pending` loses nothing: a caller may stop polling (a `select!` that took
    /// another branch) and poll again later.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>>;
}

impl dyn LinkReceiver {
    /// The next event; `None` once `Closed` or `Failed` has been yielded.
    ///
    /// Cancel-safe: dropping the future before it resolves loses nothing, so it can sit in
    /// a `select!`. The future borrows the receiver and allocates nothing.
    pub fn recv(&mut self) -> impl Future<Output = Option<LinkEvent>> + Send + '_ {
        std::future::poll_fn(move |cx| self.poll_recv(cx))
    }
}

/// Both halves of an open link.
pub type LinkHalves = (Box<dyn LinkSender>, Box<dyn LinkReceiver>);

/// Opens links.
pub trait Connector: Send + Sync + 'static {
    /// Opens a link to `request`'s URL with its headers, within
    /// [`LinkOptions::connect_timeout`].
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>>;
}

/// How a link is opened and what it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkOptions {
    /// How long opening the link (TCP, TLS and the WebSocket handshake together) may take.
    pub connect_timeout: Duration,
    /// The largest frame (and message) accepted, in bytes, both directions. A larger inbound
    /// frame fails the link with [`LinkError::FrameTooLarge`]; a larger outbound frame is
    /// refused with the same error and the link stays usable.
    pub max_frame_bytes: usize,
}

impl LinkOptions {
    /// The default connect timeout: 10 seconds.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
}

impl Default for LinkOptions {
    fn default() -> Self {
        LinkOptions {
            connect_timeout: LinkOptions::DEFAULT_CONNECT_TIMEOUT,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }
}

/// Why a link could not be opened or broke. URLs are always redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// The connection could not be made (refused, unreachable, DNS, TLS, bad URL).
    #[error("could not connect to {url}: {message}")]
    Connect {
        /// The redacted URL.
        url: String,
        /// The connector's error: DNS, TCP, TLS or the HTTP upgrade, as text.
        message: String,
    },
    /// Opening the link took longer than the connect timeout.
    #[error("connecting to {url} timed out after {after:?}")]
    ConnectTimeout {
        /// The redacted URL.
        url: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// The server refused the WebSocket upgrade (for example HTTP 401 or 404), or answered
    /// it with something that is not a WebSocket handshake.
    #[error("the server at {url} refused the WebSocket handshake: {message}")]
    Handshake {
        /// The redacted URL.
        url: String,
        /// The HTTP status of the refusal, when the server sent one.
        status: Option<u16>,
        /// What the server said.
        message: String,
    },
    /// A frame was larger than [`LinkOptions::max_frame_bytes`].
    #[error("frame of {size} bytes is over the {limit}-byte limit")]
    FrameTooLarge {
        /// The frame's size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// A text frame to send was not UTF-8.
    #[error("a text frame must be UTF-8; this one is not ({size} bytes)")]
    InvalidText {
        /// The frame's size in bytes.
        size: usize,
    },
    /// The connection failed after it was open: dropped without a close frame, reset, or the
    /// peer broke the WebSocket protocol.
    #[error("connection failed: {message}")]
    Io {
        /// What went wrong.
        message: String,
    },
    /// The link is closed; nothing more can be sent.
    #[error("the link is closed")]
    Closed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_are_ten_seconds_and_sixteen_mebibytes() {
        let options = LinkOptions::default();
        assert_eq!(options.connect_timeout, Duration::from_secs(10));
        assert_eq!(options.max_frame_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn frame_constructors_set_the_kind() {
        assert_eq!(
            LinkFrame::text("{}"),
            LinkFrame::new(FrameKind::Text, &b"{}"[..])
        );
        assert_eq!(LinkFrame::binary(vec![1u8, 2]).kind, FrameKind::Binary);
    }

    #[test]
    fn error_texts_are_exact() {
        let error = LinkError::ConnectTimeout {
            url: "ws://h/x?key=REDACTED".into(),
            after: Duration::from_secs(10),
        };
        assert_eq!(
            error.to_string(),
            "connecting to ws://h/x?key=REDACTED timed out after 10s"
        );
        let error = LinkError::FrameTooLarge {
            size: 1025,
            limit: 1024,
        };
        assert_eq!(
            error.to_string(),
            "frame of 1025 bytes is over the 1024-byte limit"
        );
    }
}
