//! The buffers a frame's events are decoded and routed into: one a thread, not one a
//! session.
//!
//! At thousands of sessions every structure a session owns is cold when its next frame
//! comes, 20 ms later; a buffer each session kept for its frames' events was one more cache
//! miss a frame (the first event written into it waited for its line). Every frame routed
//! on a thread uses that thread's buffer, which the frame before it left warm. A buffer is
//! taken for one frame and given back once its events are routed; one taken while another
//! is out (routing never decodes a second frame inside the first, but nothing relies on it)
//! is a fresh, empty one.
//!
//! The same holds for the lanes' shares a frame routed in place gathers ([`LaneItems`]):
//! the router's own are empty whenever a frame is routed in place (the router is idle), so
//! the reader lends the state its thread's for the frame and takes them back once they are
//! pushed; only what a full lane leaves stays in the state, in the buffers it was gathered
//! in, and the state's own go to the thread instead (see `in_place::route_with`).

use std::cell::Cell;

use reel_protocol::SessionEvent;

use crate::mailbox::LaneItems;

thread_local! {
    static EVENTS: Cell<Vec<SessionEvent>> = const { Cell::new(Vec::new()) };
    static LANES: Cell<Option<LaneItems>> = const { Cell::new(None) };
}

/// This thread's lanes' buffers, empty (their capacity kept from the frames before).
pub(super) fn take_lanes() -> LaneItems {
    LANES.with(Cell::take).unwrap_or_default()
}

/// Gives `lanes` back, empty, for the next frame routed in place on this thread. Items left
/// in them (none, by the caller's rule) are dropped.
pub(super) fn give_back_lanes(mut lanes: LaneItems) {
    lanes.clear();
    LANES.with(|cell| cell.set(Some(lanes)));
}

/// This thread's buffer, empty (its capacity kept from the frames before).
pub(super) fn take() -> Vec<SessionEvent> {
    EVENTS.with(Cell::take)
}

/// Gives `events` back, emptied, for the next frame routed on this thread.
pub(super) fn give_back(mut events: Vec<SessionEvent>) {
    events.clear();
    EVENTS.with(|cell| cell.set(events));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mailbox::{ControlItem, EventItem, RoutedItem};

    #[test]
    fn lanes_given_back_are_taken_again_empty_with_their_capacity() {
        let mut lanes = take_lanes();
        lanes
            .fast
            .push(EventItem::event(0, SessionEvent::Interrupted));
        lanes.control.push(ControlItem::VideoSent);
        let capacities = (lanes.fast.capacity(), lanes.control.capacity());
        give_back_lanes(lanes);
        let again = take_lanes();
        assert!(again.is_empty());
        assert_eq!(
            (again.fast.capacity(), again.control.capacity()),
            capacities
        );
        // Taken while out: fresh ones, with no buffer.
        let other = take_lanes();
        assert_eq!(other.fast.capacity(), 0);
        give_back_lanes(again);
    }

    #[test]
    fn a_buffer_given_back_is_taken_again_empty_with_its_capacity() {
        let mut events = take();
        events.reserve(8);
        events.push(SessionEvent::Interrupted);
        let capacity = events.capacity();
        give_back(events);
        let again = take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), capacity);
        // Taken while out: a fresh one.
        let other = take();
        assert_eq!(other.capacity(), 0);
        give_back(again);
    }
}
