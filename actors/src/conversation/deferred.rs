//! [`PendingContext`]: context queued under [`ContextDelivery::Deferred`](super::ContextDelivery)
//! until the application next sends (the seed's `PendingContext` and `DeferredWriter`).
//!
//! It lives in the session's [`Peers`](crate::peers::Peers), outside the control lane, so
//! it outlives the lane's restarts. Every send of context goes through it under its lock:
//! a queued batch and the one that joins it leave as one frame, and a flush by the
//! application's writer cannot come between them.

use std::sync::Mutex;

use reel_protocol::{Content, SessionCommand};

use crate::events::lock;
use crate::mailbox::{Origin, TransportMsg};
use crate::slot::Slot;

/// Context turns waiting for the application's next send.
#[derive(Debug, Default)]
pub struct PendingContext {
    turns: Mutex<Vec<Content>>,
}

impl PendingContext {
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
