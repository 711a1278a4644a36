//! The server's side of one client's WebSocket: numbered client frames in, recorded frames
//! out, and a close with a code and a reason that always fits a close frame.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;

/// The byte stream under a client connection: plain TCP or TLS over TCP.
pub(crate) trait ServerStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> ServerStream for T {}

/// A client's WebSocket, after the handshake.
pub(crate) type ClientWs = WebSocketStream<Box<dyn ServerStream>>;

/// The longest close reason a close frame can carry, in bytes (RFC 6455: 125 minus the code).
pub const MAX_CLOSE_REASON_BYTES: usize = 123;

/// How long a close waits for the client's answering close frame.
const CLOSE_ANSWER_WAIT: Duration = Duration::from_secs(5);

/// One data frame from the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFrame {
    /// 1-based position among the client's data frames on this connection.
    pub number: u32,
    /// The bytes as received.
    pub payload: Bytes,
    /// Whether it came in a binary frame.
    pub binary: bool,
}

/// What the client did next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClientEvent {
    /// A data frame.
    Frame(ClientFrame),
    /// A close frame.
    Closed {
        /// Its code, if any.
        code: Option<u16>,
        /// Its reason, if any.
        reason: Option<String>,
    },
    /// A frame over the size limit.
    TooLarge {
        /// Its size, in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A text frame that is not UTF-8; the socket was closed with 1007 (RFC 6455 8.1).
    NotUtf8 {
        /// Its number among the client's data frames.
        number: u32,
        /// The close reason sent.
        reason: String,
    },
    /// The connection ended without a close frame, or broke the protocol.
    Gone {
        /// What happened.
        message: String,
    },
}

/// One client's WebSocket.
pub(crate) struct ClientSocket {
    ws: ClientWs,
    frames: u32,
    ended: bool,
}

impl ClientSocket {
    pub(crate) fn new(ws: ClientWs) -> Self {
        ClientSocket {
            ws,
            frames: 0,
            ended: false,
        }
    }

    /// The client's next move. Cancel-safe: nothing is lost if the future is dropped.
    pub(crate) async fn next(&mut self) -> ClientEvent {
        if self.ended {
            return ClientEvent::Gone {
                message: "the connection has ended".to_owned(),
            };
        }
        loop {
            let event = match self.ws.next().await {
                Some(Ok(Message::Text(text))) => self.frame(Bytes::from(text), false),
                Some(Ok(Message::Binary(bytes))) => self.frame(bytes, true),
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(frame))) => {
                    self.ended = true;
                    // tungstenite queued the answering close; send it now.
                    let _ = self.ws.flush().await;
                    let (code, reason) = match frame {
                        Some(frame) => (
                            Some(u16::from(frame.code)),
                            Some(frame.reason.as_str().to_owned()).filter(|r| !r.is_empty()),
                        ),
                        None => (None, None),
                    };
                    ClientEvent::Closed { code, reason }
                }
                Some(Err(WsError::Capacity(CapacityError::MessageTooLong { size, max_size }))) => {
                    self.ended = true;
                    ClientEvent::TooLarge {
                        size,
                        limit: max_size,
                    }
                }
                Some(Err(WsError::Utf8(_))) => {
                    self.frames = self.frames.saturating_add(1);
                    let number = self.frames;
                    let reason = format!("reel: frame {number} is not valid UTF-8 text");
                    self.close(super::CLOSE_INVALID_FRAME, &reason).await;
                    self.ended = true;
                    ClientEvent::NotUtf8 { number, reason }
                }
                Some(Err(error)) => {
                    self.ended = true;
                    ClientEvent::Gone {
                        message: gone_message(&error),
                    }
                }
                None => {
                    self.ended = true;
                    ClientEvent::Gone {
                        message: "connection dropped without a close frame".to_owned(),
                    }
                }
            };
            return event;
        }
    }

    fn frame(&mut self, payload: Bytes, binary: bool) -> ClientEvent {
        self.frames = self.frames.saturating_add(1);
        ClientEvent::Frame(ClientFrame {
            number: self.frames,
            payload,
            binary,
        })
    }

    /// Sends a frame as it was recorded: text unless `binary` (or the bytes are not UTF-8).
    pub(crate) async fn send(&mut self, payload: Bytes, binary: bool) -> Result<(), String> {
        // A clone of `Bytes` shares the buffer; it is kept for a payload that is not UTF-8.
        let message = if binary {
            Message::Binary(payload)
        } else {
            match Utf8Bytes::try_from(payload.clone()) {
                Ok(text) => Message::Text(text),
                Err(_) => Message::Binary(payload),
            }
        };
        self.ws
            .send(message)
            .await
            .map_err(|error| gone_message(&error))
    }

    /// Closes with `code` and `reason` (cut to [`MAX_CLOSE_REASON_BYTES`]), then waits a
    /// little for the client's answering close, ignoring anything else it still sends.
    pub(crate) async fn close(&mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code: code.into(),
            reason: Utf8Bytes::from(truncate_utf8(reason, MAX_CLOSE_REASON_BYTES)),
        };
        if self.ws.send(Message::Close(Some(frame))).await.is_err() || self.ended {
            return;
        }
        let answered = async {
            while let Some(Ok(message)) = self.ws.next().await {
                if matches!(message, Message::Close(_)) {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(CLOSE_ANSWER_WAIT, answered).await;
        self.ended = true;
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
pub(crate) fn truncate_utf8(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn gone_message(error: &WsError) -> String {
    match error {
        WsError::ConnectionClosed
        | WsError::AlreadyClosed
        | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            "connection dropped without a close frame".to_owned()
        }
        WsError::Io(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {
            "connection reset by peer".to_owned()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_cut_on_a_character_boundary() {
        assert_eq!(truncate_utf8("ééé", 5), "éé");
        assert_eq!(truncate_utf8("abc", 123), "abc");
        assert_eq!(truncate_utf8(&"x".repeat(200), 123).len(), 123);
    }
}
