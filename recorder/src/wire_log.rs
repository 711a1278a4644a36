//! The wire log: one JSON line per frame that crossed the wire, both directions (seed 000).
//!
//! ```json
//! {"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"eyJzZXR1cCI6ey4uLn19"}
//! ```
//!
//! Optional additions, written only when they carry information: `conn`, the 1-based
//! connection the frame travelled on (absent on the first connection, so a session that
//! never reconnected has exactly seed 000's lines), and `binary`, set when the frame was a
//! binary WebSocket frame (Vertex AI).

use std::fmt;
use std::sync::Mutex;

use bytes::Bytes;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server → client.
    In,
    /// Client → server.
    Out,
}

impl Direction {
    /// `in` or `out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
        }
    }
}

/// One frame as it crossed the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireEntry {
    /// Sequence number, stamped by the transport, shared by both directions, from 1.
    pub seq: u64,
    /// Direction.
    pub dir: Direction,
    /// Session time, epoch milliseconds.
    pub ts_ms: u64,
    /// The frame's bytes exactly as sent or received.
    #[serde(rename = "payload_b64", with = "payload_b64")]
    pub payload: Bytes,
    /// The connection the frame travelled on, when not the first (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<u32>,
    /// Set when the frame was a binary WebSocket frame.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

mod payload_b64 {
    use super::*;

    pub fn serialize<S: Serializer>(payload: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&reel_protocol::Base64Data(payload.clone()).encode())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        reel_protocol::Base64Data::decode(&text)
            .map(|data| data.0)
            .map_err(de::Error::custom)
    }
}

/// Where the transport hands every frame, synchronously, before anything else sees it.
///
/// Implementations must be cheap (buffer, don't write per call) and infallible by contract:
/// a failure to store is logged and counted, never returned into the session.
pub trait WireRecorder: Send + Sync + 'static {
    /// Takes one entry. Entries arrive in sequence order.
    fn record(&self, entry: WireEntry);
    /// Writes out what is buffered (the session calls it every second and on stop).
    fn flush(&self) {}
}

/// Keeps entries in memory, for tests and in-process replay.
#[derive(Default)]
pub struct MemoryWireRecorder {
    entries: Mutex<Vec<WireEntry>>,
}

impl MemoryWireRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        MemoryWireRecorder::default()
    }

    /// The entries recorded so far, in order.
    pub fn entries(&self) -> Vec<WireEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl fmt::Debug for MemoryWireRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryWireRecorder")
            .field("entries", &self.entries().len())
            .finish()
    }
}

impl WireRecorder for MemoryWireRecorder {
    fn record(&self, entry: WireEntry) {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_serialize_exactly_as_seed_000() {
        let entry = WireEntry {
            seq: 2,
            dir: Direction::In,
            ts_ms: 1_718_000_000_123,
            payload: Bytes::from_static(br#"{"setupComplete":{}}"#),
            conn: None,
            binary: false,
        };
        let line = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            line,
            r#"{"seq":2,"dir":"in","ts_ms":1718000000123,"payload_b64":"eyJzZXR1cENvbXBsZXRlIjp7fX0="}"#
        );
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), entry);
        let resumed = WireEntry {
            conn: Some(2),
            binary: true,
            ..entry
        };
        let line = serde_json::to_string(&resumed).unwrap();
        assert!(line.ends_with(r#","conn":2,"binary":true}"#), "{line}");
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), resumed);
    }
}
