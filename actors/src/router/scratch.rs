//! The buffer a frame's events are decoded into: one a thread, not one a session.
//!
//! At thousands of sessions every structure a session owns is cold when its next frame
//! comes, 20 ms later; a buffer each session kept for its frames' events was one more cache
//! miss a frame (the first event written into it waited for its line). Every frame routed
//! on a thread uses that thread's buffer, which the frame before it left warm. A buffer is
//! taken for one frame and given back once its events are routed; one taken while another
//! is out (routing never decodes a second frame inside the first, but nothing relies on it)
//! is a fresh, empty one.

use std::cell::Cell;

use reel_protocol::SessionEvent;

thread_local! {
    static EVENTS: Cell<Vec<SessionEvent>> = const { Cell::new(Vec::new()) };
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
