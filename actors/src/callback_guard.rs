//! The callback timeout, for every piece of application code the control lane awaits:
//! lifecycle callbacks, phase hooks, interceptors, blocking watcher actions and temporal
//! pattern actions.
//!
//! A callback still running at the timeout is dropped and the lane goes on. Its report — a
//! [`SessionError::CallbackTimeout`] — is not routed through the router at whatever event
//! time the router has reached then (a wall-clock accident a replay would not reproduce);
//! it is kept here and handled by the control lane right after the item whose handling
//! timed out, at that item's event time. So its `session:error_count` / `session:last_error`
//! writes land at the same place of the journal in the recording and in its replay.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_protocol::{SessionError, SessionEvent};

use crate::events::lock;
use crate::telemetry::TelemetryShared;

/// The reports of the callbacks that timed out, kept until the control lane handles them.
/// Shared by every instance of the lane: a report outlives the instance that made it (a
/// lane that fails later in the same item leaves it to its successor, which handles it
/// when it starts).
#[derive(Debug, Default, Clone)]
pub(crate) struct TimedOut(Arc<Mutex<Vec<SessionEvent>>>);

/// Awaits application code for at most the callback timeout, and keeps the reports of those
/// that took longer until the control lane handles them. The control lane hands its guard
/// to the session's [`StateReactor`](crate::reactor::StateReactor) in each
/// [`ReactorScope`](crate::reactor::ReactorScope), so what a reactor awaits of the
/// application is cut off and reported like the lane's own callbacks.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use reel_actors::callback_guard::CallbackGuard;
///
/// let guard = CallbackGuard::detached(Duration::from_secs(2));
/// assert_eq!(guard.within("watch action", "app:score", async { 7 }).await, Some(7));
/// let hung = guard.within("watch action", "app:score", std::future::pending::<()>());
/// assert_eq!(hung.await, None);
/// # }
/// ```
#[derive(Debug)]
pub struct CallbackGuard {
    timeout: Duration,
    telemetry: Arc<TelemetryShared>,
    timed_out: TimedOut,
}

impl CallbackGuard {
    /// A guard cutting callbacks off after `timeout`, counting them in `telemetry` and
    /// keeping their reports in `timed_out`.
    pub(crate) fn new(
        timeout: Duration,
        telemetry: Arc<TelemetryShared>,
        timed_out: TimedOut,
    ) -> Self {
        CallbackGuard {
            timeout,
            telemetry,
            timed_out,
        }
    }

    /// A guard of its own, outside a session: it cuts callbacks off after `timeout` and
    /// keeps its counts and reports to itself (for running rules in tests).
    pub fn detached(timeout: Duration) -> Self {
        CallbackGuard::new(timeout, Arc::default(), TimedOut::default())
    }

    /// Awaits `callback` (application code named `name`) for at most the timeout. Past it
    /// the callback is dropped, counted, logged with `what` (which watcher, which pattern),
    /// its report kept until the control lane handles it — a
    /// `SessionError::CallbackTimeout` for `name` at the event time of the item it held up
    /// (except for `on_error` itself, which is only logged: its report would call it
    /// again) — and `None` is returned.
    pub async fn within<T>(
        &self,
        name: &'static str,
        what: &str,
        callback: impl Future<Output = T>,
    ) -> Option<T> {
        match tokio::time::timeout(self.timeout, callback).await {
            Ok(value) => Some(value),
            Err(_) => {
                let after = self.timeout;
                tracing::warn!(
                    callback = name,
                    what,
                    ?after,
                    "a callback did not return in time"
                );
                self.telemetry.callback_timed_out();
                if name != "on_error" {
                    lock(&self.timed_out.0).push(SessionEvent::Error(
                        SessionError::CallbackTimeout {
                            callback: name,
                            after,
                        },
                    ));
                }
                None
            }
        }
    }

    /// The reports of the callbacks that timed out since the last call, oldest first.
    pub(crate) fn take_reports(&self) -> Vec<SessionEvent> {
        std::mem::take(&mut *lock(&self.timed_out.0))
    }
}
