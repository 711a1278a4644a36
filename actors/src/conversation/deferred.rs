//! [`PendingContext`]: context queued under [`ContextDelivery::Deferred`](super::ContextDelivery)
//! until the application next sends (the seed's `PendingContext` and `DeferredWriter`).
//!
//! It lives in the session's [`Peers`](crate::peers::Peers), outside the control lane, so
//! it outlives the lane's restarts. Every send of context goes through it under its lock:
//! a queued batch and the one that joins it leave as one frame, and a flush by the
//! application's writer cannot come between them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use reel_protocol::{Content, SessionCommand};

use crate::events::lock;
use crate::mailbox::{Origin, TransportMsg};
use crate::slot::Slot;

/// Context turns waiting for the application's next send.
///
/// It also orders the session's start: when the phases steer the conversation
/// ([`PendingContext::gate_connect`]), `connect` returns only once the control lane has
/// entered the initial phase (queued or sent its context), so an application send made the
/// moment `connect` returns — a greeting — comes after that context on the wire, every
/// time, not when the scheduler says.
#[derive(Debug)]
pub struct PendingContext {
    turns: Mutex<Vec<Content>>,
    gates_connect: AtomicBool,
    entered: watch::Sender<bool>,
}

impl Default for PendingContext {
    fn default() -> Self {
        PendingContext {
            turns: Mutex::default(),
            gates_connect: AtomicBool::new(false),
            entered: watch::channel(false).0,
        }
    }
}

impl PendingContext {
    /// `connect` waits for [`PendingContext::entered`] (set at spawn when the phases steer
    /// the conversation).
    pub fn gate_connect(&self) {
        self.gates_connect.store(true, Ordering::Release);
    }

    /// Whether `connect` waits for the initial phase's entry.
    pub fn gates_connect(&self) -> bool {
        self.gates_connect.load(Ordering::Acquire)
    }

    /// The control lane has handled the connection (entered the initial phase, or gone on
    /// after a failure): `connect` may return.
    pub fn entered(&self) {
        self.entered.send_replace(true);
    }

    /// Waits until [`PendingContext::entered`].
    pub async fn wait_entered(&self) {
        let mut entered = self.entered.subscribe();
        // The sender lives as long as `self`: `wait_for` cannot fail while it is borrowed.
        let _ = entered.wait_for(|entered| *entered).await;
    }

    /// Queues `turns` behind what already waits.
    pub fn queue(&self, turns: Vec<Content>) {
        lock(&self.turns).extend(turns);
    }

    /// How many turns wait.
    pub fn len(&self) -> usize {
        lock(&self.turns).len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sends what waits, as one `clientContent` frame without `turnComplete`, to
    /// `transport` (as the runtime); nothing when nothing waits. Returns whether a frame was
    /// handed over.
    pub fn flush(&self, transport: &Slot<TransportMsg>) -> bool {
        self.send_with(transport, Vec::new(), false)
    }

    /// Sends what waits followed by `turns` as one frame, with `turnComplete` when
    /// `prompt`; nothing when there is no turn and no prompt.
    pub fn send_with(
        &self,
        transport: &Slot<TransportMsg>,
        turns: Vec<Content>,
        prompt: bool,
    ) -> bool {
        let mut waiting = lock(&self.turns);
        if waiting.is_empty() && turns.is_empty() && !prompt {
            return false;
        }
        let mut all = std::mem::take(&mut *waiting);
        all.extend(turns);
        // Handed over under the lock: no other sender's frame can come between.
        transport.cast(TransportMsg::Send(
            SessionCommand::SendClientContent {
                turns: all,
                turn_complete: prompt,
            },
            Origin::Runtime,
        ))
    }
}
