//! Subscribing before the session exists.
//!
//! The runtime's event hub is born with the session, but a fluent chain hands out streams
//! before it connects ([`LiveBuilder::subscribe`](crate::LiveBuilder::subscribe)). Those
//! streams hang off a hub of the builder's own; once the session is spawned, a task
//! subscribed to the session from its very first event republishes every event there, in
//! order. Every event goes through, so each lane's sequence numbers come out as the
//! session gave them, and the streams end when the session's do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reel_actors::EventStream;
use reel_actors::events::EventHub;

/// The builder's own hub, and whether anyone subscribed to it.
#[derive(Debug, Default)]
pub(crate) struct EventRelay {
    hub: Arc<EventHub>,
    subscribed: AtomicBool,
}

impl EventRelay {
    /// A stream of every event of the session to come.
    pub(crate) fn subscribe(&self) -> EventStream {
        self.subscribed.store(true, Ordering::Release);
        self.hub.subscribe()
    }

    /// Whether any stream was handed out.
    pub(crate) fn has_subscribers(&self) -> bool {
        self.subscribed.load(Ordering::Acquire)
    }

    /// Republishes everything `session` yields on this relay's hub, then closes the hub.
    /// `session` must be subscribed before the session's first event.
    pub(crate) fn forward(&self, mut session: EventStream) {
        let hub = Arc::clone(&self.hub);
        tokio::spawn(async move {
            while let Some(envelope) = session.recv().await {
                hub.publish(envelope.lane, envelope.event);
            }
            hub.close();
        });
    }
}
