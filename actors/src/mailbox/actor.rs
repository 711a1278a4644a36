//! [`InboxActor`]: the one skeleton of every actor that drains an [`Inbox`].
//!
//! The skeleton owns what every such actor must do and none may forget: recover the item a
//! failed predecessor was handling ([`Inbox::recover`], in `pre_start`), wake itself once it
//! takes messages (the doorbell's first ring, in `post_start`: whatever was pushed while no
//! instance was in place), take a chunk of items at a time, mark each done, and wake itself
//! again after a full chunk (so its own messages are not starved and nothing is left
//! waiting). A [`Consumer`] says only what to do with one item, and with the item its
//! predecessor failed on.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::child::Child;
use crate::inbox::{Failed, Inbox};
use crate::mailbox::Mailbox;

/// What an [`InboxActor`]'s mailbox carries: the doorbell, or one of the consumer's own
/// messages (a timer's tick, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InboxMsg<M> {
    /// Items wait in the inbox.
    Wake,
    /// The consumer's own message.
    Own(M),
}

/// The own messages of a consumer that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMsg {}

/// What an inbox-driven actor does; [`InboxActor`] runs it. It declares which child of the
/// tree it is and where its mailbox is among its arguments, so the supervisor's start of it
/// (`child_spec::restartable`) needs nothing else but those arguments.
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

    /// How many items one wake handles before the actor lets its mailbox in.
    const CHUNK: usize;

    /// Its mailbox, among its arguments: the inbox it drains and the slot its doorbell rings.
    fn mailbox(args: &Self::Args) -> &ConsumerMailbox<Self>;

    /// Starts an instance (in `pre_start`). `failed` is the item its predecessor failed on,
    /// already marked finished: report it, settle it, or keep it for [`Consumer::started`].
    fn start(
        args: Self::Args,
        failed: Option<Failed<Self::Label>>,
        myself: &ActorRef<InboxMsg<Self::Msg>>,
    ) -> impl Future<Output = Result<Self, ActorProcessingErr>> + Send;

    /// Runs once the instance takes messages, before its first drain (in `post_start`).
    fn started(&mut self) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        async { Ok(()) }
    }

    /// Handles one item. An error (or a panic) fails the actor with the item in flight:
    /// its successor learns of it through [`Consumer::start`].
    fn handle(
        &mut self,
        item: Self::Item,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send;

    /// Handles up to a chunk of items; returns whether it stopped at the chunk's end (more
    /// may wait: the skeleton wakes the actor again). The default takes, handles and marks
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
        myself: &ActorRef<InboxMsg<Self::Msg>>,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        let _ = (message, myself);
        async { Ok(()) }
    }

    /// Runs when the instance stops (in `post_stop`).
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
/// its actor's messages.
pub type ConsumerMailbox<C> =
    Mailbox<<C as Consumer>::Item, <C as Consumer>::Label, InboxMsg<<C as Consumer>::Msg>>;

/// The actor that runs a [`Consumer`] on its inbox.
pub struct InboxActor<C>(PhantomData<fn() -> C>);

impl<C> InboxActor<C> {
    /// The actor (spawn it with name `None`: ractor's registry is process-global).
    pub fn new() -> Self {
        InboxActor(PhantomData)
    }
}

impl<C> Clone for InboxActor<C> {
    fn clone(&self) -> Self {
        InboxActor::new()
    }
}

impl<C> Default for InboxActor<C> {
    fn default() -> Self {
        InboxActor::new()
    }
}

/// An [`InboxActor`]'s state: its consumer and the inbox it drains.
pub struct InboxState<C: Consumer> {
    consumer: C,
    inbox: Arc<Inbox<C::Item, C::Label>>,
}

impl<C: Consumer> Actor for InboxActor<C> {
    type Msg = InboxMsg<C::Msg>;
    type State = InboxState<C>;
    type Arguments = C::Args;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: C::Args,
    ) -> Result<InboxState<C>, ActorProcessingErr> {
        let mailbox = C::mailbox(&args);
        // The doorbell rings this instance from now on, before its first drain (in
        // `post_start`) can disarm it. Were the slot set by whoever spawned it, after the
        // spawn returned, an instance that had already drained its inbox empty would miss
        // the ring of the next push (which finds no instance in the slot and leaves the
        // doorbell armed), and every push after it: the lane would stall for good.
        mailbox.actor.set(myself.clone());
        let inbox = Arc::clone(&mailbox.inbox);
        // Also arms the doorbell for the wake in `post_start`.
        let failed = inbox.recover();
        let consumer = C::start(args, failed, &myself).await?;
        Ok(InboxState { consumer, inbox })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut InboxState<C>,
    ) -> Result<(), ActorProcessingErr> {
        state.consumer.started().await?;
        // Whatever waited while no instance was in place.
        let _ = myself.cast(InboxMsg::Wake);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut InboxState<C>,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            InboxMsg::Wake => {
                state.inbox.count_wake();
                if state.consumer.drain(&state.inbox).await? {
                    // More may wait: let the mailbox breathe, then go on.
                    let _ = myself.cast(InboxMsg::Wake);
                }
            }
            InboxMsg::Own(message) => state.consumer.message(message, &myself).await?,
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut InboxState<C>,
    ) -> Result<(), ActorProcessingErr> {
        state.consumer.stopped().await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ractor::Actor;
    use tokio::sync::mpsc;

    use super::*;
    use crate::inbox::Bound;
    use crate::mailbox::Mailbox;

    type Numbers = Mailbox<u32, u32, InboxMsg<NoMsg>>;

    /// Hands each number to the test; fails on 13. What it learned of a failed
    /// predecessor is kept.
    struct Collect {
        out: mpsc::UnboundedSender<u32>,
    }

    #[derive(Clone)]
    struct CollectArgs {
        mailbox: Numbers,
        out: mpsc::UnboundedSender<u32>,
        recovered: Arc<Mutex<Vec<u32>>>,
    }

    impl Consumer for Collect {
        type Item = u32;
        type Label = u32;
        type Msg = NoMsg;
        type Args = CollectArgs;

        // Any child will do: the test spawns it itself.
        const CHILD: Child = Child::FastLane;
        const CHUNK: usize = 4;

        fn mailbox(args: &CollectArgs) -> &Numbers {
            &args.mailbox
        }

        async fn start(
            args: CollectArgs,
            failed: Option<Failed<u32>>,
            _myself: &ActorRef<InboxMsg<NoMsg>>,
        ) -> Result<Self, ActorProcessingErr> {
            if let Some(failed) = failed {
                args.recovered.lock().unwrap().push(failed.label);
            }
            Ok(Collect { out: args.out })
        }

        async fn handle(&mut self, item: u32) -> Result<(), ActorProcessingErr> {
            if item == 13 {
                return Err("13 fails".into());
            }
            let _ = self.out.send(item);
            Ok(())
        }
    }

    fn numbers() -> Numbers {
        Mailbox::new("numbers", Bound::wait(100), |n| *n, || InboxMsg::Wake)
    }

    /// Spawns an instance; the skeleton points the mailbox's slot at it itself.
    async fn spawn(args: &CollectArgs) -> tokio::task::JoinHandle<()> {
        let (_actor, ended) = Actor::spawn(None, InboxActor::<Collect>::new(), args.clone())
            .await
            .unwrap();
        ended
    }

    async fn received(rx: &mut mpsc::UnboundedReceiver<u32>, n: usize) -> Vec<u32> {
        let mut got = Vec::new();
        while got.len() < n {
            got.push(rx.recv().await.unwrap());
        }
        got
    }

    #[tokio::test]
    async fn what_waited_before_the_start_and_more_than_a_chunk_are_all_drained_in_order() {
        let (out, mut rx) = mpsc::unbounded_channel();
        let args = CollectArgs {
            mailbox: numbers(),
            out,
            recovered: Arc::default(),
        };
        // Ten items (two and a half chunks) before any instance exists: the skeleton's
        // first wake and its re-wakes after full chunks take them all.
        args.mailbox.push_all(1..=10).unwrap();
        let _actor = spawn(&args).await;
        assert_eq!(received(&mut rx, 10).await, (1..=10).collect::<Vec<_>>());
        // And the doorbell rings it for what comes later.
        args.mailbox.push(11).unwrap();
        assert_eq!(received(&mut rx, 1).await, vec![11]);
    }

    /// The hang found under load (a fast lane that stopped for good after a restart): the
    /// new instance drained its inbox empty before its spawner pointed the slot at it, so
    /// the next push rang an empty slot and left the doorbell armed. Here the spawner never
    /// sets the slot: the instance must have done it itself, before its first drain.
    #[tokio::test(start_paused = true)]
    async fn a_push_after_the_first_drain_rings_an_instance_its_spawner_has_not_named_yet() {
        let (out, mut rx) = mpsc::unbounded_channel();
        let args = CollectArgs {
            mailbox: numbers(),
            out,
            recovered: Arc::default(),
        };
        args.mailbox.push(1).unwrap();
        let (actor, _ended) = Actor::spawn(None, InboxActor::<Collect>::new(), args.clone())
            .await
            .unwrap();
        assert_eq!(received(&mut rx, 1).await, vec![1]);
        assert_eq!(
            args.mailbox.actor.get().map(|a| a.get_id()),
            Some(actor.get_id())
        );
        args.mailbox.push(2).unwrap();
        let next = tokio::time::timeout(std::time::Duration::from_secs(60), rx.recv()).await;
        assert_eq!(next, Ok(Some(2)), "the second push woke the instance");
    }

    #[tokio::test]
    async fn a_successor_learns_of_the_failed_item_and_goes_on_after_it() {
        let (out, mut rx) = mpsc::unbounded_channel();
        let args = CollectArgs {
            mailbox: numbers(),
            out,
            recovered: Arc::default(),
        };
        let first = spawn(&args).await;
        args.mailbox.push_all([12, 13, 14]).unwrap();
        assert_eq!(received(&mut rx, 1).await, vec![12]);
        // The first instance fails on 13 and ends.
        first.await.unwrap();
        args.mailbox.actor.clear();
        let _second = spawn(&args).await;
        assert_eq!(received(&mut rx, 1).await, vec![14]);
        assert_eq!(*args.recovered.lock().unwrap(), vec![13]);
    }
}
