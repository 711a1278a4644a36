//! [`Peers`]: where the actors of one session find each other.

use std::sync::Arc;

use crate::clock::{Clock, EventClock, SharedClock};
use crate::control_lane::ControlMsg;
use crate::events::EventHub;
use crate::fast_lane::FastMsg;
use crate::router::RouterMsg;
use crate::slot::Slot;
use crate::state::StateStoreMsg;
use crate::supervisor::SupervisorMsg;
use crate::telemetry::TelemetryMsg;
use crate::transport::TransportMsg;

/// The current instance of every actor of a session, the clock and the event hub. The
/// supervisor fills the slots as it spawns and restarts the actors.
pub struct Peers {
    /// The transport.
    pub transport: Arc<Slot<TransportMsg>>,
    /// The router.
    pub router: Arc<Slot<RouterMsg>>,
    /// The fast lane.
    pub fast: Arc<Slot<FastMsg>>,
    /// The control lane.
    pub control: Arc<Slot<ControlMsg>>,
    /// The telemetry actor.
    pub telemetry: Arc<Slot<TelemetryMsg>>,
    /// The state store.
    pub store: Arc<Slot<StateStoreMsg>>,
    /// The supervisor.
    pub supervisor: Arc<Slot<SupervisorMsg>>,
    /// Where events go to the application.
    pub hub: Arc<EventHub>,
    clock: Arc<EventClock>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("transport", &self.transport)
            .field("router", &self.router)
            .field("fast", &self.fast)
            .field("control", &self.control)
            .field("telemetry", &self.telemetry)
            .field("store", &self.store)
            .field("now_ms", &self.clock.now_ms())
            .finish_non_exhaustive()
    }
}

impl Peers {
    /// Empty slots around the session's event clock and `hub`.
    pub fn new(clock: Arc<EventClock>, hub: Arc<EventHub>) -> Self {
        Peers {
            transport: Arc::default(),
            router: Arc::default(),
            fast: Arc::default(),
            control: Arc::default(),
            telemetry: Arc::default(),
            store: Arc::default(),
            supervisor: Arc::default(),
            hub,
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
