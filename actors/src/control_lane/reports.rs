//! What the control lane reports instead of waiting or failing silently: awaited callbacks
//! cut off at the callback timeout, and state writes of its own that were not applied.

use reel_protocol::SessionEvent;

use super::{ControlData, ControlLaneState};
use crate::clock::Clock;

impl ControlLaneState {
    /// Awaits `callback` (an application callback or hook named `name`) for at most the
    /// session's callback timeout. Past it the callback is dropped, a
    /// [`reel_protocol::SessionError::CallbackTimeout`] is kept for
    /// [`ControlLaneState::report_timeouts`] (except for `on_error` itself, which is only
    /// logged: its report would call it again) and `None` is returned: the lane goes on,
    /// so a hung callback cannot hang the session.
    pub(crate) async fn within<T>(
        &self,
        name: &'static str,
        callback: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        self.guard.within(name, name, callback).await
    }

    /// Handles the reports of the callbacks that timed out while the lane handled its last
    /// item, as events right after that item, at the event time it left (so a replay puts
    /// them, and the `session:` keys they write, at the same place; see
    /// [`crate::callback_guard`]). A report's own handling may time out in turn (a hung
    /// watcher on `session:error_count`): those follow.
    pub(crate) async fn report_timeouts(&self, data: &mut ControlData) {
        loop {
            let reports = self.guard.take_reports();
            if reports.is_empty() {
                return;
            }
            let now_ms = self.peers.clock().now_ms();
            for report in &reports {
                self.event(data, report, now_ms).await;
            }
        }
    }

    /// Reports state writes of the runtime's that were not applied: logged, and an error
    /// event routed to this lane in order (so `on_error` and every subscriber see it).
    pub(crate) fn report_state_write(&self, what: String, error: &crate::state::StateError) {
        tracing::warn!(%error, %what, "state writes were not applied");
        let report = SessionEvent::Error(reel_protocol::SessionError::StateWrite {
            what,
            message: error.to_string(),
        });
        let _ = self
            .peers
            .router
            .push(crate::mailbox::RouterMsg::Report(Box::new(report)));
    }
}
