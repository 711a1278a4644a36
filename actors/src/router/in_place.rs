//! [`route_in_place`]: the transport's reader routes a frame itself while the router is
//! idle, instead of waking the router's task for it (decision 0090).
//!
//! At thousands of sessions a frame's cost is mostly the tasks it crosses (decision 0089).
//! When the router has nothing to do (its state free, its inbox idle), the reader takes the
//! state's lock, claims the router's inbox with its frame ([`Inbox::claim`]) and routes it
//! on its own task: the same decoding, phase, numbering, fault hook and in-flight marks as
//! the router's task, the fast lane's share handled in place in turn when that lane is idle
//! (decision 0086). Frames pushed behind it meanwhile are routed too; the first other item
//! (a step, a report, a barrier) ends the claim, and the router's task takes it and what
//! follows, after this frame's events, since they are routed into the same state.
//!
//! It never waits. A lane without room for its share keeps it in the state, and the
//! router's task is asked to push it ([`RouterMsg::Flush`]), waiting for the room; until
//! its task has, the router's inbox is not idle, so no further frame is routed in place and
//! the reader waits on the router's inbox as before: backpressure still runs from a slow
//! lane to the socket. A panic while routing (the fault hook's, or a defect's) fails the
//! router's instance with its text, as a panic on its task would: the session ends.
//!
//! [`Inbox::claim`]: crate::inbox::Inbox::claim

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Weak;

use crate::mailbox::RouterMsg;
use crate::mailbox::panic_text;
use crate::peers::Peers;

/// Routes `frame` (a [`RouterMsg::Inbound`]) on the caller's task if the router is idle;
/// hands it back, untouched, if not (push it then). See the module's documentation.
pub fn route_in_place(peers: &Peers, frame: RouterMsg) -> Result<(), RouterMsg> {
    let Some(shared) = peers.router_state.get().and_then(Weak::upgrade) else {
        return Err(frame);
    };
    // Held while routing: the router's task waits for it, and never holds it idle.
    let Ok(mut state) = shared.try_lock() else {
        return Err(frame);
    };
    let inbox = &peers.router.inbox;
    inbox.claim(frame)?;
    let routed = catch_unwind(AssertUnwindSafe(|| {
        while let Some(taken) = inbox.take_claimed_if(RouterMsg::is_inbound) {
            // Every item taken here is a frame: the claim ends at the first that is not.
            if let RouterMsg::Inbound { conn, stamp, frame } = taken.item {
                state.inbound(conn, stamp, frame);
            }
            inbox.done(taken.seq);
        }
        if !state.try_flush() {
            // Refused only once the router is gone: the session is over.
            let _ = inbox.push(RouterMsg::Flush);
        }
    }));
    if let Err(panic) = routed {
        inbox.release_failed();
        peers.router.actor.fail(panic_text(panic));
    }
    Ok(())
}
