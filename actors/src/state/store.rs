//! The StateStore actor: the single writer of a session's state.
//!
//! It owns no data of its own: the data lives in the `State` it was started with, and the
//! writes wait in a [`StoreInbox`] outside the actor. Starting, the store attaches that
//! inbox to the `State` (writes from every clone now queue there). A store that fails (a
//! panicking `Modify` closure) loses only the write it was applying — that writer gets
//! [`super::StateError::StoreUnavailable`] — and its replacement, spawned by the supervisor on
//! the same `State` and inbox, applies every other queued write in order: ractor drops a
//! failed actor's mailbox, so no write ever waits in it. Stopping cleanly, the store
//! closes the inbox, applies what is left, detaches (writes apply directly from then on)
//! and flushes the journal sink.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use serde_json::Value;
use tokio::sync::oneshot;

use super::State;
use super::data::StateOp;
use crate::clock::SharedClock;
use crate::inbox::{Bound, Inbox};
use crate::mailbox::doorbell;
use crate::slot::Slot;

/// How many writes may wait for the store before writers wait for room.
pub const STORE_CAPACITY: usize = 1024;

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

/// A store inbox whose doorbell rings the store in `slot`.
pub fn store_inbox(slot: &Arc<Slot<StateStoreMsg>>) -> StoreInbox {
    Inbox::new(
        "state_store",
        Bound::wait(STORE_CAPACITY),
        |_| (),
        doorbell(slot, || StateStoreMsg::Wake),
    )
}

/// The StateStore actor. Spawn it with name `None` (ractor's registry is process-global).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use ractor::Actor;
/// use reel_actors::clock::{ManualClock, SharedClock};
/// use reel_actors::state::{State, StateStore, StateStoreArgs};
///
/// let state = State::new();
/// let clock: SharedClock = Arc::new(ManualClock::new(1_718_000_000_000));
/// let (_store, _join) =
///     Actor::spawn(None, StateStore, StateStoreArgs::standalone(state.clone(), clock)).await?;
/// state.set("app:city", "London").await?; // applied by the actor
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct StateStore;

/// What a StateStore starts with.
#[derive(Clone)]
pub struct StateStoreArgs {
    /// The state it writes (and attaches its inbox to).
    pub state: State,
    /// The session clock, which timestamps every mutation from now on.
    pub clock: SharedClock,
    /// The inbox shared with the instances before and after it, and the slot its doorbell
    /// rings; `None` for a store on its own, which makes both.
    pub inbox: Option<(Arc<StoreInbox>, Arc<Slot<StateStoreMsg>>)>,
}

impl StateStoreArgs {
    /// Arguments for a store on its own (not restarted by a supervisor).
    pub fn standalone(state: State, clock: SharedClock) -> Self {
        StateStoreArgs {
            state,
            clock,
            inbox: None,
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

/// Messages to the StateStore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateStoreMsg {
    /// Writes wait in the inbox.
    Wake,
}

/// The store's state.
pub struct StoreState {
    state: State,
    inbox: Arc<StoreInbox>,
}

/// How many writes the store applies per wake before it lets its mailbox in.
const STORE_CHUNK: usize = 64;

impl Actor for StateStore {
    type Msg = StateStoreMsg;
    type State = StoreState;
    type Arguments = StateStoreArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: StateStoreArgs,
    ) -> Result<StoreState, ActorProcessingErr> {
        let (inbox, slot) = match args.inbox {
            Some(shared) => shared,
            None => {
                let slot: Arc<Slot<StateStoreMsg>> = Arc::default();
                (Arc::new(store_inbox(&slot)), slot)
            }
        };
        slot.set(myself);
        // The write a failed predecessor was applying is lost (its writer was told, its
        // reply port dropped with the failed instance); the rest wait in order.
        if inbox.recover().is_some() {
            tracing::warn!(
                "the state store failed while applying a write; that write was not applied"
            );
        }
        args.state.attach(Arc::clone(&inbox), args.clock);
        Ok(StoreState {
            state: args.state,
            inbox,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        _state: &mut StoreState,
    ) -> Result<(), ActorProcessingErr> {
        let _ = myself.cast(StateStoreMsg::Wake);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        StateStoreMsg::Wake: StateStoreMsg,
        state: &mut StoreState,
    ) -> Result<(), ActorProcessingErr> {
        for _ in 0..STORE_CHUNK {
            let Some(taken) = state.inbox.take() else {
                return Ok(());
            };
            // A panic in a Modify closure unwinds from here: ractor reports the store
            // failed, this write's reply port is dropped (its writer sees
            // StoreUnavailable), nothing was published, and the item stays marked in
            // flight for the successor.
            apply(&state.state, taken.item);
            state.inbox.done(taken.seq);
        }
        let _ = myself.cast(StateStoreMsg::Wake);
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut StoreState,
    ) -> Result<(), ActorProcessingErr> {
        // Stopped for good: no more queueing. What waited is applied here, in order; a
        // writer that finds the inbox closed applies its write directly.
        for write in state.inbox.close() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                apply(&state.state, write);
            }));
        }
        state.state.shared().detach_if(&state.inbox);
        // On the session's disk: file writes never run on tokio's workers.
        let _ = state.state.flush_journal_on_disk().await;
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
        let (store, join) = Actor::spawn(
            None,
            StateStore,
            StateStoreArgs::standalone(state.clone(), Arc::new(ManualClock::new(100))),
        )
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

        store.stop(None);
        join.await.unwrap();
        assert!(!state.is_attached());
    }

    #[tokio::test]
    async fn a_stopping_store_does_not_detach_its_replacement() {
        let state = State::new();
        let args = |state: &State| {
            StateStoreArgs::standalone(state.clone(), Arc::new(ManualClock::new(1)))
        };
        let (old, old_join) = Actor::spawn(None, StateStore, args(&state)).await.unwrap();
        let (new, new_join) = Actor::spawn(None, StateStore, args(&state)).await.unwrap();
        old.stop(None);
        old_join.await.unwrap();
        assert!(state.is_attached(), "the replacement stays attached");
        new.stop(None);
        new_join.await.unwrap();
        assert!(!state.is_attached());
    }
}
