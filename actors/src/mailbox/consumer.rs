//! [`Consumer`]: what a child that drains an [`Inbox`] does with its items; the one runner
//! of every such child ([`crate::mailbox::spawn_consumer`], on a plain task) does the rest.
//!
//! The runner owns what every consumer must do and none may forget: recover the item a
//! failed predecessor was handling ([`Inbox::recover`], before its start), wake itself once
//! it runs (the doorbell's first ring: whatever was pushed while no instance was in place),
//! take a chunk of items at a time, mark each done, and go on after a full chunk only once
//! its own messages are in (so they are not starved and nothing is left waiting). A
//! [`Consumer`] says only what to do with one item, and with the item its predecessor
//! failed on.

use std::future::Future;
use std::sync::Arc;

use ractor::ActorProcessingErr;

use crate::child::Child;
use crate::inbox::{Failed, Inbox};
use crate::mailbox::{Instance, Mailbox};

/// The own messages of a consumer that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMsg {}

/// What an inbox-driven child does; [`crate::mailbox::spawn_consumer`] runs it on a task of
/// its own. It declares which child of the tree it is and where its mailbox is among its
/// arguments, so the supervisor's start of it (`child_spec::restartable`) needs nothing else
/// but those arguments.
pub trait Consumer: Sized + Send + Sync + 'static {
    /// What waits in its inbox.
    type Item: Send + 'static;
    /// What it learns of the item a failed predecessor was handling.
    type Label: Send + 'static;
    /// Its own messages besides the doorbell ([`NoMsg`] if none).
    type Msg: Send + 'static;
    /// What each instance is started with.
    type Args: Send + 'static;

    /// Which child of the tree it is (its name in reports, its restart rule).
    const CHILD: Child;

    /// How many items one wake handles before the instance lets its own messages in.
    const CHUNK: usize;

    /// Its mailbox, among its arguments: the inbox it drains and the slot its doorbell rings.
    fn mailbox(args: &Self::Args) -> &ConsumerMailbox<Self>;

    /// Starts an instance (awaited by whoever starts it, before its task runs). `failed` is
    /// the item its predecessor failed on, already marked finished: report it, settle it, or
    /// keep it for [`Consumer::started`]. `myself` takes its own messages and timers.
    fn start(
        args: Self::Args,
        failed: Option<Failed<Self::Label>>,
        myself: &Instance<Self::Msg>,
    ) -> impl Future<Output = Result<Self, ActorProcessingErr>> + Send;

    /// Runs first on the instance's task, before its first drain.
    fn started(&mut self) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }

    /// Handles one item. An error (or a panic) fails the instance with the item in flight:
    /// its successor learns of it through [`Consumer::start`].
    fn handle(
        &mut self,
        item: Self::Item,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send;

    /// Handles up to a chunk of items; returns whether it stopped at the chunk's end (more
    /// may wait: the runner goes on after its own messages). The default takes, handles and marks
    /// done one item at a time ([`drain_one_by_one`]); a consumer that takes its items
    /// another way (in a batch, on the blocking pool) says so here.
    fn drain(
        &mut self,
        inbox: &Arc<Inbox<Self::Item, Self::Label>>,
    ) -> impl Future<Output = Result<bool, ActorProcessingErr>> + Send {
        drain_one_by_one(self, inbox)
    }

    /// Handles one of its own messages.
    fn message(
        &mut self,
        message: Self::Msg,
        myself: &Instance<Self::Msg>,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        let _ = (message, myself);
        async { Ok(()) }
    }

    /// Runs when the instance is stopped (not when it failed, nor when it was aborted).
    fn stopped(&mut self) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }
}

/// Takes, handles and marks done up to [`Consumer::CHUNK`] items, one at a time; returns
/// whether it stopped at the chunk's end.
pub async fn drain_one_by_one<C: Consumer>(
    consumer: &mut C,
    inbox: &Arc<Inbox<C::Item, C::Label>>,
) -> Result<bool, ActorProcessingErr> {
    for _ in 0..C::CHUNK {
        let Some(taken) = inbox.take() else {
            return Ok(false);
        };
        consumer.handle(taken.item).await?;
        inbox.done(taken.seq);
    }
    Ok(true)
}

/// The mailbox of a consumer `C`: its items, what its successor learns of a failed one, and
/// its instance's own messages.
pub type ConsumerMailbox<C> =
    Mailbox<<C as Consumer>::Item, <C as Consumer>::Label, <C as Consumer>::Msg>;
