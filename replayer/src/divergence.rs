//! Divergences: where a replay's outbound frames differ from the recording's, with a
//! JSON-path diff of expected against actual.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

pub use reel_protocol::json::{PathDiff, json_diff, payload_json};

/// How a replayed frame differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The runtime produced a different frame.
    Differs {
        /// The differences, in document order.
        diffs: Vec<PathDiff>,
    },
    /// The recording has a frame the runtime never produced.
    Missing,
    /// The runtime produced a frame the recording does not have.
    Unexpected,
}

/// A place where the replay parted from the recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// Sequence number of the recorded frame (of the last recorded frame, for an
    /// unexpected one).
    pub seq: u64,
    /// What differs.
    #[serde(flatten)]
    pub kind: DivergenceKind,
    /// The recorded frame, as JSON (or as a string if it was not JSON).
    pub expected: Option<Value>,
    /// The replayed frame.
    pub actual: Option<Value>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DivergenceKind::Missing => write!(
                f,
                "frame {}: the recording has an outbound frame the replay never produced",
                self.seq
            ),
            DivergenceKind::Unexpected => write!(
                f,
                "after frame {}: the replay produced an outbound frame the recording does not have",
                self.seq
            ),
            DivergenceKind::Differs { diffs } => {
                write!(f, "frame {}: the replayed frame differs", self.seq)?;
                for diff in diffs {
                    let show = |v: &Option<Value>| match v {
                        Some(v) => v.to_string(),
                        None => "(absent)".to_owned(),
                    };
                    write!(
                        f,
                        "\n  {}: expected {}, actual {}",
                        diff.path,
                        show(&diff.expected),
                        show(&diff.actual)
                    )?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn divergences_read_well() {
        let divergence = Divergence {
            seq: 7,
            kind: DivergenceKind::Differs {
                diffs: vec![PathDiff {
                    path: "toolResponse.functionResponses[0].response.temp_c".into(),
                    expected: Some(json!(21)),
                    actual: Some(json!(25)),
                }],
            },
            expected: None,
            actual: None,
        };
        assert_eq!(
            divergence.to_string(),
            "frame 7: the replayed frame differs\n  toolResponse.functionResponses[0].response.temp_c: expected 21, actual 25"
        );
    }
}
