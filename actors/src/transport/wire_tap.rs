//! The one place frames get their sequence numbers.
//!
//! Every frame, in both directions, passes through [`WireTap::stamp`] before anything else
//! sees it: it takes the next sequence number, the session time, and hands the frame to the
//! wire recorder, all under one short lock, so the recording is in sequence order whatever
//! thread the frame came from.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reel_recorder::wire_log::{Direction, WireEntry, WireRecorder};

use crate::clock::SharedClock;
use crate::events::lock;

/// A frame's place in the session: its sequence number and session time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Sequence number, from 1, shared by both directions.
    pub seq: u64,
    /// Session time, epoch milliseconds.
    pub ts_ms: u64,
}

/// Stamps frames and hands them to the recorder.
pub struct WireTap {
    next_seq: Mutex<u64>,
    clock: SharedClock,
    recorder: Option<Arc<dyn WireRecorder>>,
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
    /// A tap reading time from `clock`, recording into `recorder` if given.
    pub fn new(clock: SharedClock, recorder: Option<Arc<dyn WireRecorder>>) -> Self {
        WireTap {
            next_seq: Mutex::new(1),
            clock,
            recorder,
        }
    }

    /// Stamps a frame that crossed the wire on connection `conn` (1-based) and records it.
    pub fn stamp(&self, dir: Direction, conn: u32, binary: bool, payload: &Bytes) -> Stamp {
        let mut next = lock(&self.next_seq);
        let seq = *next;
        *next += 1;
        let ts_ms = self.clock.now_ms();
        if let Some(recorder) = &self.recorder {
            recorder.record(WireEntry {
                seq,
                dir,
                ts_ms,
                payload: payload.clone(),
                conn: (conn > 1).then_some(conn),
                binary,
            });
        }
        Stamp { seq, ts_ms }
    }

    /// Flushes the recorder.
    pub fn flush(&self) {
        if let Some(recorder) = &self.recorder {
            recorder.flush();
        }
    }

    /// The session clock.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }
}
