//! [`Peers`]: where the actors of one session find each other — a table of typed mailboxes,
//! one field per child.
//!
//! A restartable actor is reached through its [`Mailbox`]: its inbox (see
//! [`crate::inbox`]), which outlives each instance, and the [`Slot`] of its current
//! instance, which the supervisor points at each new one. Nothing keeps another actor's
//! `ActorRef` across a restart. The supervisor reaches each child's mailbox without its types
//! through its table of starts (each start carries its child's `Door`).

use std::sync::{Arc, OnceLock, Weak};

use reel_recorder::wire_log::WireEntry;
use tokio::sync::Mutex;

use crate::clock::{Clock, EventClock, SharedClock};
use crate::events::EventHub;
use crate::mailbox::{
    ControlItem, EventItem, InstanceSlot, LaneMailbox, LaneMailboxes, Mailbox, ROUTER_BOUND,
    ROUTER_MAX_BYTES, RecorderTick, RouterMsg, RouterTimer, SupervisorMsg, TransportMsg,
    router_item_bytes,
};
use crate::router::RouterState;
use crate::slot::Slot;
pub use crate::state::StoreMailbox;
use crate::state::store_mailbox;
use crate::tools::ToolInputs;

/// The router's mailbox: what it routes, in order (frames, transport steps, reports,
/// barriers).
pub type RouterMailbox = Mailbox<RouterMsg, (), RouterTimer>;

/// The fast lane's or telemetry's mailbox: events, then the end.
pub type EventMailbox = LaneMailbox<EventItem>;

/// The control lane's mailbox: events, finished tool calls, input for tools, the end.
pub type ControlMailbox = LaneMailbox<ControlItem>;

/// The recorder's mailbox: the wire entries waiting to be written, each labelled with a
/// copy of itself (its payload shared, not copied) for a successor to write again.
pub type RecorderMailbox = Mailbox<WireEntry, WireEntry, RecorderTick>;

/// The mailboxes of a session's actors, the clock and the event hub. The supervisor owns
/// it and fills the slots as it spawns and restarts the actors.
pub struct Peers {
    /// The transport (not restarted: it has no inbox, only its current instance).
    pub transport: Arc<Slot<TransportMsg>>,
    /// The router.
    pub router: RouterMailbox,
    /// The router's state, once it started: a reader routes a frame in place with it when
    /// the router is idle (decision 0090). Weak: the state holds these peers, and goes
    /// with the router.
    pub router_state: OnceLock<Weak<Mutex<RouterState>>>,
    /// The lanes the router feeds: the fast lane, the control lane (finished tool calls are
    /// pushed there too), telemetry.
    pub lanes: LaneMailboxes,
    /// The state store.
    pub store: StoreMailbox,
    /// The recorder, when the session records its wire.
    pub recorder: Option<RecorderMailbox>,
    /// The supervisor.
    pub supervisor: Arc<Slot<SupervisorMsg>>,
    /// Where events go to the application.
    pub hub: Arc<EventHub>,
    /// The user's input for running tools: whether it is forwarded, their queues.
    pub tool_input: Arc<ToolInputs>,
    /// Context queued for the application's next send (deferred delivery); outlives the
    /// control lane's restarts.
    pub pending_context: Arc<crate::conversation::PendingContext>,
    clock: Arc<EventClock>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("transport", &self.transport)
            .field("router", &self.router.actor)
            .field("fast", &self.lanes.fast.actor)
            .field("control", &self.lanes.control.actor)
            .field("telemetry", &self.lanes.telemetry.actor)
            .field("store", &self.store.actor)
            .field("now_ms", &self.clock.now_ms())
            .finish_non_exhaustive()
    }
}

impl Peers {
    /// Empty mailboxes around the session's event clock and `hub`; `recorder` is the
    /// recorder's, when the session records (its queue makes it).
    pub fn new(
        clock: Arc<EventClock>,
        hub: Arc<EventHub>,
        recorder: Option<RecorderMailbox>,
    ) -> Self {
        Peers {
            store: store_mailbox(),
            transport: Arc::default(),
            router: router_mailbox(),
            router_state: OnceLock::new(),
            lanes: LaneMailboxes::new(),
            recorder,
            supervisor: Arc::default(),
            hub,
            tool_input: Arc::default(),
            pending_context: Arc::default(),
            clock,
        }
    }

    /// The session's event clock (see [`EventClock`]).
    pub fn clock(&self) -> &Arc<EventClock> {
        &self.clock
    }

    /// The event clock as a shared [`crate::clock::Clock`].
    pub fn shared_clock(&self) -> SharedClock {
        Arc::clone(&self.clock) as SharedClock
    }
}

fn router_mailbox() -> RouterMailbox {
    let actor: Arc<InstanceSlot<RouterTimer>> = Arc::default();
    let inbox = crate::inbox::Inbox::new(
        "router",
        ROUTER_BOUND,
        |_| (),
        crate::mailbox::doorbell(&actor),
    )
    .weighed(ROUTER_MAX_BYTES, router_item_bytes);
    Mailbox::from_parts(Arc::new(inbox), actor)
}
