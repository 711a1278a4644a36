//! [`LogStats`]: what a wire log holds, counted one entry at a time.

use reel_protocol::{Setup, decode_client};
use reel_recorder::wire_log::{Direction, WireEntry};
use serde::Serialize;

/// Counts of a wire log's entries, its time span, its reconnects and its first setup.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LogStats {
    /// Frames (close markers not counted).
    pub frames: u64,
    /// Frames the server sent.
    pub inbound: u64,
    /// Frames the client sent.
    pub outbound: u64,
    /// Close markers: connection ends.
    pub close_markers: u64,
    /// Close markers followed by more frames: the session reconnected there.
    pub reconnects: u64,
    /// Time of the first entry, epoch ms.
    pub first_ts_ms: Option<u64>,
    /// Time of the last entry, epoch ms.
    pub last_ts_ms: Option<u64>,
    /// Sequence number of the first outbound frame.
    pub first_outbound_seq: Option<u64>,
    /// The setup of the first outbound frame, if that frame is a setup.
    #[serde(skip)]
    pub setup: Option<Setup>,
    #[serde(skip)]
    pending_close: bool,
}

impl LogStats {
    /// Nothing counted yet.
    pub fn new() -> Self {
        LogStats::default()
    }

    /// Counts `entry` (entries in log order).
    pub fn observe(&mut self, entry: &WireEntry) {
        self.first_ts_ms.get_or_insert(entry.ts_ms);
        self.last_ts_ms = Some(entry.ts_ms);
        if entry.is_close_marker() {
            self.close_markers += 1;
            self.pending_close = true;
            return;
        }
        if std::mem::take(&mut self.pending_close) {
            self.reconnects += 1;
        }
        self.frames += 1;
        match entry.dir {
            Direction::In => self.inbound += 1,
            Direction::Out => {
                self.outbound += 1;
                if self.first_outbound_seq.is_none() {
                    self.first_outbound_seq = Some(entry.seq);
                    self.setup = decode_client(&entry.payload)
                        .ok()
                        .and_then(|message| message.setup);
                }
            }
        }
    }

    /// Time from the first entry to the last, in ms.
    pub fn duration_ms(&self) -> u64 {
        match (self.first_ts_ms, self.last_ts_ms) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_recorder::wire_log::CloseMark;

    #[test]
    fn counts_frames_reconnects_and_the_setup() {
        let mark = || CloseMark {
            code: Some(1000),
            reason: None,
            client: true,
        };
        let entries = [
            WireEntry::frame(
                1,
                Direction::Out,
                100,
                &br#"{"setup":{"model":"m"}}"#[..],
                None,
                false,
            ),
            WireEntry::frame(
                2,
                Direction::In,
                140,
                &br#"{"setupComplete":{}}"#[..],
                None,
                false,
            ),
            WireEntry::close_mark(3, 900, None, mark()),
            WireEntry::frame(
                4,
                Direction::Out,
                950,
                &br#"{"setup":{}}"#[..],
                Some(2),
                false,
            ),
            WireEntry::close_mark(5, 1_600, Some(2), mark()),
        ];
        let mut stats = LogStats::new();
        entries.iter().for_each(|e| stats.observe(e));
        assert_eq!((stats.frames, stats.inbound, stats.outbound), (3, 1, 2));
        assert_eq!((stats.close_markers, stats.reconnects), (2, 1));
        assert_eq!(stats.duration_ms(), 1_500);
        assert_eq!(stats.first_outbound_seq, Some(1));
        assert_eq!(stats.setup.and_then(|s| s.model).as_deref(), Some("m"));
    }
}
