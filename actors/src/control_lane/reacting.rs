//! The control lane's calls into the session's [`StateReactor`](crate::reactor::StateReactor):
//! after each event, after each frame's events, and at the two commit points (see
//! [`crate::reactor`] for when and in which order).

use reel_protocol::SessionEvent;

use super::{ControlData, ControlLaneState};
use crate::reactor::{CommitPoint, ReactorScope};
use crate::state::Changes;

impl ControlLaneState {
    /// What the reactor works with, at event time `now_ms`.
    fn reactor_scope(&self, now_ms: u64) -> ReactorScope<'_> {
        ReactorScope {
            state: &self.state,
            writer: &self.writer,
            now_ms,
            guard: &self.guard,
        }
    }

    /// After the lane handled `event`, at its frame's time.
    pub(crate) async fn react_to_event(
        &self,
        data: &mut ControlData,
        event: &SessionEvent,
        ts_ms: u64,
    ) {
        if let Some(reactor) = data.reactor.as_mut() {
            reactor.on_event(event, self.reactor_scope(ts_ms)).await;
        }
    }

    /// After the last event of a frame, at the frame's time.
    pub(crate) async fn react_to_batch(&self, data: &mut ControlData, ts_ms: u64) {
        if let Some(reactor) = data.reactor.as_mut() {
            reactor.on_batch(self.reactor_scope(ts_ms)).await;
        }
    }

    /// The lane is done with an event (the state's lane mark even again), at its time.
    pub(crate) async fn react_settled(&self, data: &mut ControlData, ts_ms: u64) {
        if let Some(reactor) = data.reactor.as_mut() {
            reactor.on_settled(self.reactor_scope(ts_ms)).await;
        }
    }

    /// At a commit point, first: the derived values.
    pub(crate) async fn recompute(&self, data: &mut ControlData) {
        if let Some(reactor) = data.reactor.as_mut() {
            reactor.recompute(&self.state).await;
        }
    }

    /// A commit point: the reactor gets every change since the previous one.
    pub(crate) async fn react_to_commit(
        &self,
        data: &mut ControlData,
        point: CommitPoint,
        now_ms: u64,
    ) {
        let Some(reactor) = data.reactor.as_mut() else {
            return;
        };
        let changes = if reactor.wants_changes() {
            data.changes.take(&self.state)
        } else {
            Changes::default()
        };
        reactor
            .on_commit(point, &changes, self.reactor_scope(now_ms))
            .await;
    }
}
