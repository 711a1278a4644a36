//! [`SessionSnapshot`]: what is saved of a session.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many of the last turns a snapshot's `transcript_summary` holds.
pub const SUMMARY_TURNS: usize = 3;

/// A session's client-side state at a turn boundary (or at its end): enough for the control
/// plane to pick up where it left off.
///
/// Serialized as JSON with these field names; the state's keys in sorted order.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    /// Every state key and its value.
    pub state: BTreeMap<String, Value>,
    /// The conversation phase ("" when the session has no phases).
    pub phase: String,
    /// Turns completed.
    pub turn_count: u32,
    /// The last [`SUMMARY_TURNS`] turns of the transcript, as text (see
    /// [`TranscriptBuffer::format_window`](crate::transcript::TranscriptBuffer::format_window)).
    pub transcript_summary: String,
    /// The latest session resumption handle the server gave, if any.
    pub resume_handle: Option<String>,
    /// When it was taken: session time, RFC 3339 in UTC with milliseconds
    /// (`2024-06-10T06:13:20.000Z`).
    pub saved_at: String,
}

impl SessionSnapshot {
    /// The snapshot as a database backend stores it: its JSON in one text column (the
    /// backends of `reel-persistence` use it, so every store writes the same form).
    pub fn to_stored(&self, session_id: &str) -> Result<String, super::PersistenceError> {
        serde_json::to_string(self).map_err(|source| super::PersistenceError::Encode {
            session_id: session_id.to_owned(),
            source,
        })
    }

    /// A stored snapshot read back; `location` names where it was, for the error.
    pub fn from_stored(
        json: &str,
        session_id: &str,
        location: &str,
    ) -> Result<SessionSnapshot, super::PersistenceError> {
        serde_json::from_str(json).map_err(|source| super::PersistenceError::Corrupt {
            session_id: session_id.to_owned(),
            location: location.to_owned(),
            source,
        })
    }
}

// Keys only, and no handle: values may hold anything a tool stored, the resumption handle
// lets whoever holds it continue the conversation, and a Debug line can reach a log.
impl fmt::Debug for SessionSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionSnapshot")
            .field("keys", &self.state.keys().collect::<Vec<_>>())
            .field("phase", &self.phase)
            .field("turn_count", &self.turn_count)
            .field(
                "resume_handle",
                &self.resume_handle.as_ref().map(|_| "<redacted>"),
            )
            .field("saved_at", &self.saved_at)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn debug_hides_values_and_the_handle() {
        let snapshot = SessionSnapshot {
            state: BTreeMap::from([("app:card".to_owned(), json!("4111 1111"))]),
            phase: "booking".into(),
            turn_count: 2,
            transcript_summary: "[Turn 2]".into(),
            resume_handle: Some("secret-handle".into()),
            saved_at: "2024-06-10T06:13:20.000Z".into(),
        };
        let debug = format!("{snapshot:?}");
        assert_eq!(
            debug,
            "SessionSnapshot { keys: [\"app:card\"], phase: \"booking\", turn_count: 2, \
             resume_handle: Some(\"<redacted>\"), saved_at: \"2024-06-10T06:13:20.000Z\", .. }"
        );
    }
}
