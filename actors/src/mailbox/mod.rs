//! What the session's actors send each other, and where it waits: every message and inbox
//! item of the tree, the typed mailboxes ([`Mailbox`]: an [`Inbox`] that outlives each
//! instance, and the [`InstanceSlot`] of the current instance its doorbell rings) and the
//! one runner every inbox-driven child runs on ([`spawn_consumer`]: a [`Consumer`] on a
//! plain task, decision 0079).
//!
//! This module sits *below* the actors: nothing in it imports an actor's module, so an
//! actor, the [`crate::peers::Peers`] table and the supervisor can all name the messages
//! without importing each other (`scripts/import-cycles` checks that no circle remains).
//! See `docs/decisions/0041-the-inbox-is-the-mailbox.md`.
//!
//! [`Inbox`]: crate::inbox::Inbox

mod consumer;
mod door;
mod in_place;
mod instance;
mod lanes;
mod recorder;
mod router;
mod supervisor;
mod task;
mod transport;

pub use consumer::{Consumer, ConsumerMailbox, NoMsg, drain_one_by_one};
pub use door::{Door, Mailbox, doorbell};
pub use in_place::run_in_place;
pub(crate) use instance::InstanceControl;
pub use instance::{Instance, InstanceSlot};
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
pub(crate) use task::panic_text;
pub use task::{Ended, StartFailed, spawn_consumer};
pub use transport::{Origin, TransportMsg};
