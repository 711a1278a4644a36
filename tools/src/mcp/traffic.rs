//! Watching an MCP connection: every JSON-RPC 2.0 message between reel and the server, as
//! it went over the transport ([`McpServer::on_message`](super::McpServer::on_message)).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;

/// One thing that happened on an MCP connection, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum McpMessage {
    /// reel sent this JSON-RPC message (`initialize`, `notifications/initialized`,
    /// `tools/list`, `tools/call`, `notifications/cancelled`, or a response to the server).
    Sent(Value),
    /// The server sent this JSON-RPC message (a result, an error, a notification).
    Received(Value),
    /// reel closed the transport: the tools were dropped (the session ended), so a stdio
    /// server's process is ended and an HTTP session let go.
    Closed,
}

/// What [`McpServer::on_message`](super::McpServer::on_message) calls, on the connection's
/// own task: keep it short (push to a list, send on a channel).
#[derive(Clone)]
pub(crate) struct Observer(Arc<dyn Fn(&McpMessage) + Send + Sync>);

impl Observer {
    pub(crate) fn new(observe: impl Fn(&McpMessage) + Send + Sync + 'static) -> Observer {
        Observer(Arc::new(observe))
    }

    fn tell(&self, message: McpMessage) {
        (self.0)(&message);
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Observer")
    }
}

/// A transport that tells an [`Observer`] of every message it carries, then passes it on.
pub(crate) struct Tapped<T> {
    inner: T,
    observer: Observer,
}

impl<T> Tapped<T> {
    pub(crate) fn new(inner: T, observer: Observer) -> Tapped<T> {
        Tapped { inner, observer }
    }
}

/// The message as JSON (a message reel's SDK could not serialize is shown as its error).
fn as_json(message: &impl serde::Serialize) -> Value {
    serde_json::to_value(message)
        .unwrap_or_else(|error| Value::String(format!("(not serializable: {error})")))
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.observer.tell(McpMessage::Sent(as_json(&item)));
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        self.observer.tell(McpMessage::Received(as_json(&message)));
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.inner.close().await;
        self.observer.tell(McpMessage::Closed);
        closed
    }
}
