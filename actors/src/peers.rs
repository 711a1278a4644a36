//! [`Peers`]: where the actors of one session find each other.
//!
//! A restartable actor is reached through its inbox (see [`crate::inbox`]), which outlives
//! each instance, and woken through its [`Slot`], which the supervisor points at the
//! current instance. Nothing keeps another actor's `ActorRef` across a restart.

use std::sync::Arc;

use crate::clock::{Clock, EventClock, SharedClock};
use crate::control_lane::ControlMsg;
use crate::events::EventHub;
use crate::fast_lane::FastMsg;
use crate::inbox::{Doorbell, Inbox};
use crate::lane_inbox::{FailedItem, LANE_BOUND, LaneInbox};
use crate::router::{ROUTER_BOUND, ROUTER_MAX_BYTES, RouterInbox, RouterWake, router_item_bytes};
use crate::slot::Slot;
use crate::state::{StateStoreMsg, StoreInbox, store_inbox};
use crate::supervisor::SupervisorMsg;
use crate::telemetry::TelemetryMsg;
use crate::tools::ToolInputs;
use crate::transport::TransportMsg;

/// The inboxes and current instances of a session's actors, the clock and the event hub.
/// The supervisor owns it and fills the slots as it spawns and restarts the actors.
pub struct Peers {
    /// The transport.
    pub transport: Arc<Slot<TransportMsg>>,
    /// What the router routes, in order: frames, transport steps, reports, barriers.
    pub router: Arc<RouterInbox>,
    /// The router's current instance.
    pub router_actor: Arc<Slot<RouterWake>>,
    /// The fast lane's events.
    pub fast: Arc<LaneInbox>,
    /// The fast lane's current instance.
    pub fast_actor: Arc<Slot<FastMsg>>,
    /// The control lane's events and finished tool calls.
    pub control: Arc<LaneInbox>,
    /// The control lane's current instance.
    pub control_actor: Arc<Slot<ControlMsg>>,
    /// The telemetry actor's events.
    pub telemetry: Arc<LaneInbox>,
    /// The telemetry actor's current instance.
    pub telemetry_actor: Arc<Slot<TelemetryMsg>>,
    /// The state store's current instance.
    pub store: Arc<Slot<StateStoreMsg>>,
    /// The writes waiting for the state store.
    pub store_inbox: Arc<StoreInbox>,
    /// The supervisor.
    pub supervisor: Arc<Slot<SupervisorMsg>>,
    /// Where events go to the application.
    pub hub: Arc<EventHub>,
    /// The user's input for running tools: whether it is forwarded, their queues.
    pub tool_input: Arc<ToolInputs>,
    clock: Arc<EventClock>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("transport", &self.transport)
            .field("router", &self.router_actor)
            .field("fast", &self.fast_actor)
            .field("control", &self.control_actor)
            .field("telemetry", &self.telemetry_actor)
            .field("store", &self.store)
            .field("now_ms", &self.clock.now_ms())
            .finish_non_exhaustive()
    }
}

impl Peers {
    /// Empty inboxes and slots around the session's event clock and `hub`.
    pub fn new(clock: Arc<EventClock>, hub: Arc<EventHub>) -> Self {
        let router_actor: Arc<Slot<RouterWake>> = Arc::default();
        let fast_actor: Arc<Slot<FastMsg>> = Arc::default();
        let control_actor: Arc<Slot<ControlMsg>> = Arc::default();
        let telemetry_actor: Arc<Slot<TelemetryMsg>> = Arc::default();
        let store: Arc<Slot<StateStoreMsg>> = Arc::default();
        Peers {
            store_inbox: Arc::new(store_inbox(&store)),
            store,
            transport: Arc::default(),
            router: Arc::new(
                Inbox::new(
                    "router",
                    ROUTER_BOUND,
                    |_| (),
                    doorbell(&router_actor, || RouterWake::Wake),
                )
                .weighed(ROUTER_MAX_BYTES, router_item_bytes),
            ),
            fast: Arc::new(lane_inbox("fast_lane", &fast_actor, || FastMsg::Wake)),
            control: Arc::new(lane_inbox("control_lane", &control_actor, || {
                ControlMsg::Wake
            })),
            telemetry: Arc::new(lane_inbox("telemetry", &telemetry_actor, || {
                TelemetryMsg::Wake
            })),
            router_actor,
            fast_actor,
            control_actor,
            telemetry_actor,
            supervisor: Arc::default(),
            hub,
            tool_input: Arc::default(),
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

/// A doorbell that sends `wake()` to whatever instance `slot` holds.
pub fn doorbell<M: Send + 'static>(slot: &Arc<Slot<M>>, wake: fn() -> M) -> Doorbell {
    let slot = Arc::clone(slot);
    Box::new(move || slot.cast(wake()))
}

fn lane_inbox<M: Send + 'static>(
    name: &'static str,
    slot: &Arc<Slot<M>>,
    wake: fn() -> M,
) -> LaneInbox {
    Inbox::new(name, LANE_BOUND, FailedItem::of, doorbell(slot, wake))
}
