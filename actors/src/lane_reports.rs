//! What every lane does on its own behalf: report the item a predecessor failed on, and
//! tell the supervisor it drained. The lanes' items themselves live in
//! [`crate::mailbox`] ([`EventItem`](crate::mailbox::EventItem),
//! [`ControlItem`](crate::mailbox::ControlItem), [`FailedItem`]).

use reel_protocol::{SessionError, SessionEvent};

use crate::child::Child;
use crate::events::{Lane, LiveEvent};
use crate::inbox::Failed;
use crate::mailbox::{FailedItem, RouterMsg, SupervisorMsg};
use crate::peers::Peers;

/// The error event that reports the item `lane` failed on (`None` for the end marker,
/// which the successor handles again instead).
fn failure_report(lane: Child, failed: &Failed<FailedItem>) -> Option<SessionEvent> {
    if matches!(failed.label, FailedItem::End) {
        return None;
    }
    Some(SessionEvent::Error(SessionError::CallbackPanicked {
        lane: lane.as_str(),
        event: failed.label.kind(),
        message: "the lane failed while handling it and was restarted".to_owned(),
    }))
}

/// Tells the supervisor `lane` handled its last event.
pub(crate) fn drained(peers: &Peers, lane: Child) {
    peers.supervisor.cast(SupervisorMsg::Drained(lane));
}

/// A lane's successor reports the item its predecessor failed on (through the router, so
/// the report reaches the control lane in order) — or, if that was the end marker, finishes
/// what the predecessor could not: it reports drained.
pub(crate) fn report_failed(peers: &Peers, lane: Child, failed: &Failed<FailedItem>) {
    if let FailedItem::Event {
        error: Some(error), ..
    } = &failed.label
    {
        // The failed item was an error (often the report of an earlier failure): it still
        // reaches the application, published as it is, without being handled again.
        peers.hub.publish(
            Lane::Control,
            LiveEvent::Session(SessionEvent::Error((**error).clone())),
        );
    }
    match failure_report(lane, failed) {
        Some(report) => {
            let _ = peers.router.push(RouterMsg::Report(Box::new(report)));
        }
        None => drained(peers, lane),
    }
}
