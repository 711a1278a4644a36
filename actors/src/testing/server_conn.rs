//! One accepted connection, with the server's side played by the test.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use reel_protocol::FrameKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::handshake::server::Request;
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;

use super::client_frame::ClientFrame;
use reel_llm::testing::loopback::ServerIo;

/// What the upgrade request said: path, raw query, headers.
#[derive(Debug, Clone)]
pub(super) struct RequestHead {
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
}

impl RequestHead {
    pub(super) fn of(request: &Request) -> Self {
        RequestHead {
            path: request.uri().path().to_owned(),
            query: request.uri().query().map(str::to_owned),
            headers: request
                .headers()
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect(),
        }
    }
}

/// How the connection ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ended {
    /// A close frame arrived: its code (1005 if it had none) and reason.
    Closed(u16, String),
    /// The connection ended without a close frame.
    Dropped,
}

/// One client connection to a [`super::ScriptedServer`]. The test plays the server: it reads
/// what the client sent and answers, closes or drops the connection.
///
/// Pings from the client are answered automatically. Nothing here uses a timer.
pub struct ServerConn {
    stream: WebSocketStream<Box<dyn ServerIo>>,
    head: RequestHead,
    /// Frames read while waiting for something else (a pong), handed out by `recv` first.
    pending: VecDeque<ClientFrame>,
    ended: Option<Ended>,
}

impl ServerConn {
    pub(super) fn new(stream: WebSocketStream<Box<dyn ServerIo>>, head: RequestHead) -> Self {
        ServerConn {
            stream,
            head,
            pending: VecDeque::new(),
            ended: None,
        }
    }

    /// The request path, e.g.
    /// `/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent`.
    pub fn path(&self) -> &str {
        &self.head.path
    }

    /// The raw query string (without `?`), e.g. `key=reel-scripted-key`.
    pub fn query(&self) -> Option<&str> {
        self.head.query.as_deref()
    }

    /// The raw (still percent-encoded) value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query()?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find_map(|(key, value)| (key == name).then_some(value))
    }

    /// The request headers in arrival order, names in lower case.
    pub fn headers(&self) -> &[(String, String)] {
        &self.head.headers
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head
            .headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The next data frame from the client; `None` once the client has closed the
    /// connection (see [`ServerConn::expect_closed`] for how) or it has dropped.
    pub async fn recv(&mut self) -> Option<ClientFrame> {
        if let Some(frame) = self.pending.pop_front() {
            return Some(frame);
        }
        self.read_frame().await
    }

    /// The next data frame parsed as JSON.
    ///
    /// # Panics
    ///
    /// If the connection ended first or the frame is not JSON: it is for tests.
    pub async fn recv_json(&mut self) -> serde_json::Value {
        let Some(frame) = self.recv().await else {
            panic!(
                "ServerConn::recv_json: the client ended the connection ({:?}) instead of sending a frame",
                self.ended
            );
        };
        match frame.json() {
            Ok(value) => value,
            Err(error) => panic!(
                "ServerConn::recv_json: the client sent a {:?} frame that is not JSON ({error}): {:?}",
                frame.kind,
                String::from_utf8_lossy(&frame.bytes)
            ),
        }
    }

    /// Sends `value` as JSON in a text frame (how Google AI frames its messages).
    ///
    /// # Panics
    ///
    /// If the frame cannot be written: it is for tests.
    pub async fn send_json(&mut self, value: &serde_json::Value) {
        self.send_text(&value.to_string()).await;
    }

    /// Sends a text frame.
    ///
    /// # Panics
    ///
    /// If the frame cannot be written.
    pub async fn send_text(&mut self, text: &str) {
        self.write(Message::Text(Utf8Bytes::from(text))).await;
    }

    /// Sends `texts` as text frames in one burst (queued, then flushed together, so the
    /// client reads them in large batches) and returns how many were queued before the
    /// client went away (the last ones queued may be lost with the connection): for tests
    /// that end the session while a burst is in flight.
    pub async fn send_burst(&mut self, texts: impl IntoIterator<Item = String>) -> usize {
        let mut written = 0;
        for text in texts {
            if self
                .stream
                .feed(Message::Text(Utf8Bytes::from(text)))
                .await
                .is_err()
            {
                return written;
            }
            written += 1;
        }
        // A failed flush means the client went away, which is what such a test provokes.
        let _ = self.stream.flush().await;
        written
    }

    /// Sends a binary frame (Vertex AI sends its JSON this way).
    ///
    /// # Panics
    ///
    /// If the frame cannot be written.
    pub async fn send_binary(&mut self, bytes: impl Into<Bytes>) {
        self.write(Message::Binary(bytes.into())).await;
    }

    /// Sends a ping carrying `payload` (at most 125 bytes) and waits for the client's pong
    /// with the same payload; data frames that arrive meanwhile are kept for
    /// [`ServerConn::recv`]. `false` if the connection ended first.
    ///
    /// The client answers pings while it reads, so something on the client side must be
    /// reading.
    ///
    /// # Panics
    ///
    /// If the ping cannot be written.
    pub async fn ping(&mut self, payload: impl Into<Bytes>) -> bool {
        let payload = payload.into();
        self.write(Message::Ping(payload.clone())).await;
        loop {
            match self.stream.next().await {
                Some(Ok(Message::Pong(answer))) if answer == payload => return true,
                Some(Ok(message)) => match self.take(message).await {
                    Some(frame) => self.pending.push_back(frame),
                    None if self.ended.is_some() => return false,
                    None => {}
                },
                Some(Err(_)) | None => {
                    self.ended = Some(Ended::Dropped);
                    return false;
                }
            }
        }
    }

    /// Sends a close frame with `code` and `reason`. The client's answering close can be
    /// read with [`ServerConn::expect_closed`].
    ///
    /// # Panics
    ///
    /// If the close frame cannot be written.
    pub async fn close(&mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code: code.into(),
            reason: Utf8Bytes::from(reason),
        };
        if let Err(error) = self.stream.close(Some(frame)).await {
            panic!("ServerConn::close({code}, {reason:?}): cannot write the close frame: {error}");
        }
    }

    /// Ends the connection without a close frame, as when a server process dies: the client
    /// reads everything already sent, then the end of the stream (a FIN; with TLS, after a
    /// TLS close). The socket is only shut for writing; a task keeps reading and discarding
    /// until the client lets go, because closing a socket with unread data would send an
    /// RST instead and the client could lose what was sent before it. For the RST, see
    /// [`ServerConn::reset_connection`].
    pub fn drop_connection(self) {
        let mut io = self.stream.into_inner();
        tokio::spawn(async move {
            let _ = io.shutdown().await;
            let mut discard = [0u8; 4096];
            while matches!(io.read(&mut discard).await, Ok(read) if read > 0) {}
        });
    }

    /// Resets the TCP connection (an RST, `SO_LINGER` 0) without a close frame. Data the
    /// client has not read yet may be lost.
    pub fn reset_connection(self) {
        // Best effort: if it cannot be set, the drop still ends the connection (with a FIN).
        let _ = self.stream.get_ref().tcp().set_zero_linger();
        drop(self);
    }

    /// Waits for the client to close: `Some((code, reason))` from its close frame (code
    /// 1005 and an empty reason if the frame carried no status), or `None` if the connection
    /// ended without one. Data frames that arrive first are discarded. After a close frame
    /// the server answers it and ends the TCP connection, as RFC 6455 asks.
    pub async fn expect_closed(&mut self) -> Option<(u16, String)> {
        self.pending.clear();
        while self.ended.is_none() {
            let _ = self.read_frame().await;
        }
        match &self.ended {
            Some(Ended::Closed(code, reason)) => Some((*code, reason.clone())),
            _ => None,
        }
    }

    async fn read_frame(&mut self) -> Option<ClientFrame> {
        while self.ended.is_none() {
            let message = match self.stream.next().await {
                Some(Ok(message)) => message,
                Some(Err(_)) | None => {
                    self.ended = Some(Ended::Dropped);
                    return None;
                }
            };
            if let Some(frame) = self.take(message).await {
                return Some(frame);
            }
        }
        None
    }

    /// A data frame out of `message`, or `None` after noting a close (and answering it).
    async fn take(&mut self, message: Message) -> Option<ClientFrame> {
        match message {
            Message::Text(text) => Some(ClientFrame {
                kind: FrameKind::Text,
                bytes: Bytes::from(text),
            }),
            Message::Binary(bytes) => Some(ClientFrame {
                kind: FrameKind::Binary,
                bytes,
            }),
            Message::Close(frame) => {
                let (code, reason) = match frame {
                    Some(frame) => (u16::from(frame.code), frame.reason.as_str().to_owned()),
                    None => (1005, String::new()),
                };
                self.ended = Some(Ended::Closed(code, reason));
                // Sends the queued answering close; tungstenite then reports the connection
                // closed, which is expected. Then the server ends TCP first, as it should.
                let _ = self.stream.flush().await;
                let _ = self.stream.get_mut().shutdown().await;
                None
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => None,
        }
    }

    async fn write(&mut self, message: Message) {
        if let Err(error) = self.stream.send(message).await {
            panic!("ServerConn: cannot send to the client: {error}");
        }
    }
}

impl std::fmt::Debug for ServerConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConn")
            .field("path", &self.head.path)
            .field("query", &self.head.query)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}
