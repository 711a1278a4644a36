//! What the session's actors send each other, and where it waits: every message and inbox
//! item of the tree, the typed mailboxes ([`Mailbox`]: an [`Inbox`] that outlives each
//! instance, and the [`Slot`] of the current instance its doorbell rings) and the one actor
//! skeleton every inbox-driven child runs on ([`InboxActor`]).
//!
//! This module sits *below* the actors: nothing in it imports an actor's module, so an
//! actor, the [`crate::peers::Peers`] table and the supervisor can all name the messages
//! without importing each other (`scripts/import-cycles` checks that no circle remains).
//! See `docs/decisions/0041-the-inbox-is-the-mailbox.md`.
//!
//! [`Inbox`]: crate::inbox::Inbox
//! [`Slot`]: crate::slot::Slot

mod actor;
mod door;
mod lanes;
mod recorder;
mod router;
mod supervisor;
mod transport;

pub use actor::{
    Consumer, ConsumerMailbox, InboxActor, InboxMsg, InboxState, NoMsg, drain_one_by_one,
};
pub use door::{Door, Mailbox, doorbell};
pub use lanes::{
    ControlItem, EventItem, FailedItem, FinishedCall, LANE_BOUND, LANE_CAPACITY, LANE_CHUNK,
    LaneItems, LaneMailbox, LaneMailboxes, Lanes, RoutedItem,
};
pub use recorder::RecorderTick;
pub use router::{
    Lifecycle, ROUTER_BOUND, ROUTER_CAPACITY, ROUTER_MAX_BYTES, RouterMsg, RouterTimer,
    router_item_bytes,
};
pub use supervisor::SupervisorMsg;
pub use transport::{Origin, TransportMsg};
