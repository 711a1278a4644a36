//! Divergences: where a replay's outbound frames differ from the recording's, with a
//! JSON-path diff of expected against actual.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// One difference inside a frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathDiff {
    /// JSON path, e.g. `toolResponse.functionResponses[0].response.temp_c`.
    pub path: String,
    /// The recorded value (`None`: absent in the recording).
    pub expected: Option<Value>,
    /// The replayed value (`None`: absent in the replay).
    pub actual: Option<Value>,
}

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

/// The payload as JSON, or as a JSON string if it is not JSON.
pub fn payload_json(payload: &[u8]) -> Value {
    serde_json::from_slice(payload)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()))
}

/// Every difference between `expected` and `actual`, as JSON paths, in document order.
/// Object keys are compared whatever their order; arrays element by element.
pub fn json_diff(expected: &Value, actual: &Value) -> Vec<PathDiff> {
    let mut diffs = Vec::new();
    diff_into(String::new(), Some(expected), Some(actual), &mut diffs);
    diffs
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn diff_into(
    path: String,
    expected: Option<&Value>,
    actual: Option<&Value>,
    out: &mut Vec<PathDiff>,
) {
    match (expected, actual) {
        (Some(Value::Object(e)), Some(Value::Object(a))) => {
            for (key, value) in e {
                diff_into(join(&path, key), Some(value), a.get(key), out);
            }
            for (key, value) in a {
                if !e.contains_key(key) {
                    diff_into(join(&path, key), None, Some(value), out);
                }
            }
        }
        (Some(Value::Array(e)), Some(Value::Array(a))) => {
            for index in 0..e.len().max(a.len()) {
                diff_into(format!("{path}[{index}]"), e.get(index), a.get(index), out);
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(PathDiff {
            path: if path.is_empty() {
                "$".to_owned()
            } else {
                path
            },
            expected: e.cloned(),
            actual: a.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diffs_name_every_changed_path() {
        let expected = json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "response": {"temp_c": 21, "sky": "clear"}}
        ]}});
        let actual = json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "response": {"temp_c": 25, "wind": 3}}
        ]}});
        assert_eq!(
            json_diff(&expected, &actual),
            vec![
                PathDiff {
                    path: "toolResponse.functionResponses[0].response.temp_c".into(),
                    expected: Some(json!(21)),
                    actual: Some(json!(25)),
                },
                PathDiff {
                    path: "toolResponse.functionResponses[0].response.sky".into(),
                    expected: Some(json!("clear")),
                    actual: None,
                },
                PathDiff {
                    path: "toolResponse.functionResponses[0].response.wind".into(),
                    expected: None,
                    actual: Some(json!(3)),
                },
            ]
        );
        assert!(json_diff(&json!({"a": [1, {"b": 2}]}), &json!({"a": [1, {"b": 2}]})).is_empty());
        assert_eq!(
            json_diff(&json!([1]), &json!([1, 2])),
            vec![PathDiff {
                path: "[1]".into(),
                expected: None,
                actual: Some(json!(2))
            }]
        );
        assert_eq!(
            json_diff(&json!(1), &json!("1")),
            vec![PathDiff {
                path: "$".into(),
                expected: Some(json!(1)),
                actual: Some(json!("1"))
            }]
        );
    }

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
