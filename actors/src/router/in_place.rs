//! [`route_in_place`]: the transport's reader routes a frame itself while the router is
//! idle, instead of waking the router's task for it (decision 0090).
//!
//! At thousands of sessions a frame's cost is mostly the tasks it crosses (decision 0089).
//! When the router has nothing to do (its state free, its inbox idle), the reader takes the
//! state's lock, numbers its frame in the router's inbox without queueing it
//! ([`Inbox::reserve`], decision 0096) and routes it on its own task: the same decoding,
//! phase, numbering and fault hook as the router's task, the fast lane's share handled in
//! place in turn when that lane is idle (decision 0086). Whatever is pushed to the router
//! meanwhile (a step, a report, a barrier) rings its task as ever, which takes it once the
//! reader lets go of the state: after this frame's events, since they are routed into the
//! same state.
//!
//! It never waits. A lane without room for its share keeps it in the state, and the
//! router's task is asked to push it ([`RouterMsg::Flush`]), waiting for the room; until
//! its task has, the router's inbox is not idle, so no further frame is routed in place and
//! the reader waits on the router's inbox as before: backpressure still runs from a slow
//! lane to the socket. A panic while routing (the fault hook's, or a defect's) fails the
//! router's instance with its text, as a panic on its task would: the session ends.
//!
//! [`Inbox::reserve`]: crate::inbox::Inbox::reserve

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Weak};

use tokio::sync::Mutex;

use super::{RouterState, scratch};
use crate::events::EventHub;
use crate::inbox::Inbox;
use crate::mailbox::panic_text;
use crate::mailbox::{EventItem, FailedItem, RouterMsg};
use crate::peers::{Peers, RouterMailbox};

/// Routes `frame` (a [`RouterMsg::Inbound`]) on the caller's task if the router is idle;
/// hands it back, untouched, if not (push it then). See the module's documentation.
pub fn route_in_place(peers: &Peers, frame: RouterMsg) -> Result<(), RouterMsg> {
    match peers.router_state.get() {
        Some(state) => route_with(state, &peers.router, frame),
        None => Err(frame),
    }
}

/// What routing in place uses, taken from the session's peers once: a reader that keeps it
/// routes a frame without reading [`Peers`] (at thousands of sessions, a cache miss a frame).
#[derive(Clone)]
pub struct InPlaceRouter {
    /// The router's state. Weak, as in [`Peers::router_state`]: it goes with the router.
    state: Weak<Mutex<RouterState>>,
    /// The router's inbox and instance.
    mailbox: RouterMailbox,
    /// The fast lane's inbox and the event hub: what a frame routed in place touches next
    /// (only read, by [`InPlaceRouter::warm`]).
    fast: Arc<Inbox<EventItem, FailedItem>>,
    hub: Arc<EventHub>,
}

impl std::fmt::Debug for InPlaceRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InPlaceRouter").finish_non_exhaustive()
    }
}

impl InPlaceRouter {
    /// The handles of `peers`' router, once it has published its state (`None` before).
    pub fn of(peers: &Peers) -> Option<Self> {
        Some(InPlaceRouter {
            state: peers.router_state.get()?.clone(),
            mailbox: peers.router.clone(),
            fast: Arc::clone(&peers.lanes.fast.inbox),
            hub: Arc::clone(&peers.hub),
        })
    }

    /// Reads what routing a frame in place touches first — the router's state, its inbox,
    /// the fast lane's inbox, the hub — all at once, so that at thousands of sessions their
    /// cache misses overlap instead of following one another along the way (decision
    /// 0093). The value means nothing; the reads are the point.
    pub(crate) fn warm(&self) -> u64 {
        self.state.strong_count() as u64
            ^ self.mailbox.inbox.finished()
            ^ self.fast.finished()
            ^ self.hub.warm()
    }

    /// [`route_in_place`] with these handles.
    pub fn route(&self, frame: RouterMsg) -> Result<(), RouterMsg> {
        route_with(&self.state, &self.mailbox, frame)
    }
}

/// Routes `frame` into the router's state if it is still there and free and its inbox
/// idle; hands it back if not.
fn route_with(
    state: &Weak<Mutex<RouterState>>,
    mailbox: &RouterMailbox,
    frame: RouterMsg,
) -> Result<(), RouterMsg> {
    let Some(shared) = state.upgrade() else {
        return Err(frame);
    };
    // Held while routing: the router's task waits for it, and never holds it idle.
    let Ok(mut state) = shared.try_lock() else {
        return Err(frame);
    };
    let inbox = &mailbox.inbox;
    // With the state held the router's task takes nothing of its inbox: the frame needs
    // only its number, and the router idle.
    let Some(seq) = inbox.reserve() else {
        return Err(frame);
    };
    let routed = catch_unwind(AssertUnwindSafe(|| {
        inbox.before_handling(seq);
        // The lanes' shares gathered in this thread's buffers, warm from its last frame,
        // not in the state's own, cold since this session's last (see `scratch`). The
        // state's are empty whenever its router is idle; if not (a wait for room was cut
        // short), they are used as they are.
        let own = state
            .pending
            .is_empty()
            .then(|| std::mem::replace(&mut state.pending, scratch::take_lanes()));
        if let RouterMsg::Inbound { conn, stamp, frame } = frame {
            state.inbound(conn, stamp, frame);
        }
        inbox.done(seq);
        if !state.try_flush() {
            // Refused only once the router is gone: the session is over.
            let _ = inbox.push(RouterMsg::Flush);
        }
        if let Some(own) = own {
            if state.pending.is_empty() {
                scratch::give_back_lanes(std::mem::replace(&mut state.pending, own));
            } else {
                // What a full lane left stays in the buffers it was gathered in, with the
                // state; the thread takes the state's own, empty, instead.
                scratch::give_back_lanes(own);
            }
        }
    }));
    if let Err(panic) = routed {
        // Nothing more is routed in place into a router that failed.
        inbox.hold_failed();
        mailbox.actor.fail(panic_text(panic));
    }
    Ok(())
}
