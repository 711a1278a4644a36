//! Bytes in and out: the link seam and the live WebSocket behind it.
//!
//! - [`link`]: [`LinkSender`] / [`LinkReceiver`] / [`Connector`], what the Transport actor
//!   owns a connection through, so a WebSocket, a test script or a tape reader can stand
//!   behind it.
//! - [`websocket`]: [`WebSocketConnector`], the live link.
//! - [`live_transport`]: the Transport actor, which owns the connection.
//! - [`wire_tap`]: [`WireTap`], where every frame gets its sequence number and is recorded.

pub mod factory;
pub mod link;
pub mod live_transport;
pub mod tree_reports;
pub mod websocket;
pub mod wire_tap;

pub use crate::mailbox::TransportMsg;
pub use factory::{LiveTransportFactory, TransportFactory};
pub use link::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
    Stamp,
};
pub use live_transport::{
    HELD_AUDIO_CHUNKS, ReconnectPolicy, Transport, TransportArgs, TransportOptions, describe_close,
};
pub use rustls::pki_types::{CertificateDer, PrivateKeyDer};
pub use tree_reports::TreeReports;
pub use websocket::{
    CONNECTION_REFUSED, CONNECTION_RESET, DROPPED_WITHOUT_CLOSE, TlsSetupError, WebSocketConnector,
};
pub use wire_tap::WireTap;
