//! The StateStore: the single writer of a session's state, a [`Consumer`] on the tree's one
//! runner (a task of its own: [`StateStore::spawn`] on its own, the supervisor's start in a
//! session).
//!
//! It owns no data of its own: the data lives in the `State` it was started with, and the
//! writes wait in its [`StoreMailbox`] outside the actor. Starting, the store attaches that
//! mailbox's inbox to the `State` (writes from every clone now queue there). A store that
//! fails (a panicking `Modify` closure) loses only the write it was applying — that writer
//! gets [`super::StateError::StoreUnavailable`] — and its replacement, spawned by the
//! supervisor on the same `State` and mailbox, applies every other queued write in order:
//! the writes wait in the inbox, which outlives every instance. Stopping cleanly,
//! the store closes the inbox, applies what is left, detaches (writes apply directly from
//! then on) and flushes the journal sink.

use std::sync::Arc;

use ractor::ActorProcessingErr;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::State;
use super::data::StateOp;
use crate::child::Child;
use crate::clock::SharedClock;
use crate::inbox::{Bound, Failed, Inbox};
use crate::mailbox::{
    Consumer, ConsumerMailbox, Instance, Mailbox, NoMsg, StartFailed, spawn_consumer,
};

/// How many writes may wait for the store before writers wait for room.
pub const STORE_CAPACITY: usize = 1024;

/// The bound of the store's inbox: writers wait for room, no write is dropped.
pub const STORE_BOUND: Bound = Bound::wait(STORE_CAPACITY);

/// How many writes the store applies per wake before it lets its mailbox in.
const STORE_CHUNK: usize = 64;

/// A write waiting for the store.
pub struct StoreWrite {
    /// The writes, applied as one batch, in order.
    pub ops: Vec<StateOp>,
    /// Whether they come from a delta view's commit (journaled `delta: true`).
    pub delta: bool,
    /// Where the value each op found goes (`null` if absent; for `ClearPrefix`, an object of
    /// the removed keys and values), if anyone waits for them.
    pub reply: Option<oneshot::Sender<Vec<Value>>>,
}

impl std::fmt::Debug for StoreWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWrite")
            .field("ops", &self.ops)
            .field("delta", &self.delta)
            .field("reply", &self.reply.is_some())
            .finish()
    }
}

/// The writes waiting for a session's store; shared by the `State` and every store
/// instance.
pub type StoreInbox = Inbox<StoreWrite>;

/// The state store's mailbox: the writes waiting for it, and its current instance.
pub type StoreMailbox = Mailbox<StoreWrite, (), NoMsg>;

/// An empty store mailbox, made like every other child's ([`Mailbox::new`]).
pub fn store_mailbox() -> StoreMailbox {
    Mailbox::new("state_store", STORE_BOUND, |_| ())
}

/// What a StateStore starts with (and each restart starts again from).
#[derive(Clone)]
pub struct StateStoreArgs {
    /// The state it writes (and attaches its inbox to).
    pub state: State,
    /// The session clock, which timestamps every mutation from now on.
    pub clock: SharedClock,
    /// Its mailbox, shared with the instances before and after it: the writes wait in its
    /// inbox, and its doorbell rings the instance in its slot.
    pub mailbox: StoreMailbox,
}

impl StateStoreArgs {
    /// Arguments for a store on its own (not restarted by a supervisor), with a mailbox of
    /// its own.
    pub fn standalone(state: State, clock: SharedClock) -> Self {
        StateStoreArgs {
            state,
            clock,
            mailbox: store_mailbox(),
        }
    }
}

impl std::fmt::Debug for StateStoreArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateStoreArgs")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The state store: what one instance holds.
pub struct StateStore {
    state: State,
    inbox: Arc<StoreInbox>,
}

impl StateStore {
    /// Starts a store on its own (not restarted by a supervisor), on a task of its own;
    /// returns its instance (stop it with [`Instance::stop`]) and its task.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use reel_actors::clock::{ManualClock, SharedClock};
    /// use reel_actors::state::{State, StateStore, StateStoreArgs};
    ///
    /// let state = State::new();
    /// let clock: SharedClock = Arc::new(ManualClock::new(1_718_000_000_000));
    /// let args = StateStoreArgs::standalone(state.clone(), clock);
    /// let (store, task) = StateStore::spawn(args).await?;
    /// state.set("app:city", "London").await?; // applied by the store
    /// store.stop();
    /// task.await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn spawn(
        args: StateStoreArgs,
    ) -> Result<(Instance<NoMsg>, JoinHandle<()>), StartFailed> {
        spawn_consumer::<StateStore, _>(args, |_| {}).await
    }
}

impl Consumer for StateStore {
    type Item = StoreWrite;
    type Label = ();
    type Msg = NoMsg;
    type Args = StateStoreArgs;

    const CHILD: Child = Child::StateStore;
    const CHUNK: usize = STORE_CHUNK;

    fn mailbox(args: &StateStoreArgs) -> &ConsumerMailbox<Self> {
        &args.mailbox
    }

    async fn start(
        args: StateStoreArgs,
        failed: Option<Failed<()>>,
        _myself: &Instance<NoMsg>,
    ) -> Result<Self, ActorProcessingErr> {
        // (The runner has pointed the slot at this instance already.)
        // The write a failed predecessor was applying is lost (its writer was told, its
        // reply port dropped with the failed instance); the rest wait in order.
        if failed.is_some() {
            tracing::warn!(
                "the state store failed while applying a write; that write was not applied"
            );
        }
        let inbox = args.mailbox.inbox;
        args.state.attach(Arc::clone(&inbox), args.clock);
        Ok(StateStore {
            state: args.state,
            inbox,
        })
    }

    async fn handle(&mut self, write: StoreWrite) -> Result<(), ActorProcessingErr> {
        // A panic in a Modify closure unwinds from here: the runner reports the store failed,
        // this write's reply port is dropped (its writer sees StoreUnavailable), nothing
        // was published, and the item stays marked in flight for the successor.
        apply(&self.state, write);
        Ok(())
    }

    async fn stopped(&mut self) -> Result<(), ActorProcessingErr> {
        // Stopped for good: no more queueing. What waited is applied here, in order; a
        // writer that finds the inbox closed applies its write directly.
        for write in self.inbox.close() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                apply(&self.state, write);
            }));
        }
        self.state.shared().detach_if(&self.inbox);
        // On the session's disk: file writes never run on tokio's workers.
        let _ = self.state.flush_journal_on_disk().await;
        Ok(())
    }
}

/// Applies one queued write and answers its writer.
fn apply(state: &State, write: StoreWrite) {
    let olds = state.shared().apply(write.ops, write.delta);
    if let Some(reply) = write.reply {
        // The writer may have timed out and gone; the write stands regardless.
        let _ = reply.send(olds);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::clock::ManualClock;

    #[tokio::test]
    async fn attach_and_detach_reroute_writes_and_set_the_clock() {
        let state = State::new();
        let (store, join) = StateStore::spawn(StateStoreArgs::standalone(
            state.clone(),
            Arc::new(ManualClock::new(100)),
        ))
        .await
        .unwrap();
        assert!(state.is_attached());
        state.set("k", 1).await.unwrap();

        let inbox = state.shared().store().unwrap();
        state.detach();
        assert!(!state.is_attached());
        state.set("k", 2).await.unwrap(); // applied directly, same clock

        state.attach(inbox, Arc::new(ManualClock::new(200)));
        assert!(state.is_attached());
        state.set("k", 3).await.unwrap();

        let stamps: Vec<(u64, u64)> = state
            .recent_mutations()
            .iter()
            .map(|m| (m.sequence, m.timestamp_ms))
            .collect();
        assert_eq!(stamps, vec![(1, 100), (2, 100), (3, 200)]);
        assert_eq!(state.get_raw("k"), Some(json!(3)));

        store.stop();
        join.await.unwrap();
        assert!(!state.is_attached());
    }

    #[tokio::test]
    async fn a_stopping_store_does_not_detach_its_replacement() {
        let state = State::new();
        let args = |state: &State| {
            StateStoreArgs::standalone(state.clone(), Arc::new(ManualClock::new(1)))
        };
        let (old, old_join) = StateStore::spawn(args(&state)).await.unwrap();
        let (new, new_join) = StateStore::spawn(args(&state)).await.unwrap();
        old.stop();
        old_join.await.unwrap();
        assert!(state.is_attached(), "the replacement stays attached");
        new.stop();
        new_join.await.unwrap();
        assert!(!state.is_attached());
    }
}
