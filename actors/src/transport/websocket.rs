//! The live link: a WebSocket (tokio-tungstenite over rustls with the `ring` provider) behind
//! the [`Connector`] seam.
//!
//! - `ws://` and `wss://`; the request's headers (e.g. `Authorization: Bearer`) go with the
//!   upgrade request; TCP, TLS and the handshake together must finish within
//!   [`LinkOptions::connect_timeout`].
//! - Trusted roots: the Mozilla set from `webpki-roots`, plus any certificates added with
//!   [`WebSocketConnector::with_root_certificates`] or
//!   [`WebSocketConnector::with_root_certificates_pem`] (a local server's self-signed one).
//! - Text and binary frames both arrive as [`LinkFrame`]s with their kind. Pings are answered
//!   and never surface; pongs are dropped.
//! - A close frame from the peer becomes [`LinkEvent::Closed`] with its code and reason.
//!   `Closed` means exactly that: a close frame arrived. A connection that ends any other way
//!   (TCP ended or reset without a close frame) becomes [`LinkEvent::Failed`] with
//!   [`LinkError::Io`], whose message is [`DROPPED_WITHOUT_CLOSE`] for an ended stream and
//!   [`CONNECTION_RESET`] for a reset. The Transport actor can treat every `Failed` as
//!   "reconnect" and every `Closed` as "the server said why".
//! - An inbound frame over [`LinkOptions::max_frame_bytes`] fails the link with
//!   [`LinkError::FrameTooLarge`] before its payload is read. The receiver cannot write, so
//!   the owner closes the link (`close(1009, …)`) or drops it.
//! - No error text contains a credential: URLs are redacted and any credential value that a
//!   lower layer might echo is replaced by `REDACTED`.

use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{FutureExt, SinkExt, StreamExt};
use reel_protocol::{ConnectRequest, FrameKind, is_secret_query_name, percent_decode};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue, Request};
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::{Message, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::link::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
    TrySent,
};

/// The [`LinkError::Io`] message when the peer ends the connection without a close frame.
pub const DROPPED_WITHOUT_CLOSE: &str = "connection dropped without a close frame";

/// The [`LinkError::Io`] message when the peer resets the connection (a TCP RST).
pub const CONNECTION_RESET: &str = "connection reset by peer";

/// The [`LinkError::Connect`] message when nothing listens at the address.
pub const CONNECTION_REFUSED: &str = "connection refused";

/// The longest close reason a close frame can carry, in bytes (RFC 6455: 125 minus the code).
const MAX_CLOSE_REASON_BYTES: usize = 123;

/// How much one socket read takes (see the connect below for why not tungstenite's 128 KiB).
const READ_BUFFER_BYTES: usize = 16 * 1024;

/// How much of a refusing server's body goes into [`LinkError::Handshake`].
const MAX_BODY_EXCERPT_CHARS: usize = 200;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens WebSocket links. Cheap to clone; one connector serves any number of connections.
///
/// ```no_run
/// use reel_actors::transport::{Connector, LinkOptions, WebSocketConnector};
/// use reel_protocol::ApiEndpoint;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let request = ApiEndpoint::from_env()?.connect_request();
/// let (mut sender, mut receiver) = WebSocketConnector::new()
///     .connect(&request, &LinkOptions::default())
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct WebSocketConnector {
    /// The TLS client configuration, or why it could not be built (reported on the first
    /// `wss://` connect; `ws://` never needs it).
    tls: Result<Arc<rustls::ClientConfig>, rustls::Error>,
    /// Certificates trusted on top of the Mozilla roots.
    extra_roots: Vec<CertificateDer<'static>>,
}

impl std::fmt::Debug for WebSocketConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketConnector")
            .field("tls_ready", &self.tls.is_ok())
            .field("extra_roots", &self.extra_roots.len())
            .finish()
    }
}

impl Default for WebSocketConnector {
    fn default() -> Self {
        WebSocketConnector::new()
    }
}

impl WebSocketConnector {
    /// A connector that trusts the Mozilla root certificates (`webpki-roots`).
    pub fn new() -> Self {
        WebSocketConnector {
            tls: tls_config(rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            }),
            extra_roots: Vec::new(),
        }
    }

    /// The same connector, also trusting `certificates` (DER), e.g. a local test server's
    /// self-signed certificate.
    pub fn with_root_certificates(
        mut self,
        certificates: Vec<CertificateDer<'static>>,
    ) -> Result<Self, TlsSetupError> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        self.extra_roots.extend(certificates);
        for (index, certificate) in self.extra_roots.iter().enumerate() {
            roots
                .add(certificate.clone())
                .map_err(|error| TlsSetupError::InvalidCertificate {
                    index,
                    message: error.to_string(),
                })?;
        }
        self.tls = tls_config(roots);
        Ok(self)
    }

    /// The same connector, also trusting every certificate in the PEM file at `path`.
    pub fn with_root_certificates_pem(self, path: impl AsRef<Path>) -> Result<Self, TlsSetupError> {
        let path = path.as_ref();
        let read_error = |error: rustls::pki_types::pem::Error| TlsSetupError::ReadPem {
            path: path.display().to_string(),
            message: error.to_string(),
        };
        let certificates = CertificateDer::pem_file_iter(path)
            .map_err(read_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(read_error)?;
        if certificates.is_empty() {
            return Err(TlsSetupError::NoCertificates {
                path: path.display().to_string(),
            });
        }
        self.with_root_certificates(certificates)
    }
}

/// A TLS client configuration on the `ring` provider, so it never depends on which
/// provider another crate installed process-wide.
fn tls_config(roots: rustls::RootCertStore) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Extra trusted certificates could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsSetupError {
    /// A certificate is not a usable trust anchor.
    #[error("trusted certificate #{index} is not valid: {message}")]
    InvalidCertificate {
        /// Its position among the extra certificates, from 0.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The PEM file could not be read or parsed.
    #[error("could not read certificates from {path}: {message}")]
    ReadPem {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The PEM file holds no certificate.
    #[error("{path} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)")]
    NoCertificates {
        /// The file.
        path: String,
    },
}

impl Connector for WebSocketConnector {
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let url = request.redacted_url();
        let scrubber = Scrubber::new(request);
        let prepared = upgrade_request(request).map_err(|message| LinkError::Connect {
            url: url.clone(),
            message: scrubber.scrub(&message),
        });
        let tls = self.tls.clone();
        let options = *options;
        Box::pin(async move {
            let upgrade = prepared?;
            let tls = match (upgrade.uri().scheme_str(), tls) {
                (Some("wss"), Err(error)) => {
                    return Err(LinkError::Connect {
                        url,
                        message: format!("TLS setup failed: {error}"),
                    });
                }
                (_, Ok(config)) => tokio_tungstenite::Connector::Rustls(config),
                (_, Err(_)) => tokio_tungstenite::Connector::Plain,
            };
            // A 16 KiB read buffer, not tungstenite's 128 KiB: it zero-fills the buffer to its
            // capacity before each read, and 16 KiB still holds a 100 ms audio frame
            // (docs/BENCHMARKS.md: an idle session 243 → 127 KiB).
            let config = WebSocketConfig::default()
                .read_buffer_size(READ_BUFFER_BYTES)
                .max_frame_size(Some(options.max_frame_bytes))
                .max_message_size(Some(options.max_frame_bytes));
            // Nagle off: audio chunks are small and late is as bad as lost.
            let handshake = tokio_tungstenite::connect_async_tls_with_config(
                upgrade,
                Some(config),
                true,
                Some(tls),
            );
            match tokio::time::timeout(options.connect_timeout, handshake).await {
                Err(_elapsed) => Err(LinkError::ConnectTimeout {
                    url,
                    after: options.connect_timeout,
                }),
                Ok(Err(error)) => Err(connect_error(error, url, &scrubber)),
                Ok(Ok((stream, _response))) => {
                    let (sink, stream) = stream.split();
                    let sender = WebSocketSender {
                        sink,
                        limit: options.max_frame_bytes,
                    };
                    let receiver = WebSocketReceiver {
                        stream: Some(stream),
                    };
                    Ok((
                        Box::new(sender) as Box<dyn LinkSender>,
                        Box::new(receiver) as _,
                    ))
                }
            }
        })
    }
}

/// The upgrade request: the URL with its credential and the request's headers, marked
/// sensitive. The error text never holds a header value.
fn upgrade_request(request: &ConnectRequest) -> Result<Request<()>, String> {
    let mut upgrade = request
        .url_with_credentials()
        .into_client_request()
        .map_err(|error| format!("invalid URL: {error}"))?;
    for (name, value) in &request.headers {
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name {name:?}"))?;
        let mut header_value = HeaderValue::from_str(value.expose())
            .map_err(|_| format!("header {name} has a value that cannot go in a header"))?;
        header_value.set_sensitive(true);
        upgrade.headers_mut().insert(header_name, header_value);
    }
    Ok(upgrade)
}

/// Maps a failed connect to a [`LinkError`]: an HTTP answer or a broken handshake is a
/// `Handshake` refusal, everything before it (TCP, DNS, TLS, URL) a `Connect` failure.
fn connect_error(error: WsError, url: String, scrubber: &Scrubber) -> LinkError {
    match error {
        WsError::Http(response) => {
            let status = response.status();
            let mut message = format!(
                "HTTP {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            )
            .trim_end()
            .to_owned();
            if let Some(body) = response.body().as_deref() {
                let body = String::from_utf8_lossy(body);
                let excerpt: String = body.trim().chars().take(MAX_BODY_EXCERPT_CHARS).collect();
                if !excerpt.is_empty() {
                    message.push_str(": ");
                    message.push_str(&excerpt);
                }
            }
            LinkError::Handshake {
                url,
                status: Some(status.as_u16()),
                message: scrubber.scrub(&message),
            }
        }
        WsError::HttpFormat(error) => LinkError::Handshake {
            url,
            status: None,
            message: scrubber.scrub(&error.to_string()),
        },
        WsError::Protocol(error) => LinkError::Handshake {
            url,
            status: None,
            message: scrubber.scrub(&error.to_string()),
        },
        WsError::Io(error) => LinkError::Connect {
            url,
            message: scrubber.scrub(&io_message(&error)),
        },
        other => LinkError::Connect {
            url,
            message: scrubber.scrub(&other.to_string()),
        },
    }
}

/// Stable texts for the I/O errors a caller may match on; the OS text otherwise.
fn io_message(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => CONNECTION_REFUSED.to_owned(),
        std::io::ErrorKind::ConnectionReset => CONNECTION_RESET.to_owned(),
        std::io::ErrorKind::UnexpectedEof => DROPPED_WITHOUT_CLOSE.to_owned(),
        _ => error.to_string(),
    }
}

/// Replaces every credential a request carries with `REDACTED` in error texts, in case a
/// lower layer echoes one.
struct Scrubber {
    url: String,
    redacted_url: String,
    secrets: Vec<String>,
}

impl Scrubber {
    fn new(request: &ConnectRequest) -> Self {
        let url = request.url_with_credentials().to_owned();
        let mut secrets = Vec::new();
        if let Some((_, query)) = url.split_once('?') {
            // Read as `redact_url` reads a query: pairs split on `&` and `;`, names decoded
            // and compared without case; the value kept both as sent and decoded, since a
            // lower layer may echo either.
            for pair in query.split(['&', ';', '#']) {
                if let Some((name, value)) = pair.split_once('=')
                    && is_secret_query_name(name)
                {
                    secrets.push(value.to_owned());
                    let decoded = String::from_utf8_lossy(&percent_decode(value)).into_owned();
                    if decoded != value {
                        secrets.push(decoded);
                    }
                }
            }
        }
        for (_, value) in &request.headers {
            let value = value.expose();
            secrets.push(value.to_owned());
            if let Some((_, token)) = value.split_once(' ') {
                secrets.push(token.to_owned());
            }
        }
        // Longest first, so a token is not half-replaced by a shorter secret inside it.
        secrets.retain(|secret| !secret.trim().is_empty());
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Scrubber {
            url,
            redacted_url: request.redacted_url(),
            secrets,
        }
    }

    fn scrub(&self, text: &str) -> String {
        let mut text = text.replace(&self.url, &self.redacted_url);
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "REDACTED");
        }
        text
    }
}

/// The writing half of a WebSocket link.
struct WebSocketSender {
    sink: SplitSink<Ws, Message>,
    limit: usize,
}

impl WebSocketSender {
    /// The message `frame` goes out as, if it may.
    fn message(&self, frame: LinkFrame) -> Result<Message, LinkError> {
        let size = frame.bytes.len();
        if size > self.limit {
            return Err(LinkError::FrameTooLarge {
                size,
                limit: self.limit,
            });
        }
        Ok(match frame.kind {
            FrameKind::Text => Message::Text(
                Utf8Bytes::try_from(frame.bytes).map_err(|_| LinkError::InvalidText { size })?,
            ),
            FrameKind::Binary => Message::Binary(frame.bytes),
        })
    }

    async fn send_frame(&mut self, frame: LinkFrame) -> Result<(), LinkError> {
        let message = self.message(frame)?;
        self.sink.send(message).await.map_err(write_error)
    }

    /// Writes `frame` if the sink takes it without waiting, polled once with a waker that
    /// wakes nobody: what is left waiting is finished by an awaited `flush` (the caller's
    /// promise, [`TrySent::Unflushed`]), which polls again with a real one.
    fn try_send_frame(&mut self, frame: LinkFrame) -> TrySent {
        let mut cx = Context::from_waker(Waker::noop());
        match self.sink.poll_ready_unpin(&mut cx) {
            Poll::Pending => return TrySent::WouldWait(frame),
            Poll::Ready(Err(error)) => return TrySent::Failed(write_error(error)),
            Poll::Ready(Ok(())) => {}
        }
        let message = match self.message(frame) {
            Ok(message) => message,
            Err(error) => return TrySent::Failed(error),
        };
        if let Err(error) = self.sink.start_send_unpin(message) {
            return TrySent::Failed(write_error(error));
        }
        match self.sink.poll_flush_unpin(&mut cx) {
            Poll::Ready(Ok(())) => TrySent::Sent,
            Poll::Ready(Err(error)) => TrySent::Failed(write_error(error)),
            Poll::Pending => TrySent::Unflushed,
        }
    }

    async fn send_close(&mut self, code: u16, reason: String) -> Result<(), LinkError> {
        let close = CloseFrame {
            code: code.into(),
            reason: Utf8Bytes::from(truncate_utf8(reason, MAX_CLOSE_REASON_BYTES)),
        };
        match self.sink.send(Message::Close(Some(close))).await {
            Ok(()) => Ok(()),
            Err(error) => match write_error(error) {
                LinkError::Closed => Ok(()),
                other => Err(other),
            },
        }
    }
}

impl LinkSender for WebSocketSender {
    fn send(&mut self, frame: LinkFrame) -> BoxFuture<'_, Result<(), LinkError>> {
        Box::pin(self.send_frame(frame))
    }

    fn try_send(&mut self, frame: LinkFrame) -> TrySent {
        self.try_send_frame(frame)
    }

    fn flush(&mut self) -> BoxFuture<'_, Result<(), LinkError>> {
        Box::pin(async move { self.sink.flush().await.map_err(write_error) })
    }

    fn close(&mut self, code: u16, reason: String) -> BoxFuture<'_, Result<(), LinkError>> {
        Box::pin(self.send_close(code, reason))
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
fn truncate_utf8(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

fn write_error(error: WsError) -> LinkError {
    match error {
        WsError::ConnectionClosed
        | WsError::AlreadyClosed
        | WsError::Protocol(ProtocolError::SendAfterClosing) => LinkError::Closed,
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            LinkError::FrameTooLarge {
                size,
                limit: max_size,
            }
        }
        WsError::Io(error) => LinkError::Io {
            message: io_message(&error),
        },
        other => LinkError::Io {
            message: other.to_string(),
        },
    }
}

/// The reading half of a WebSocket link; `None` once it has reported the end.
struct WebSocketReceiver {
    stream: Option<SplitStream<Ws>>,
}

impl LinkReceiver for WebSocketReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        let Some(stream) = self.stream.as_mut() else {
            return Poll::Ready(None);
        };
        loop {
            // Nothing changes until the stream yields: `Pending` loses nothing.
            let event = match std::task::ready!(stream.poll_next_unpin(cx)) {
                Some(Ok(Message::Text(text))) => {
                    return Poll::Ready(Some(LinkEvent::Frame(LinkFrame {
                        kind: FrameKind::Text,
                        bytes: Bytes::from(text),
                    })));
                }
                Some(Ok(Message::Binary(bytes))) => {
                    return Poll::Ready(Some(LinkEvent::Frame(LinkFrame {
                        kind: FrameKind::Binary,
                        bytes,
                    })));
                }
                // tungstenite queues the pong itself and sends it on the next read or write.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(frame))) => {
                    // tungstenite has queued the answering close frame; one more poll sends it
                    // now instead of whenever the link is next touched. Best effort: if the
                    // sender holds the connection at this instant, it goes with its next write.
                    let _ = stream.next().now_or_never();
                    let (code, reason) = match frame {
                        Some(frame) => (
                            Some(u16::from(frame.code)),
                            Some(frame.reason.as_str().to_owned()).filter(|r| !r.is_empty()),
                        ),
                        None => (None, None),
                    };
                    LinkEvent::Closed { code, reason }
                }
                Some(Err(error)) => LinkEvent::Failed(read_error(error)),
                None => LinkEvent::Failed(LinkError::Io {
                    message: DROPPED_WITHOUT_CLOSE.to_owned(),
                }),
            };
            self.stream = None;
            return Poll::Ready(Some(event));
        }
    }
}

fn read_error(error: WsError) -> LinkError {
    match error {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            LinkError::FrameTooLarge {
                size,
                limit: max_size,
            }
        }
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake)
        | WsError::ConnectionClosed
        | WsError::AlreadyClosed => LinkError::Io {
            message: DROPPED_WITHOUT_CLOSE.to_owned(),
        },
        WsError::Io(error) => LinkError::Io {
            message: io_message(&error),
        },
        other => LinkError::Io {
            message: format!("protocol error: {other}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use reel_protocol::ApiEndpoint;

    use super::*;

    #[test]
    fn scrubber_removes_keys_and_bearer_tokens() {
        let request = ApiEndpoint::google_ai("AIzaSECRET")
            .with_base_url("ws://h")
            .connect_request();
        let scrubber = Scrubber::new(&request);
        assert_eq!(
            scrubber.scrub("bad key AIzaSECRET at ws://h/x"),
            "bad key REDACTED at ws://h/x"
        );
        // A key that needs escaping: echoed escaped or not, it is gone.
        let request = ApiEndpoint::google_ai("AIza/SECRET+1")
            .with_base_url("ws://h")
            .connect_request();
        let scrubber = Scrubber::new(&request);
        assert_eq!(
            scrubber.scrub("AIza%2FSECRET%2B1 or AIza/SECRET+1"),
            "REDACTED or REDACTED"
        );
        let request = ApiEndpoint::vertex("p", "us-central1", "ya29.TOKEN").connect_request();
        assert_eq!(
            Scrubber::new(&request).scrub("Authorization: Bearer ya29.TOKEN; ya29.TOKEN"),
            "Authorization: REDACTED; REDACTED"
        );
    }

    #[test]
    fn close_reasons_are_cut_on_a_character_boundary() {
        assert_eq!(truncate_utf8("ééé".into(), 5), "éé");
        assert_eq!(truncate_utf8("abc".into(), 123), "abc");
    }

    #[test]
    fn a_bad_root_certificate_is_reported_with_its_index() {
        let error = WebSocketConnector::new()
            .with_root_certificates(vec![CertificateDer::from(vec![1u8, 2, 3])])
            .unwrap_err();
        assert!(
            matches!(error, TlsSetupError::InvalidCertificate { index: 0, .. }),
            "{error:?}"
        );
    }
}
