//! The live feed: a running session's recording, streamed as it happens to a viewer such
//! as `reel studio` (one WebSocket text message per [`LiveMessage`]).
//!
//! The feed carries exactly what the session records — its wire entries and its journal's
//! mutations, the same values the files get — so the viewer can write them to files that
//! are byte for byte the session's own recording and read them with the same code as any
//! other log. A sender that could not keep up says how many messages it dropped, so the
//! viewer can show the gap instead of a silently shorter call.
//!
//! ```
//! use reel_recorder::live_feed::LiveMessage;
//! use reel_recorder::wire_log::{Direction, WireEntry};
//!
//! let message = LiveMessage::Wire(WireEntry::frame(1, Direction::Out, 5, &b"{}"[..], None, false));
//! let text = serde_json::to_string(&message)?;
//! assert_eq!(text, r#"{"wire":{"seq":1,"dir":"out","ts_ms":5,"payload_b64":"e30="}}"#);
//! assert_eq!(serde_json::from_str::<LiveMessage>(&text)?, message);
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::journal::StateMutation;
use crate::wire_log::WireEntry;

/// The path a viewer serves the feed on; the sender adds `?name=NAME`, the recording's
/// name without `.wire.jsonl`.
pub const LIVE_FEED_PATH: &str = "/api/live";

/// The largest message a viewer accepts (a frame of 10 MiB, base64-encoded, with room).
pub const MAX_LIVE_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// One message of the feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LiveMessage {
    /// A wire entry, in the order the session recorded it.
    Wire(WireEntry),
    /// A state mutation, in journal order.
    Journal(StateMutation),
    /// Something that happened to the session itself and leaves no trace in its recording
    /// (a lane restarted, a reconnect begun or done).
    Note(SessionNote),
    /// How many messages the sender has dropped so far (its queue was full): the count
    /// only grows, and the viewer keeps the last one.
    Dropped(u64),
}

/// An event of the session tree, as the studio's supervisor lane shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionNote {
    /// When, epoch milliseconds (the clock of the session's process).
    pub ts_ms: u64,
    /// `restarted`, `reconnecting`, `reconnected` or `resumed`.
    pub kind: String,
    /// What, in a few words (`fast lane restarted (1): boom`).
    pub detail: String,
}

/// Whether `name` may name a live recording: 1 to 128 of `A-Z a-z 0-9 . _ -`, not starting
/// with a dot. The viewer writes `NAME.wire.jsonl` in its directory, so nothing else gets
/// through (no path separator, no `..`).
///
/// ```
/// use reel_recorder::live_feed::is_live_name;
///
/// assert!(is_live_name("weather-2026-11-26"));
/// assert!(!is_live_name("../etc/passwd"));
/// assert!(!is_live_name(".hidden"));
/// ```
pub fn is_live_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_journal_message_carries_the_mutation_as_the_journal_writes_it() {
        let mutation = StateMutation {
            sequence: 3,
            key: "app:city".into(),
            old: json!(null),
            new: json!("London"),
            origin: "set".into(),
            timestamp_ms: 9,
            delta: false,
        };
        let text = serde_json::to_string(&LiveMessage::Journal(mutation.clone())).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"journal":{}}}"#,
                serde_json::to_string(&mutation).unwrap()
            )
        );
        assert_eq!(
            serde_json::to_string(&LiveMessage::Dropped(4)).unwrap(),
            r#"{"dropped":4}"#
        );
    }

    #[test]
    fn an_unknown_message_is_refused() {
        assert!(serde_json::from_str::<LiveMessage>(r#"{"wired":{}}"#).is_err());
        assert!(serde_json::from_str::<LiveMessage>(r#"{"wire":{"seq":1}}"#).is_err());
    }

    #[test]
    fn names_are_plain_file_stems() {
        for good in ["a", "call.2", "A_b-c"] {
            assert!(is_live_name(good), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "a b", "é", &"x".repeat(129)] {
            assert!(!is_live_name(bad), "{bad:?}");
        }
    }
}
