//! The transport seam: everything a transport — the live WebSocket one, or a replay's tape
//! reader — is given and may do, and nothing else.
//!
//! The supervisor spawns the session's transport child through one trait,
//! [`TransportFactory`], which the live transport ([`super::LiveTransportFactory`]) and
//! the replayer's tape reader implement. The child it spawns:
//!
//! - takes [`TransportMsg`]s (commands to send, stamped by [`Origin`]; the end of a setup;
//!   a disconnect). A transport may take the commands another way by installing a
//!   [`crate::slot::Route`] on its slot, as the live one does (its outbox and writer task,
//!   decision 0083); a tape reader takes them as messages;
//! - is given [`TransportArgs`]: the session's config and endpoint, the [`WireTap`] that
//!   stamps and records every frame, the latest resumption handle;
//! - opens each connection with [`TransportArgs::connection_setup`] (the setup frame and
//!   whether it presents a resumption handle: built once for both);
//! - acts on the tree only through [`TransportArgs::tree`], a [`TreeReports`]: delivers each
//!   inbound frame, stamped ([`TreeReports::deliver`]), reports lifecycle steps, commands
//!   sent, the user's text and input, errors, reconnects and connection ends, and — when it
//!   paces itself on the tree, as the tape reader does — asks for a barrier
//!   ([`TreeReports::barrier`]) and for room in the tools that read input
//!   ([`TreeReports::tool_input_room`]).
//!
//! A tape reader names only this module of `reel-actors` (the replayer's test
//! `tape_reader_seam` checks its source): what it may reach of the tree is what is here.

use futures_util::future::BoxFuture;
use ractor::{ActorCell, ActorRef, SpawnErr};

pub use super::connection_setup::ConnectionSetup;
pub use super::link::{LinkFrame, Stamp};
pub use super::live_transport::TransportArgs;
pub use super::tree_reports::{SessionOver, TreeReports};
pub use super::wire_tap::WireTap;
pub use crate::clock::ManualClock;
pub use crate::mailbox::{Origin, TransportMsg};

/// Spawns the session's transport child, linked to the supervisor: the one trait the live
/// transport and a tape reader implement.
pub trait TransportFactory: Send + 'static {
    /// Spawns it with `args`, supervised by `supervisor`.
    fn spawn(
        self: Box<Self>,
        args: TransportArgs,
        supervisor: ActorCell,
    ) -> BoxFuture<'static, Result<ActorRef<TransportMsg>, SpawnErr>>;
}

impl TransportArgs {
    /// What this transport may do to the tree.
    pub fn tree(&self) -> TreeReports<'_> {
        TreeReports::new(&self.peers, &self.tap, &self.telemetry)
    }
}
