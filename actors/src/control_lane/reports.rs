//! What the control lane reports instead of waiting or failing silently: awaited callbacks
//! cut off at the callback timeout, and state writes of its own that were not applied.

use reel_protocol::SessionEvent;

use super::ControlLaneState;

impl ControlLaneState {
    /// Awaits `callback` (an application callback or hook named `name`) for at most the
    /// session's callback timeout. Past it the callback is dropped, a
    /// [`reel_protocol::SessionError::CallbackTimeout`] is reported (except for `on_error`
    /// itself, which is only logged: its report would call it again) and `None` is
    /// returned: the lane goes on, so a hung callback cannot hang the session.
    pub(crate) async fn within<T>(
        &self,
        name: &'static str,
        callback: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        match tokio::time::timeout(self.callback_timeout, callback).await {
            Ok(value) => Some(value),
            Err(_) => {
                let after = self.callback_timeout;
                tracing::warn!(callback = name, ?after, "a callback did not return in time");
                self.telemetry.callback_timed_out();
                if name != "on_error" {
                    let report =
                        SessionEvent::Error(reel_protocol::SessionError::CallbackTimeout {
                            callback: name,
                            after,
                        });
                    let _ = self
                        .peers
                        .router
                        .push(crate::router::RouterMsg::Report(Box::new(report)));
                }
                None
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
            .push(crate::router::RouterMsg::Report(Box::new(report)));
    }
}
