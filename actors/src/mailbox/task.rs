//! [`spawn_consumer`]: runs a [`Consumer`] on a plain tokio task — the one runner of every
//! inbox-driven child of the tree (decision 0079).
//!
//! The runner holds what every consumer must do and none may forget:
//! - before the consumer starts, its instance is in its mailbox's slot (so a push after its
//!   first drain rings it) and the item a failed predecessor was handling is recovered
//!   ([`crate::inbox::Inbox::recover`], which also leaves the doorbell armed for the first
//!   wake);
//! - [`Consumer::start`] is awaited by the caller, as a spawn awaits an actor's start: a
//!   start that fails (an error or a panic) is the caller's error, [`StartFailed`], and no
//!   task is left;
//! - on its task, [`Consumer::started`], then one wake for whatever waited while no instance
//!   was in place, then a drain per ring of the doorbell; after a full chunk its own
//!   messages are let in before it goes on;
//! - an error or a panic in `started`, `drain` (`handle`), `message` or `stopped` fails the
//!   instance with the item in flight: its task ends and reports the failure's text;
//! - [`Instance::stop`] lets it finish what it handles, then runs [`Consumer::stopped`];
//!   aborting its task ends it where it is (a kill: nothing more runs).
//!
//! Whoever spawns it hears of its end once, through `on_end` (the session's supervisor: by a
//! message), unless the task was aborted.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use ractor::ActorProcessingErr;
use tokio::task::JoinHandle;

use crate::child::Child;
use crate::inbox::Inbox;
use crate::mailbox::{Consumer, Instance};

/// How an instance's task ended (it was not aborted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The instance ([`Instance::id`]).
    pub instance: u64,
    /// Why it failed: the error's or the panic's text; `None` when it was stopped.
    pub failure: Option<String>,
}

/// A consumer's start failed (an error or a panic in [`Consumer::start`]): no task runs.
/// Its text is the one a ractor actor's failed start had, so a supervisor's report of it
/// reads as before.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Actor panicked during startup '{message}'")]
pub struct StartFailed {
    /// The child whose start failed.
    pub child: Child,
    /// The error's or the panic's text.
    pub message: String,
}

/// Starts an instance of consumer `C` on `args` and runs it on a task of its own; returns
/// the instance (also in its mailbox's slot) and the task's handle. `on_end` hears how the
/// task ended, unless it was aborted. See the module documentation for what it guarantees.
pub async fn spawn_consumer<C, E>(
    args: C::Args,
    on_end: E,
) -> Result<(Instance<C::Msg>, JoinHandle<()>), StartFailed>
where
    C: Consumer,
    E: FnOnce(Ended) + Send + 'static,
{
    let mailbox = C::mailbox(&args);
    let instance = Instance::new();
    // The doorbell rings this instance from now on, before its first drain can disarm it.
    // Were the slot set after the start returned, an instance that had already drained its
    // inbox empty would miss the ring of the next push (which would find no instance and
    // leave the doorbell armed), and every push after it: the child would stall for good.
    mailbox.actor.set(instance.clone());
    let inbox = Arc::clone(&mailbox.inbox);
    // Also arms the doorbell for the first wake.
    let failed = inbox.recover();
    let started = AssertUnwindSafe(C::start(args, failed, &instance))
        .catch_unwind()
        .await;
    let consumer = match started {
        Ok(Ok(consumer)) => consumer,
        Ok(Err(error)) => return Err(start_failed::<C>(&instance, error.to_string())),
        Err(panic) => return Err(start_failed::<C>(&instance, panic_text(panic))),
    };
    let task = {
        let instance = instance.clone();
        tokio::spawn(async move {
            // Ends the instance however its task ends: returned, or aborted.
            let ending = EndsOnDrop(instance.clone());
            let failure = run(consumer, &inbox, &instance).await;
            drop(ending);
            on_end(Ended {
                instance: instance.id(),
                failure,
            });
        })
    };
    Ok((instance, task))
}

fn start_failed<C: Consumer>(instance: &Instance<C::Msg>, message: String) -> StartFailed {
    instance.end();
    StartFailed {
        child: C::CHILD,
        message,
    }
}

/// Runs the instance until it is stopped or fails; returns why it failed.
async fn run<C: Consumer>(
    mut consumer: C,
    inbox: &Arc<Inbox<C::Item, C::Label>>,
    myself: &Instance<C::Msg>,
) -> Option<String> {
    match AssertUnwindSafe(serve(&mut consumer, inbox, myself))
        .catch_unwind()
        .await
    {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(error.to_string()),
        Err(panic) => Some(panic_text(panic)),
    }
}

async fn serve<C: Consumer>(
    consumer: &mut C,
    inbox: &Arc<Inbox<C::Item, C::Label>>,
    myself: &Instance<C::Msg>,
) -> Result<(), ActorProcessingErr> {
    consumer.started().await?;
    // Whatever waited while no instance was in place.
    myself.ring_again();
    loop {
        if let Some(reason) = myself.take_failure() {
            return Err(reason.into());
        }
        if myself.stopping() {
            break;
        }
        if let Some(message) = myself.take_message() {
            consumer.message(message, myself).await?;
            continue;
        }
        if myself.take_ring() {
            inbox.count_wake();
            if consumer.drain(inbox).await? {
                // More may wait: its own messages first, then on.
                myself.ring_again();
            }
            continue;
        }
        myself.wait().await;
    }
    consumer.stopped().await
}

/// Ends its instance when dropped: when its task returns, and when it is aborted.
struct EndsOnDrop<M: Send + 'static>(Instance<M>);

impl<M: Send + 'static> Drop for EndsOnDrop<M> {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A panic's text, as a ractor actor's failure reported it.
pub(crate) fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(text) => *text,
        Err(panic) => match panic.downcast::<&str>() {
            Ok(text) => (*text).to_owned(),
            Err(_) => "Unknown panic occurred which couldn't be coerced to a string".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::inbox::{Bound, Failed};
    use crate::mailbox::Mailbox;

    type Numbers = Mailbox<u32, u32, Tick>;

    /// The consumer's own message: a tick, handed to the test as 1000 + its number.
    #[derive(Debug)]
    struct Tick(u32);

    /// Hands each number to the test; fails on 13, panics on 66, sends itself a tick on 7
    /// (delivered once the chunk it is in is done). What it learned of a failed predecessor
    /// is kept.
    struct Collect {
        out: mpsc::UnboundedSender<u32>,
        myself: Instance<Tick>,
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
        type Msg = Tick;
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
            myself: &Instance<Tick>,
        ) -> Result<Self, ActorProcessingErr> {
            if let Some(failed) = failed {
                args.recovered.lock().unwrap().push(failed.label);
            }
            Ok(Collect {
                out: args.out,
                myself: myself.clone(),
            })
        }

        async fn handle(&mut self, item: u32) -> Result<(), ActorProcessingErr> {
            match item {
                13 => return Err("13 fails".into()),
                66 => panic!("66 panics"),
                7 => {
                    self.myself.cast(Tick(7));
                }
                _ => {}
            }
            let _ = self.out.send(item);
            Ok(())
        }

        async fn message(
            &mut self,
            Tick(n): Tick,
            _myself: &Instance<Tick>,
        ) -> Result<(), ActorProcessingErr> {
            let _ = self.out.send(1000 + n);
            Ok(())
        }
    }

    fn numbers() -> Numbers {
        Mailbox::new("numbers", Bound::wait(100), |n| *n)
    }

    fn args() -> (CollectArgs, mpsc::UnboundedReceiver<u32>) {
        let (out, rx) = mpsc::unbounded_channel();
        let args = CollectArgs {
            mailbox: numbers(),
            out,
            recovered: Arc::default(),
        };
        (args, rx)
    }

    /// Spawns an instance whose end is sent to `ends`.
    async fn spawn(
        args: &CollectArgs,
        ends: &mpsc::UnboundedSender<Ended>,
    ) -> (Instance<Tick>, JoinHandle<()>) {
        let ends = ends.clone();
        spawn_consumer::<Collect, _>(args.clone(), move |ended| {
            let _ = ends.send(ended);
        })
        .await
        .unwrap()
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
        let (args, mut rx) = args();
        let (ends, _) = mpsc::unbounded_channel();
        // Ten items (two and a half chunks) before any instance exists: the runner's first
        // wake and its going on after full chunks take them all.
        args.mailbox
            .push_all([1, 2, 3, 4, 5, 6, 8, 9, 10, 11])
            .unwrap();
        let _instance = spawn(&args, &ends).await;
        assert_eq!(
            received(&mut rx, 10).await,
            [1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
        );
        // And the doorbell rings it for what comes later.
        args.mailbox.push(12).unwrap();
        assert_eq!(received(&mut rx, 1).await, [12]);
        assert_eq!(args.mailbox.stats().wakes, 4);
    }

    /// An own message sent while a chunk is handled is delivered once that chunk is done,
    /// before the next chunk: the drain lets it in between chunks, not after the inbox is
    /// empty.
    #[tokio::test]
    async fn an_own_message_is_delivered_between_chunks() {
        let (args, mut rx) = args();
        let (ends, _) = mpsc::unbounded_channel();
        args.mailbox
            .push_all([5, 6, 7, 8, 9, 10, 11, 12, 14])
            .unwrap();
        let _instance = spawn(&args, &ends).await;
        assert_eq!(
            received(&mut rx, 10).await,
            [5, 6, 7, 8, 1007, 9, 10, 11, 12, 14]
        );
    }

    /// The hang found under load (a fast lane that stopped for good after a restart): the
    /// new instance drained its inbox empty before its spawner pointed the slot at it, so
    /// the next push rang an empty slot and left the doorbell armed. Here the spawner never
    /// sets the slot: the runner must have done it itself, before the first drain.
    #[tokio::test(start_paused = true)]
    async fn a_push_after_the_first_drain_rings_an_instance_its_spawner_has_not_named_yet() {
        let (args, mut rx) = args();
        let (ends, _) = mpsc::unbounded_channel();
        args.mailbox.push(1).unwrap();
        let (instance, _task) = spawn(&args, &ends).await;
        assert_eq!(received(&mut rx, 1).await, [1]);
        assert_eq!(
            args.mailbox.actor.get().map(|i| i.id()),
            Some(instance.id())
        );
        args.mailbox.push(2).unwrap();
        let next = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
        assert_eq!(next, Ok(Some(2)), "the second push woke the instance");
    }

    #[tokio::test]
    async fn a_successor_learns_of_the_failed_item_and_goes_on_after_it() {
        let (args, mut rx) = args();
        let (ends_tx, mut ends) = mpsc::unbounded_channel();
        let (first, task) = spawn(&args, &ends_tx).await;
        args.mailbox.push_all([12, 13, 14]).unwrap();
        assert_eq!(received(&mut rx, 1).await, [12]);
        // The first instance fails on 13 and ends, and says so.
        task.await.unwrap();
        assert_eq!(
            ends.recv().await,
            Some(Ended {
                instance: first.id(),
                failure: Some("13 fails".to_owned()),
            })
        );
        assert!(!first.is_running());
        assert!(
            !args.mailbox.actor.ring(),
            "an ended instance takes no ring"
        );
        let (second, _task) = spawn(&args, &ends_tx).await;
        assert_ne!(second.id(), first.id());
        assert_eq!(received(&mut rx, 1).await, [14]);
        assert_eq!(*args.recovered.lock().unwrap(), [13]);
    }

    #[tokio::test]
    async fn a_panic_fails_the_instance_with_its_text_and_the_item_in_flight() {
        let (args, mut rx) = args();
        let (ends_tx, mut ends) = mpsc::unbounded_channel();
        let (first, _task) = spawn(&args, &ends_tx).await;
        args.mailbox.push_all([65, 66, 67]).unwrap();
        assert_eq!(received(&mut rx, 1).await, [65]);
        assert_eq!(
            ends.recv().await,
            Some(Ended {
                instance: first.id(),
                failure: Some("66 panics".to_owned()),
            })
        );
        let _second = spawn(&args, &ends_tx).await;
        assert_eq!(received(&mut rx, 1).await, [67]);
        assert_eq!(*args.recovered.lock().unwrap(), [66]);
    }

    #[tokio::test]
    async fn a_stopped_instance_says_so_and_takes_nothing_more() {
        let (args, _rx) = args();
        let (ends_tx, mut ends) = mpsc::unbounded_channel();
        let (instance, task) = spawn(&args, &ends_tx).await;
        instance.stop();
        task.await.unwrap();
        assert_eq!(
            ends.recv().await,
            Some(Ended {
                instance: instance.id(),
                failure: None,
            })
        );
        assert!(!instance.cast(Tick(1)));
        assert!(!instance.is_running());
    }
}
