//! What reel's loopback test servers (this crate's
//! [`GeminiStandin`](super::gemini_standin::GeminiStandin), `reel-actors`' scripted Live
//! server) share: a listener on `127.0.0.1` and a free port, a TLS acceptor for the test's
//! certificate, and each accepted socket as plain TCP or TLS.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// The byte stream under a server connection: plain TCP or TLS over TCP.
pub trait ServerIo: AsyncRead + AsyncWrite + Send + Unpin + 'static {
    /// The TCP socket underneath.
    fn tcp(&self) -> &TcpStream;
}

impl ServerIo for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl ServerIo for tokio_rustls::server::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// A listener on `127.0.0.1` and a free port, with its address.
///
/// # Panics
///
/// If no loopback port can be bound; the message starts with `server`, the server's name.
pub async fn bind(server: &str) -> (TcpListener, SocketAddr) {
    let listener = match TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(listener) => listener,
        Err(error) => panic!("{server}: cannot bind 127.0.0.1:0: {error}"),
    };
    match listener.local_addr() {
        Ok(addr) => (listener, addr),
        Err(error) => panic!("{server}: no local address: {error}"),
    }
}

/// A TLS acceptor (rustls on ring, its safe default protocol versions, no client
/// certificates) presenting `certificate_chain` and `key`.
///
/// # Panics
///
/// If the certificate or key is unusable; the message starts with `caller`, the function
/// the test called.
pub fn tls_acceptor(
    caller: &str,
    certificate_chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> TlsAcceptor {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| {
            builder
                .with_no_client_auth()
                .with_single_cert(certificate_chain, key)
        });
    match config {
        Ok(config) => TlsAcceptor::from(Arc::new(config)),
        Err(error) => panic!("{caller}: unusable certificate or key: {error}"),
    }
}

/// An accepted socket with Nagle's algorithm off, after the TLS handshake if `tls` is set;
/// `None` if that handshake failed (the client reports it).
pub async fn server_io(tcp: TcpStream, tls: Option<TlsAcceptor>) -> Option<Box<dyn ServerIo>> {
    let _ = tcp.set_nodelay(true);
    match tls {
        None => Some(Box::new(tcp)),
        Some(acceptor) => match acceptor.accept(tcp).await {
            Ok(stream) => Some(Box::new(stream)),
            Err(_) => None,
        },
    }
}
