//! The one place frames get their sequence numbers, and where session time comes from.
//!
//! Every frame, in both directions, passes through the tap before anything else sees it:
//! it takes the next sequence number and the time from the tap's clock, and hands the
//! frame to the wire recorder, all under one short lock, so the recording is in sequence
//! order whatever thread the frame came from. The tap also marks where connections end, so
//! a recording shows its reconnects.
//!
//! The time a frame is stamped with is the only time that enters the tree: every event
//! carries the time of its frame (see [`crate::clock::EventClock`]). A replay stamps each
//! frame with its recorded time, so it reproduces every timestamp exactly.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reel_recorder::wire_log::{CloseMark, Direction, Source, WireEntry, WireRecorder};

use super::link::Stamp;
use crate::clock::{Clock, SharedClock, TokioClock};
use crate::events::lock;
use crate::mailbox::Origin;

/// Stamps frames and hands them to the recorder.
///
/// `repr(C)`, aligned to a cache line: what a frame reads (the lock, the recorder, the
/// copied clock, the record queue) fills its first line, where `WireTap::warm` reads
/// (decision 0093); the shared clock, read only when there is no copy, after. A test holds
/// the layout.
#[repr(C, align(64))]
pub struct WireTap {
    next_seq: Mutex<u64>,
    recorder: Option<Arc<dyn WireRecorder>>,
    /// The session's clock, copied in when it can be ([`Clock::detached`]): read beside
    /// the sequence number, not through its own allocation.
    own_clock: Option<TokioClock>,
    /// The session's record queue, when it records through one: readers wait for its room.
    queue: Option<Arc<crate::recorder::RecordQueue>>,
    clock: SharedClock,
}

impl std::fmt::Debug for WireTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireTap")
            .field("next_seq", &*lock(&self.next_seq))
            .field("recording", &self.recorder.is_some())
            .finish()
    }
}

impl WireTap {
    /// A tap reading frame times from `clock`, recording into `recorder` if given.
    pub fn new(clock: SharedClock, recorder: Option<Arc<dyn WireRecorder>>) -> Self {
        WireTap {
            next_seq: Mutex::new(1),
            own_clock: clock.detached(),
            clock,
            recorder,
            queue: None,
        }
    }

    /// A tap recording into the session's `queue`, whose bound [`WireTap::room`] applies.
    pub fn with_queue(clock: SharedClock, queue: Arc<crate::recorder::RecordQueue>) -> Self {
        WireTap {
            next_seq: Mutex::new(1),
            own_clock: clock.detached(),
            clock,
            recorder: Some(Arc::clone(&queue) as Arc<dyn WireRecorder>),
            queue: Some(queue),
        }
    }

    /// Waits until the record queue has room (at once without one): the reader calls it
    /// after each frame, so a disk slower than the wire slows the reading of the wire
    /// instead of growing the queue. Nothing recorded is ever dropped.
    ///
    /// `None` when there is nothing to wait for — no record queue, or one with room now
    /// (asked without waiting) —: then no future is built and polled a frame in the
    /// reader's state (at thousands of sessions each `.await` a frame writes lines of the
    /// reader's task that are cold by the next, and the reader boxes what it waits for).
    pub fn room(&self) -> Option<impl Future<Output = ()> + Send + '_> {
        self.queue
            .as_deref()
            .filter(|queue| !queue.inbox().has_room_for(1))
            .map(crate::recorder::RecordQueue::room)
    }

    /// Reads the line a stamp starts on, without taking the lock: a reader that has a frame
    /// reads every structure the frame will touch at once (decision 0093). The value means
    /// nothing.
    pub(crate) fn warm(&self) -> u64 {
        u64::from(self.recorder.is_some())
    }

    /// The session's time now.
    fn now_ms(&self) -> u64 {
        match &self.own_clock {
            Some(clock) => clock.now_ms(),
            None => self.clock.now_ms(),
        }
    }

    /// Stamps a frame received on connection `conn` (1-based) and records it.
    pub fn stamp_in(&self, conn: u32, binary: bool, payload: &Bytes) -> Stamp {
        self.stamp(Direction::In, conn, binary, None, payload, 0)
    }

    /// Stamps a frame about to be sent on connection `conn` and records it, with who sent it.
    pub fn stamp_out(&self, conn: u32, binary: bool, origin: Origin, payload: &Bytes) -> Stamp {
        self.stamp_out_dropped(conn, binary, origin, payload, 0)
    }

    /// [`WireTap::stamp_out`] for the application's audio chunk after which
    /// `dropped_before` of its chunks were dropped unsent: the entry records the count
    /// (`dropped_before`, absent when 0).
    pub fn stamp_out_dropped(
        &self,
        conn: u32,
        binary: bool,
        origin: Origin,
        payload: &Bytes,
        dropped_before: u64,
    ) -> Stamp {
        let source = match origin {
            Origin::App => Some(Source::App),
            // Readers take unmarked client content and realtime input for the application's
            // (logs written before the mark have only `app`); mark the runtime's own.
            Origin::Runtime if is_app_kind(payload) => Some(Source::Runtime),
            Origin::Runtime => None,
        };
        self.stamp(
            Direction::Out,
            conn,
            binary,
            source,
            payload,
            dropped_before,
        )
    }

    fn stamp(
        &self,
        dir: Direction,
        conn: u32,
        binary: bool,
        source: Option<Source>,
        payload: &Bytes,
        dropped_before: u64,
    ) -> Stamp {
        let mut next = lock(&self.next_seq);
        let seq = *next;
        *next += 1;
        let ts_ms = self.now_ms();
        if let Some(recorder) = &self.recorder {
            recorder.record(WireEntry {
                source,
                dropped_before: (dropped_before > 0).then_some(dropped_before),
                ..WireEntry::frame(seq, dir, ts_ms, payload.clone(), conn_field(conn), binary)
            });
        }
        Stamp { seq, ts_ms }
    }

    /// Records that connection `conn` ended, with the close code and reason the session saw;
    /// `client` when the client closed it. The marker takes a sequence number and a time
    /// like a frame.
    pub fn mark_close(
        &self,
        conn: u32,
        code: Option<u16>,
        reason: Option<String>,
        client: bool,
    ) -> Stamp {
        let mut next = lock(&self.next_seq);
        let seq = *next;
        *next += 1;
        let ts_ms = self.now_ms();
        if let Some(recorder) = &self.recorder {
            let mark = CloseMark {
                code,
                reason,
                client,
            };
            recorder.record(WireEntry::close_mark(seq, ts_ms, conn_field(conn), mark));
        }
        Stamp { seq, ts_ms }
    }

    /// Flushes the recorder.
    pub fn flush(&self) {
        if let Some(recorder) = &self.recorder {
            recorder.flush();
        }
    }

    /// Recording errors so far (failed writes of the wire log).
    pub fn recording_errors(&self) -> u64 {
        self.recorder.as_ref().map_or(0, |r| r.error_count())
    }
}

/// The `conn` field of an entry: absent on the first connection.
fn conn_field(conn: u32) -> Option<u32> {
    (conn > 1).then_some(conn)
}

/// Whether `payload` is client content or realtime input: what applications normally send.
/// Only runtime frames are checked (setup, tool responses, prompts), never the audio stream.
/// A frame whose top-level key names neither is not decoded to tell (a setup, a tool response).
fn is_app_kind(payload: &Bytes) -> bool {
    use reel_protocol::ClientMessageKind::{ClientContent, RealtimeInput};
    reel_protocol::client_frame_may_be(payload, &[ClientContent, RealtimeInput])
        && reel_protocol::decode_client(payload)
            .is_ok_and(|m| m.client_content.is_some() || m.realtime_input.is_some())
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use std::mem::offset_of;

    use super::*;

    /// What stamping a frame and asking for the record queue's room read lies in the tap's
    /// first line. Fails if a field grows.
    #[test]
    fn a_frame_reads_one_line_of_the_tap() {
        assert_eq!(std::mem::align_of::<WireTap>(), 64);
        let end = offset_of!(WireTap, queue) + 8;
        assert!(end <= 64, "the hot fields end at byte {end}");
    }
}
