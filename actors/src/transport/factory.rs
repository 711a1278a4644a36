//! [`LiveTransportFactory`]: the live implementation of the transport seam's
//! [`TransportFactory`].
//!
//! The supervisor spawns the transport through a factory, so a session runs live (the
//! [`Transport`] actor over a [`super::Connector`]) or from a recording (a tape-reading actor
//! from the replayer) with nothing else in the tree changing (see [`super::seam`]).

use futures_util::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorRef, SpawnErr};

use super::live_transport::{Transport, TransportArgs};
use super::seam::TransportFactory;
use crate::mailbox::TransportMsg;

/// The live transport: the [`Transport`] actor over the builder's connector.
#[derive(Debug, Default, Clone, Copy)]
pub struct LiveTransportFactory;

impl TransportFactory for LiveTransportFactory {
    fn spawn(
        self: Box<Self>,
        args: TransportArgs,
        supervisor: ActorCell,
    ) -> BoxFuture<'static, Result<ActorRef<TransportMsg>, SpawnErr>> {
        Box::pin(async move {
            let (actor, _) = Actor::spawn_linked(None, Transport, args, supervisor).await?;
            Ok(actor)
        })
    }
}
