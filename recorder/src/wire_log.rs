//! The wire log: one JSON line per frame that crossed the wire, both directions.
//!
//! ```json
//! {"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"eyJzZXR1cCI6ey4uLn19"}
//! ```
//!
//! Optional additions, written only when they carry information, so a plain session's lines
//! are:
//!
//! - `conn`: the 1-based connection the frame travelled on (absent on the first connection);
//! - `binary`: set when the frame was a binary WebSocket frame (Vertex AI);
//! - `source`: `"app"` on an outbound frame the application sent through its handle (text or
//!   audio the user sent). Replay does not re-send those: they only existed to provoke the
//!   recorded inbound frames. `"runtime"` on client content or realtime input the runtime
//!   itself sent (a callback's prompt through its writer), which replay expects again.
//!   Absent: the runtime produced the frame (setup, tool responses, instruction updates), or
//!   the log predates the mark, and readers go by the frame's kind;
//! - `dropped_before`: on an outbound audio frame the application sent, how many of its
//!   audio chunks the session dropped just before this one, unsent (it holds at most
//!   `HELD_AUDIO_CHUNKS` while reconnecting and drops the oldest beyond). Running tools that
//!   consume the user's input are told of the gap here, live and in a replay (decision 0092);
//! - `close`: marks the end of a connection instead of carrying a frame, with an empty
//!   payload (see [`CloseMark`] and [`WireEntry::close_mark`]):
//!
//! ```json
//! {"seq":9,"dir":"in","ts_ms":1718000004000,"payload_b64":"","conn":2,"close":{"code":1000,"reason":"go_away","client":true}}
//! ```

use std::fmt;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use schemars::JsonSchema;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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

/// Who produced an outbound frame, where the kind of frame alone does not tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The application sent it through its session handle; replay does not re-send it.
    App,
    /// The runtime sent it although it is of a kind applications send (client content or
    /// realtime input, e.g. a prompt from a callback): replay expects it again.
    Runtime,
}

/// How a connection ended: the payload of a close-marker entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct CloseMark {
    /// The WebSocket close code, when there was a close frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// Why it ended: the close frame's reason, or what the session saw (e.g. `go_away`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the client initiated the close.
    pub client: bool,
}

/// One frame as it crossed the wire, or the end of a connection (a close marker).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WireEntry {
    /// Sequence number, stamped by the transport, shared by both directions, from 1.
    pub seq: u64,
    /// Direction.
    pub dir: Direction,
    /// Session time, epoch milliseconds.
    pub ts_ms: u64,
    /// The frame's bytes exactly as sent or received.
    #[serde(rename = "payload_b64", with = "payload_b64")]
    #[schemars(with = "String", extend("contentEncoding" = "base64"))]
    pub payload: Bytes,
    /// The connection the frame travelled on, when not the first (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<u32>,
    /// Set when the frame was a binary WebSocket frame.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Who sent an outbound frame, when it was not the runtime (absent: the runtime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// On the application's audio: how many of its chunks the session dropped unsent just
    /// before this one (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_before: Option<u64>,
    /// Set on a close marker: the connection ended here. Its payload is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close: Option<CloseMark>,
}

impl WireEntry {
    /// A frame the runtime sent or received: no `source`, no `close`.
    ///
    /// ```
    /// use reel_recorder::wire_log::{Direction, WireEntry};
    ///
    /// let entry = WireEntry::frame(2, Direction::In, 1_718_000_000_123, &b"{}"[..], None, false);
    /// assert_eq!(
    ///     serde_json::to_string(&entry)?,
    ///     r#"{"seq":2,"dir":"in","ts_ms":1718000000123,"payload_b64":"e30="}"#
    /// );
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn frame(
        seq: u64,
        dir: Direction,
        ts_ms: u64,
        payload: impl Into<Bytes>,
        conn: Option<u32>,
        binary: bool,
    ) -> WireEntry {
        WireEntry {
            seq,
            dir,
            ts_ms,
            payload: payload.into(),
            conn,
            binary,
            source: None,
            dropped_before: None,
            close: None,
        }
    }

    /// A marker that connection `conn` (absent: the first) ended: direction `in`, empty
    /// payload, and `mark` saying how.
    pub fn close_mark(seq: u64, ts_ms: u64, conn: Option<u32>, mark: CloseMark) -> WireEntry {
        WireEntry {
            close: Some(mark),
            ..WireEntry::frame(seq, Direction::In, ts_ms, Bytes::new(), conn, false)
        }
    }

    /// Whether this entry marks the end of a connection rather than carrying a frame.
    pub fn is_close_marker(&self) -> bool {
        self.close.is_some()
    }
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
    /// Writes out what is buffered (the session calls it when its queue of entries is
    /// empty, at least every 50 ms while entries come, after a frame that ends a model
    /// turn, and on stop).
    fn flush(&self) {}
    /// How many entries could not be stored, or writes failed, so far; the runtime reports
    /// it in telemetry. A recorder that cannot fail keeps the default, 0.
    fn error_count(&self) -> u64 {
        0
    }
}

/// A shared recorder records through the one it points to, so a wrapper such as
/// [`RedactingRecorder`](crate::redact::RedactingRecorder) can wrap an `Arc` that others
/// also hold.
impl<R: WireRecorder + ?Sized> WireRecorder for Arc<R> {
    fn record(&self, entry: WireEntry) {
        (**self).record(entry);
    }

    fn flush(&self) {
        (**self).flush();
    }

    fn error_count(&self) -> u64 {
        (**self).error_count()
    }
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

    fn seed_entry() -> WireEntry {
        WireEntry::frame(
            2,
            Direction::In,
            1_718_000_000_123,
            Bytes::from_static(br#"{"setupComplete":{}}"#),
            None,
            false,
        )
    }

    #[test]
    fn entries_serialize_exactly_as_seed_000() {
        let entry = seed_entry();
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
        assert_eq!(
            line,
            r#"{"seq":2,"dir":"in","ts_ms":1718000000123,"payload_b64":"eyJzZXR1cENvbXBsZXRlIjp7fX0=","conn":2,"binary":true}"#
        );
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), resumed);
    }

    #[test]
    fn frame_builds_a_plain_entry() {
        assert_eq!(
            seed_entry(),
            WireEntry {
                seq: 2,
                dir: Direction::In,
                ts_ms: 1_718_000_000_123,
                payload: Bytes::from_static(br#"{"setupComplete":{}}"#),
                conn: None,
                binary: false,
                source: None,
                dropped_before: None,
                close: None,
            }
        );
        assert!(!seed_entry().is_close_marker());
    }

    #[test]
    fn an_app_frame_carries_its_source_last() {
        let entry = WireEntry {
            source: Some(Source::App),
            ..WireEntry::frame(3, Direction::Out, 7, &b"{}"[..], Some(2), false)
        };
        let line = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            line,
            r#"{"seq":3,"dir":"out","ts_ms":7,"payload_b64":"e30=","conn":2,"source":"app"}"#
        );
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), entry);
    }

    #[test]
    fn an_app_chunk_after_a_drop_carries_the_count_after_its_source() {
        let entry = WireEntry {
            source: Some(Source::App),
            dropped_before: Some(21),
            ..WireEntry::frame(40, Direction::Out, 7, &b"{}"[..], Some(3), false)
        };
        let line = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            line,
            r#"{"seq":40,"dir":"out","ts_ms":7,"payload_b64":"e30=","conn":3,"source":"app","dropped_before":21}"#
        );
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), entry);
    }

    #[test]
    fn a_close_marker_serializes_as_specified() {
        let mark = CloseMark {
            code: Some(1000),
            reason: Some("go_away".to_owned()),
            client: true,
        };
        let entry = WireEntry::close_mark(9, 1_718_000_004_000, Some(2), mark.clone());
        assert!(entry.is_close_marker());
        assert_eq!(entry.dir, Direction::In);
        assert!(entry.payload.is_empty());
        let line = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            line,
            r#"{"seq":9,"dir":"in","ts_ms":1718000004000,"payload_b64":"","conn":2,"close":{"code":1000,"reason":"go_away","client":true}}"#
        );
        assert_eq!(serde_json::from_str::<WireEntry>(&line).unwrap(), entry);
    }

    #[test]
    fn a_close_marker_without_code_or_reason_omits_them() {
        let mark = CloseMark {
            code: None,
            reason: None,
            client: false,
        };
        let line = serde_json::to_string(&WireEntry::close_mark(4, 5, None, mark)).unwrap();
        assert_eq!(
            line,
            r#"{"seq":4,"dir":"in","ts_ms":5,"payload_b64":"","close":{"client":false}}"#
        );
    }

    #[test]
    fn an_unknown_source_is_rejected() {
        let line = r#"{"seq":1,"dir":"out","ts_ms":1,"payload_b64":"","source":"tool"}"#;
        assert!(serde_json::from_str::<WireEntry>(line).is_err());
    }

    #[test]
    fn the_default_error_count_is_zero_and_arcs_delegate() {
        let shared = Arc::new(MemoryWireRecorder::new());
        let as_recorder: Arc<dyn WireRecorder> = shared.clone();
        as_recorder.record(seed_entry());
        assert_eq!(as_recorder.error_count(), 0);
        assert_eq!(shared.entries(), vec![seed_entry()]);
    }
}
