//! Bytes in and out: the link seam and the live WebSocket behind it.
//!
//! - [`link`]: [`LinkSender`] / [`LinkReceiver`] / [`Connector`], what the Transport actor
//!   owns a connection through, so a WebSocket, a test script or a tape reader can stand
//!   behind it.
//! - [`websocket`]: [`WebSocketConnector`], the live link.
//! - [`live_transport`]: the Transport actor, which owns the connection.
//! - [`wire_tap`]: [`WireTap`], where every frame gets its sequence number and is recorded.
//! - [`seam`]: what a transport (live, or a replay's tape reader) is given and may do to the
//!   tree: [`TransportFactory`], [`TransportArgs`], [`TreeReports`],
//!   [`TransportArgs::connection_setup`].

pub(crate) mod command_writer;
pub mod connection_setup;
pub mod factory;
pub mod link;
pub mod live_transport;
pub(crate) mod outbox;
pub mod seam;
pub mod tree_reports;
pub mod websocket;
pub mod wire_tap;

pub use crate::mailbox::TransportMsg;
pub use connection_setup::ConnectionSetup;
pub use factory::LiveTransportFactory;
pub use link::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
    Stamp, TrySent,
};
pub use live_transport::{
    HELD_AUDIO_CHUNKS, ReconnectPolicy, Transport, TransportArgs, TransportOptions, describe_close,
};
pub use rustls::pki_types::{CertificateDer, PrivateKeyDer};
pub use seam::TransportFactory;
pub use tree_reports::{SessionOver, TreeReports};
pub use websocket::{
    CONNECTION_REFUSED, CONNECTION_RESET, DROPPED_WITHOUT_CLOSE, TlsSetupError, WebSocketConnector,
};
pub use wire_tap::WireTap;
