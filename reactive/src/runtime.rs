//! [`Reactive`] as the session's [`StateReactor`]: where the control lane's calls meet the
//! watchers, the computed values and the temporal patterns.

use futures_util::future::BoxFuture;
use reel_actors::reactor::{CommitPoint, ReactorScope, StateReactor};
use reel_actors::state::{Changes, State};
use reel_protocol::SessionEvent;

use crate::config::Reactive;
use crate::temporal::Ctx;

fn ctx<'a>(scope: &ReactorScope<'a>) -> Ctx<'a> {
    Ctx {
        state: scope.state,
        writer: scope.writer,
        guard: scope.guard,
    }
}

impl StateReactor for Reactive {
    /// Only watchers look at the changes.
    fn wants_changes(&self) -> bool {
        !self.watchers.is_empty()
    }

    /// Every computed value, in dependency order (each written, if it changed, before the
    /// next is computed).
    fn recompute<'a>(&'a mut self, state: &'a State) -> BoxFuture<'a, ()> {
        Box::pin(self.computed.recompute(state))
    }

    /// The watchers on the changes (when there are any), then the temporal patterns: at a
    /// tool commit the sustained conditions, at turn complete the sustained conditions and
    /// the turn streaks, in registration order.
    fn on_commit<'a>(
        &'a mut self,
        point: CommitPoint,
        changes: &'a Changes,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !changes.is_empty() {
                self.watchers.fire(changes, scope.state, scope.guard).await;
            }
            let ctx = ctx(&scope);
            match point {
                CommitPoint::ToolCommit => {
                    self.temporal
                        .check_sustained(&mut self.progress, scope.now_ms, &ctx)
                        .await;
                }
                CommitPoint::TurnComplete => {
                    self.temporal
                        .on_turn(&mut self.progress, scope.now_ms, &ctx)
                        .await;
                }
            }
        })
    }

    /// The rate patterns count the event.
    fn on_event<'a>(
        &'a mut self,
        event: &'a SessionEvent,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.temporal
                .on_event(&mut self.progress, event, scope.now_ms, &ctx(&scope))
                .await;
        })
    }

    /// The sustained patterns check their conditions at the frame's time.
    fn on_batch<'a>(&'a mut self, scope: ReactorScope<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.temporal
                .check_sustained(&mut self.progress, scope.now_ms, &ctx(&scope))
                .await;
        })
    }
}
