//! The scripted server: a loopback listener whose accepted WebSocket connections go to the
//! test.

use std::net::SocketAddr;

use reel_protocol::ApiEndpoint;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

use super::server_conn::{RequestHead, ServerConn};
use reel_llm::testing::loopback;

/// The fake API key in [`ScriptedServer::endpoint`].
pub const SCRIPTED_API_KEY: &str = "reel-scripted-key";

/// The fake bearer token in [`ScriptedServer::vertex_endpoint`].
pub const SCRIPTED_BEARER_TOKEN: &str = "reel-scripted-token";

/// A Live server on `127.0.0.1`, played by the test.
///
/// It accepts every WebSocket upgrade, on any path, and queues the connection for
/// [`ScriptedServer::accept`]. The accept loop and the handshakes run in tasks on the runtime
/// that called `bind`, and use no timers. Dropping the server aborts them: the port refuses
/// connections once the runtime has run the aborted loop (on a current-thread runtime, after
/// one `yield_now`). Connections already accepted stay open until their [`ServerConn`] is
/// dropped.
///
/// Under paused time (`#[tokio::test(start_paused = true)]`), keep the server on the same
/// runtime as the client under test, as `bind` does: tokio then sees the socket events of
/// both sides when it idles and does not jump the clock to the next timer in the middle of
/// a loopback exchange (this needs tokio 1.51.6 / 1.53.3 or later, tokio-rs/tokio#8595).
pub struct ScriptedServer {
    local_addr: SocketAddr,
    tls: bool,
    connections: mpsc::UnboundedReceiver<ServerConn>,
    accept_loop: JoinHandle<()>,
}

impl ScriptedServer {
    /// A plain (`ws://`) server on `127.0.0.1` and a free port.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub async fn bind() -> ScriptedServer {
        ScriptedServer::start(None).await
    }

    /// A TLS (`wss://`) server on `127.0.0.1` and a free port, presenting `certificate_chain`
    /// and `key`. A self-signed certificate must name `127.0.0.1` (an IP address SAN), and
    /// the client must trust it, e.g. through
    /// [`crate::transport::WebSocketConnector::with_root_certificates`].
    ///
    /// # Panics
    ///
    /// If the certificate or key is unusable, or no loopback port can be bound.
    pub async fn bind_tls(
        certificate_chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> ScriptedServer {
        let acceptor = loopback::tls_acceptor("ScriptedServer::bind_tls", certificate_chain, key);
        ScriptedServer::start(Some(acceptor)).await
    }

    async fn start(tls: Option<TlsAcceptor>) -> ScriptedServer {
        let (listener, local_addr) = loopback::bind("ScriptedServer").await;
        let (sender, connections) = mpsc::unbounded_channel();
        let is_tls = tls.is_some();
        let accept_loop = tokio::spawn(accept_loop(listener, tls, sender));
        ScriptedServer {
            local_addr,
            tls: is_tls,
            connections,
            accept_loop,
        }
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The server's base URL: `ws://127.0.0.1:PORT` (`wss://` for a TLS server).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        format!("{scheme}://{}", self.local_addr)
    }

    /// A Google AI endpoint (text frames, `?key=`[`SCRIPTED_API_KEY`]) pointing here.
    pub fn endpoint(&self) -> ApiEndpoint {
        ApiEndpoint::google_ai(SCRIPTED_API_KEY).with_base_url(&self.url())
    }

    /// A Vertex AI endpoint (binary frames, `Authorization: Bearer`
    /// [`SCRIPTED_BEARER_TOKEN`], project `reel-test`, location `us-central1`) pointing here.
    pub fn vertex_endpoint(&self) -> ApiEndpoint {
        ApiEndpoint::vertex("reel-test", "us-central1", SCRIPTED_BEARER_TOKEN)
            .with_base_url(&self.url())
    }

    /// The next connection whose WebSocket handshake completed, in the order they completed.
    ///
    /// # Panics
    ///
    /// If the accept loop has stopped (it only does if the listener fails).
    pub async fn accept(&mut self) -> ServerConn {
        match self.connections.recv().await {
            Some(connection) => connection,
            None => panic!("ScriptedServer::accept: the accept loop has stopped"),
        }
    }

    /// The next connection if one has already completed its handshake.
    pub fn try_accept(&mut self) -> Option<ServerConn> {
        self.connections.try_recv().ok()
    }
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        // Dropping the loop drops its listener and its `JoinSet`, which aborts handshakes
        // still in progress.
        self.accept_loop.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    connections: mpsc::UnboundedSender<ServerConn>,
) {
    let mut handshakes = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    handshakes.spawn(handshake(tcp, tls.clone(), connections.clone()));
                }
                // A client that gave up before `accept` (ECONNABORTED) is no reason to stop.
                Err(error) if is_transient(&error) => continue,
                Err(_) => return,
            },
            Some(_) = handshakes.join_next(), if !handshakes.is_empty() => {}
        }
    }
}

fn is_transient(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted
    )
}

/// TLS (if any), then the WebSocket upgrade, recording the request's path, query and
/// headers. A failed handshake is dropped silently: the client reports it.
async fn handshake(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
    connections: mpsc::UnboundedSender<ServerConn>,
) {
    let Some(io) = loopback::server_io(tcp, tls).await else {
        return;
    };
    let mut head = None;
    // The error type is tungstenite's `Callback` signature, not ours.
    #[allow(clippy::result_large_err)]
    let record = |request: &Request, response: Response| {
        head = Some(RequestHead::of(request));
        Ok(response)
    };
    let Ok(stream) = tokio_tungstenite::accept_hdr_async(io, record).await else {
        return;
    };
    if let Some(head) = head {
        let _ = connections.send(ServerConn::new(stream, head));
    }
}
