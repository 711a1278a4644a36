//! Journal diffs: the recorded journal's final value of each key against a replay's final
//! state.
//!
//! [`JournalFinal`] folds a journal, one mutation at a time (so a journal of any length is
//! read in the memory of its keys), into each key's last value; [`JournalFinal::diff`]
//! compares that with the state a replay ended with, key by key.
//!
//! ```
//! use reel_recorder::journal::StateMutation;
//! use reel_replayer::journal_diff::{JournalFinal, KeyDrift};
//! use serde_json::json;
//!
//! let set = |sequence, key: &str, new| StateMutation {
//!     sequence, key: key.into(), old: json!(null), new, origin: "set".into(),
//!     timestamp_ms: 1_718_000_000_000 + sequence, delta: false,
//! };
//! let recorded = JournalFinal::from_mutations([
//!     set(1, "app:city", json!("London")),
//!     set(2, "session:turn_count", json!(1)),
//! ]);
//! let replayed = [("session:turn_count".to_owned(), json!(1))];
//! let diff = recorded.diff(replayed.iter().map(|(k, v)| (k.as_str(), v)));
//! assert_eq!(diff.diverged.len(), 1);
//! assert_eq!(diff.diverged[0].to_string(), r#"app:city: recorded "London", missing on replay"#);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use reel_recorder::journal::StateMutation;
use serde::Serialize;
use serde_json::Value;

/// Each key's final value in a journal, and what the journal held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JournalFinal {
    values: BTreeMap<String, Value>,
    keys: BTreeSet<String>,
    mutations: u64,
    time_range: Option<(u64, u64)>,
}

impl JournalFinal {
    /// Nothing applied yet.
    pub fn new() -> Self {
        JournalFinal::default()
    }

    /// Folds `mutations`, in journal order.
    pub fn from_mutations(mutations: impl IntoIterator<Item = StateMutation>) -> Self {
        let mut folded = JournalFinal::new();
        for mutation in mutations {
            folded.apply(&mutation);
        }
        folded
    }

    /// Applies the next mutation: its `new` value becomes the key's value (`null`: the key
    /// is removed).
    pub fn apply(&mut self, mutation: &StateMutation) {
        self.mutations += 1;
        if !self.keys.contains(&mutation.key) {
            self.keys.insert(mutation.key.clone());
        }
        match &mutation.new {
            Value::Null => {
                self.values.remove(&mutation.key);
            }
            new => {
                self.values.insert(mutation.key.clone(), new.clone());
            }
        }
        let ts = mutation.timestamp_ms;
        self.time_range = Some(match self.time_range {
            Some((first, last)) => (first.min(ts), last.max(ts)),
            None => (ts, ts),
        });
    }

    /// How many mutations were applied.
    pub fn mutations(&self) -> u64 {
        self.mutations
    }

    /// How many distinct keys the journal changed (removed ones included).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Each key's final value, keys in order; removed keys are absent.
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.values
    }

    /// The earliest and latest mutation timestamps (epoch ms), if there was any mutation.
    pub fn time_range(&self) -> Option<(u64, u64)> {
        self.time_range
    }

    /// Compares the final values with a replay's final state (key, value pairs), key by
    /// key, in key order.
    pub fn diff<'a>(&self, replay: impl IntoIterator<Item = (&'a str, &'a Value)>) -> JournalDiff {
        let replay: BTreeMap<&str, &Value> = replay.into_iter().collect();
        let mut diverged = Vec::new();
        let keys: BTreeSet<&str> = self
            .values
            .keys()
            .map(String::as_str)
            .chain(replay.keys().copied())
            .collect();
        for key in keys {
            let drift = match (self.values.get(key), replay.get(key)) {
                (Some(recorded), Some(replayed)) if recorded == *replayed => continue,
                (Some(recorded), Some(replayed)) => KeyDrift::Differs {
                    recorded: recorded.clone(),
                    replay: (*replayed).clone(),
                },
                (Some(recorded), None) => KeyDrift::MissingOnReplay {
                    recorded: recorded.clone(),
                },
                (None, Some(replayed)) => KeyDrift::ExtraOnReplay {
                    replay: (*replayed).clone(),
                },
                (None, None) => continue,
            };
            diverged.push(KeyDiff {
                key: key.to_owned(),
                drift,
            });
        }
        JournalDiff {
            mutations: self.mutations,
            keys: self.key_count(),
            diverged,
        }
    }
}

/// How one key's final value differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KeyDrift {
    /// Both have the key, with different values.
    Differs {
        /// The recorded final value.
        recorded: Value,
        /// The replay's.
        replay: Value,
    },
    /// The recording ended with the key set; the replay did not set it.
    MissingOnReplay {
        /// The recorded final value.
        recorded: Value,
    },
    /// The replay ended with a key the recording did not end with.
    ExtraOnReplay {
        /// The replay's value.
        replay: Value,
    },
}

/// One key that drifted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyDiff {
    /// The key.
    pub key: String,
    /// How.
    #[serde(flatten)]
    pub drift: KeyDrift,
}

/// `key: recorded X, replay Y`, `key: recorded X, missing on replay` or
/// `key: extra on replay, replay Y`; values as compact JSON.
impl fmt::Display for KeyDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.drift {
            KeyDrift::Differs { recorded, replay } => {
                write!(f, "{}: recorded {recorded}, replay {replay}", self.key)
            }
            KeyDrift::MissingOnReplay { recorded } => {
                write!(f, "{}: recorded {recorded}, missing on replay", self.key)
            }
            KeyDrift::ExtraOnReplay { replay } => {
                write!(f, "{}: extra on replay, replay {replay}", self.key)
            }
        }
    }
}

/// The result of [`JournalFinal::diff`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JournalDiff {
    /// Mutations in the recorded journal.
    pub mutations: u64,
    /// Distinct keys the recorded journal changed.
    pub keys: usize,
    /// The keys whose final values differ, in key order.
    pub diverged: Vec<KeyDiff>,
}

impl JournalDiff {
    /// Whether every key ended with the same value.
    pub fn is_clean(&self) -> bool {
        self.diverged.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal_match::tests::set as mutation;
    use serde_json::json;

    #[test]
    fn the_last_write_wins_and_null_removes() {
        let folded = JournalFinal::from_mutations([
            mutation(1, "a", json!(1), 30),
            mutation(2, "b", json!("x"), 10),
            mutation(3, "a", json!(2), 20),
            mutation(4, "b", Value::Null, 40),
        ]);
        assert_eq!(folded.mutations(), 4);
        assert_eq!(folded.key_count(), 2);
        assert_eq!(folded.time_range(), Some((10, 40)));
        assert_eq!(
            folded.values().iter().collect::<Vec<_>>(),
            [(&"a".to_owned(), &json!(2))]
        );
    }

    #[test]
    fn every_kind_of_drift_is_named() {
        let folded = JournalFinal::from_mutations([
            mutation(1, "same", json!(1), 1),
            mutation(2, "changed", json!("x"), 1),
            mutation(3, "missing", json!({"k": true}), 1),
        ]);
        let replay = [
            ("changed", json!("y")),
            ("extra", json!([1])),
            ("same", json!(1)),
        ];
        let diff = folded.diff(replay.iter().map(|(k, v)| (*k, v)));
        assert!(!diff.is_clean());
        let lines: Vec<String> = diff.diverged.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                r#"changed: recorded "x", replay "y""#,
                "extra: extra on replay, replay [1]",
                r#"missing: recorded {"k":true}, missing on replay"#,
            ]
        );
        assert_eq!(
            serde_json::to_value(&diff.diverged[0]).unwrap(),
            json!({"key": "changed", "status": "differs", "recorded": "x", "replay": "y"})
        );
    }
}
