//! Where the control lane runs the reactive rules, and [`ReactiveData`], the progress it
//! keeps across restarts.

use reel_protocol::SessionEvent;

use super::changes::Changes;
use super::config::Reactive;
use super::temporal::{Ctx, TemporalData};
use crate::callback_guard::CallbackGuard;
use crate::state::{State, StateSnapshot};
use crate::writer::SessionWriter;

/// What the reactive rules need to remember between messages, kept in the control lane's
/// data so that a restarted lane goes on where the failed one stopped: the journal cursor
/// of the last watcher evaluation (and the state at it), and the progress of every temporal
/// pattern (sustained start times, rate windows, turn streaks).
#[derive(Debug, Clone)]
pub(crate) struct ReactiveData {
    /// The sequence number of the last mutation the watchers have seen.
    cursor: u64,
    /// The state at `cursor`, for when the journal's ring no longer reaches back to it.
    baseline: StateSnapshot,
    temporal: TemporalData,
}

impl ReactiveData {
    /// Watchers see the changes made from now on.
    pub(crate) fn new(state: &State) -> Self {
        let baseline = state.snapshot();
        ReactiveData {
            cursor: baseline.cursor(),
            baseline,
            temporal: TemporalData::default(),
        }
    }
}

/// The arguments every evaluation needs.
pub(crate) struct Scope<'a> {
    /// The session state.
    pub(crate) state: &'a State,
    /// Sends to the session, for temporal actions.
    pub(crate) writer: &'a SessionWriter,
    /// Event time now.
    pub(crate) now_ms: u64,
    /// Cuts a hung action off at the callback timeout.
    pub(crate) guard: &'a CallbackGuard,
}

impl Scope<'_> {
    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            state: self.state,
            writer: self.writer,
            guard: self.guard,
        }
    }
}

impl Reactive {
    /// After the control lane handled `event`: the rate patterns count it.
    pub(crate) async fn after_event(
        &self,
        data: &mut ReactiveData,
        event: &SessionEvent,
        scope: &Scope<'_>,
    ) {
        self.temporal
            .on_event(&mut data.temporal, event, scope.now_ms, &scope.ctx())
            .await;
    }

    /// After the control lane handled a batch of events: the sustained patterns check
    /// their conditions at the batch's time.
    pub(crate) async fn after_batch(&self, data: &mut ReactiveData, scope: &Scope<'_>) {
        self.temporal
            .check_sustained(&mut data.temporal, scope.now_ms, &scope.ctx())
            .await;
    }

    /// After tool writes were committed: every computed value (so watchers and guards see
    /// values derived from the tools' writes at once, not a turn later), then watchers on
    /// the changes since their last evaluation, then the sustained patterns.
    pub(crate) async fn after_commit(&self, data: &mut ReactiveData, scope: &Scope<'_>) {
        self.computed.recompute(scope.state).await;
        self.watch(data, scope.state, scope.guard).await;
        self.after_batch(data, scope).await;
    }

    /// Turn complete, step 2: every computed value, in dependency order.
    pub(crate) async fn recompute(&self, state: &State) {
        self.computed.recompute(state).await;
    }

    /// Turn complete, steps 4 and 5: watchers on the changes since their last evaluation,
    /// then the temporal patterns (sustained at this time, turn streaks).
    pub(crate) async fn at_turn_complete(&self, data: &mut ReactiveData, scope: &Scope<'_>) {
        self.watch(data, scope.state, scope.guard).await;
        self.temporal
            .on_turn(&mut data.temporal, scope.now_ms, &scope.ctx())
            .await;
    }

    /// Runs the watchers on every change since the last evaluation, and moves the cursor
    /// past them. What the actions write is seen by the next evaluation.
    async fn watch(&self, data: &mut ReactiveData, state: &State, guard: &CallbackGuard) {
        if self.watchers.is_empty() {
            return;
        }
        let now = state.snapshot();
        let upto = now.cursor();
        if upto <= data.cursor {
            return;
        }
        let mutations: Vec<_> = state
            .mutations_since(data.cursor)
            .into_iter()
            .take_while(|m| m.sequence <= upto)
            .collect();
        let complete = mutations.first().map(|m| m.sequence) == Some(data.cursor + 1);
        let changes = if complete {
            Changes::from_journal(&mutations)
        } else {
            tracing::warn!(
                from = data.cursor + 1,
                to = upto,
                "the journal's ring no longer holds every change since the last watcher \
                 evaluation; watchers see the net change of their keys instead"
            );
            Changes::between(&data.baseline, &now, self.watchers.keys())
        };
        data.cursor = upto;
        data.baseline = now;
        if !changes.is_empty() {
            self.watchers.fire(&changes, state, guard).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::{Value, json};

    use super::*;
    use crate::reactive::{ReactiveConfig, Watcher};
    use crate::state::RECENT_MUTATIONS;

    #[tokio::test]
    async fn a_ring_that_lost_changes_falls_back_to_the_net_change() {
        let state = State::new();
        state.set("app:score", 1).await.unwrap();
        let seen: Arc<Mutex<Vec<(Value, Value)>>> = Arc::default();
        let log = Arc::clone(&seen);
        let reactive = ReactiveConfig::new()
            .watch(
                Watcher::on("app:score")
                    .blocking()
                    .then(move |old, new, _| {
                        let log = Arc::clone(&log);
                        async move { log.lock().unwrap().push((old, new)) }
                    }),
            )
            .build()
            .unwrap();
        let mut data = ReactiveData::new(&state);
        state.set("app:score", 2).await.unwrap();
        for i in 0..RECENT_MUTATIONS {
            state.set("app:noise", i).await.unwrap();
        }
        let guard = CallbackGuard::new(
            std::time::Duration::from_secs(10),
            Arc::default(),
            Default::default(),
        );
        reactive.watch(&mut data, &state, &guard).await;
        reactive.watch(&mut data, &state, &guard).await; // nothing new
        assert_eq!(*seen.lock().unwrap(), vec![(json!(1), json!(2))]);
        assert_eq!(data.cursor, state.mutation_cursor());
    }
}
