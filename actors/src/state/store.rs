//! The StateStore actor: the single writer of a session's state.
//!
//! It owns no data of its own: the data lives in the `State` it was started with, so the
//! supervisor restarts a failed store simply by spawning a new one with the same `State`,
//! which continues from the last published version. Starting, the store attaches itself to
//! that `State` (writes from every clone now come here); stopping cleanly, it detaches and
//! flushes the journal sink. A store that fails (a panicking `Modify` closure) stays
//! attached until its replacement attaches; writes that find it gone apply directly.

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::Value;

use super::State;
use super::data::StateOp;
use crate::clock::SharedClock;

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
///     Actor::spawn(None, StateStore, StateStoreArgs { state: state.clone(), clock }).await?;
/// state.set("app:city", "London").await?; // applied by the actor
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct StateStore;

/// What a StateStore starts with.
pub struct StateStoreArgs {
    /// The state it writes (and attaches itself to).
    pub state: State,
    /// The session clock, which timestamps every mutation from now on.
    pub clock: SharedClock,
}

impl std::fmt::Debug for StateStoreArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateStoreArgs")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Messages to the StateStore.
pub enum StateStoreMsg {
    /// Applies `ops` as one batch, in order; replies with the value each op found (`null`
    /// if absent; for `ClearPrefix`, an object of the removed keys and values).
    Apply {
        /// The writes.
        ops: Vec<StateOp>,
        /// Whether they come from a delta view's commit (journaled `delta: true`).
        delta: bool,
        /// Where the old values go, if anyone waits for them.
        reply: Option<RpcReplyPort<Vec<Value>>>,
    },
    /// Flushes the journal sink.
    Flush,
}

impl std::fmt::Debug for StateStoreMsg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateStoreMsg::Apply { ops, delta, reply } => f
                .debug_struct("Apply")
                .field("ops", ops)
                .field("delta", delta)
                .field("reply", &reply.is_some())
                .finish(),
            StateStoreMsg::Flush => f.write_str("Flush"),
        }
    }
}

impl Actor for StateStore {
    type Msg = StateStoreMsg;
    type State = State;
    type Arguments = StateStoreArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: StateStoreArgs,
    ) -> Result<State, ActorProcessingErr> {
        args.state.attach(myself, args.clock);
        Ok(args.state)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: StateStoreMsg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StateStoreMsg::Apply { ops, delta, reply } => {
                // A panic in a Modify closure unwinds from here: ractor reports the store
                // failed, the reply port is dropped (the caller sees StoreUnavailable) and
                // nothing was published.
                let olds = state.shared().apply(ops, delta);
                if let Some(reply) = reply {
                    // The caller may have timed out and gone; the write stands regardless.
                    let _ = reply.send(olds);
                }
            }
            StateStoreMsg::Flush => state.flush_journal(),
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        state.shared().detach_if_id(myself.get_id());
        state.flush_journal();
        Ok(())
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
            StateStoreArgs {
                state: state.clone(),
                clock: Arc::new(ManualClock::new(100)),
            },
        )
        .await
        .unwrap();
        assert!(state.is_attached());
        state.set("k", 1).await.unwrap();

        state.detach();
        assert!(!state.is_attached());
        state.set("k", 2).await.unwrap(); // applied directly, same clock

        state.attach(store.clone(), Arc::new(ManualClock::new(200)));
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
        let args = |state: &State| StateStoreArgs {
            state: state.clone(),
            clock: Arc::new(ManualClock::new(1)),
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
