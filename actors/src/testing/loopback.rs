//! What the loopback servers of this module ([`super::ScriptedServer`],
//! [`super::gemini_standin::GeminiStandin`]) share: a listener on `127.0.0.1` and a free
//! port, a TLS acceptor for the test's certificate, and each accepted socket as plain TCP
//! or TLS.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use super::server_conn::ServerIo;

/// A listener on `127.0.0.1` and a free port, with its address.
///
/// # Panics
///
/// If no loopback port can be bound; the message starts with `server`, the server's name.
pub(super) async fn bind(server: &str) -> (TcpListener, SocketAddr) {
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
pub(super) fn tls_acceptor(
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
pub(super) async fn server_io(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
) -> Option<Box<dyn ServerIo>> {
    let _ = tcp.set_nodelay(true);
    match tls {
        None => Some(Box::new(tcp)),
        Some(acceptor) => match acceptor.accept(tcp).await {
            Ok(stream) => Some(Box::new(stream)),
            Err(_) => None,
        },
    }
}
