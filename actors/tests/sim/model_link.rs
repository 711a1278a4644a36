//! The model's end of a connection, the same to the model whether it is an in-memory link
//! or a real loopback WebSocket (`reel_actors::testing::ScriptedServer`).

use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::transport::{LinkError, LinkEvent, LinkFrame};
use serde_json::Value;
use tokio::sync::mpsc;

use super::memory_link::{MemoryServerConn, Upstream};

/// Where the model accepts connections.
pub enum Listener {
    /// In-memory links from a `MemoryConnector`.
    Memory(mpsc::UnboundedReceiver<MemoryServerConn>),
    /// A loopback WebSocket server.
    Loopback(ScriptedServer),
}

impl Listener {
    /// The next connection (`None` if no client can connect any more).
    pub async fn accept(&mut self) -> Option<ModelConn> {
        match self {
            Listener::Memory(queue) => queue.recv().await.map(ModelConn::Memory),
            Listener::Loopback(server) => {
                Some(ModelConn::Loopback(Box::new(server.accept().await)))
            }
        }
    }
}

/// What the model reads from a connection.
#[derive(Debug)]
pub enum Heard {
    /// A data frame, as JSON (`Value::Null` if it was not JSON).
    Frame(Value),
    /// The client closed the connection, or went away.
    Gone,
}

/// One connection, seen from the model.
pub enum ModelConn {
    /// An in-memory link.
    Memory(MemoryServerConn),
    /// A loopback WebSocket.
    Loopback(Box<ServerConn>),
}

impl ModelConn {
    /// The next thing the client did. A close is answered, as a server does.
    /// Cancel-safe enough for a `select!`: nothing read is lost.
    pub async fn recv(&mut self) -> Heard {
        match self {
            ModelConn::Memory(conn) => match conn.upstream.recv().await {
                Some(Upstream::Frame(frame)) => {
                    Heard::Frame(serde_json::from_slice(&frame.bytes).unwrap_or(Value::Null))
                }
                Some(Upstream::Close(code, reason)) => {
                    let _ = conn.downstream.send(LinkEvent::Closed {
                        code: Some(code),
                        reason: Some(reason),
                    });
                    Heard::Gone
                }
                None => Heard::Gone,
            },
            ModelConn::Loopback(conn) => match conn.recv().await {
                Some(frame) => Heard::Frame(frame.json().unwrap_or(Value::Null)),
                None => Heard::Gone,
            },
        }
    }

    /// Sends a frame; `false` if the client is gone.
    pub async fn send(&mut self, frame: &Value) -> bool {
        match self {
            ModelConn::Memory(conn) => conn
                .downstream
                .send(LinkEvent::Frame(LinkFrame::text(frame.to_string())))
                .is_ok(),
            ModelConn::Loopback(conn) => {
                conn.send_json(frame).await;
                true
            }
        }
    }

    /// Ends the connection without a close frame, as a dying server does: the client reads
    /// what was sent, then a broken link.
    pub fn drop_link(self) {
        match self {
            ModelConn::Memory(conn) => {
                let _ = conn.downstream.send(LinkEvent::Failed(LinkError::Io {
                    message: "connection reset (simulated)".to_owned(),
                }));
            }
            ModelConn::Loopback(conn) => (*conn).drop_connection(),
        }
    }
}
