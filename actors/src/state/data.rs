//! The state's data and the one pure function that writes it.
//!
//! [`StateData`] is a persistent value: [`StateData::apply`] never changes it, it returns
//! the next version (sharing all untouched structure, so a copy is O(1)) together with the
//! journal entries the batch produced. Whoever applies a batch — the StateStore actor, or
//! the caller itself when no actor is attached — runs exactly this function, so both paths
//! journal identically.
//!
//! Rules, in one place:
//! - JSON `null` is absence: the map never holds `null`. Setting a key to `null` removes it
//!   (journaled with its own origin, `new: null`), which keeps the journal and the state in
//!   one-to-one correspondence.
//! - A write that changes nothing (the new value equals the old, or removing an absent key)
//!   is not journaled and takes no sequence number.
//! - Every mutation of one batch carries the same timestamp, read once from the session
//!   clock, and consecutive sequence numbers in op order.
//! - `ClearPrefix` removes keys in key order, one mutation each.

use std::ops::Bound;
use std::sync::Arc;

use imbl::{OrdMap, Vector};
use reel_recorder::journal::{StateMutation, origin};
use serde_json::{Map, Value};

/// How many mutations the in-memory ring keeps (the oldest are dropped first).
pub const RECENT_MUTATIONS: usize = 1024;

/// The prefix of computed keys, read by the derived fallback.
pub(crate) const DERIVED_PREFIX: &str = "derived:";

/// One write in a batch sent to the state store.
pub enum StateOp {
    /// Sets `key` to `value` (`null` removes it).
    Set {
        /// The state key.
        key: String,
        /// The new value.
        value: Value,
    },
    /// Removes `key`.
    Remove {
        /// The state key.
        key: String,
    },
    /// Replaces the value at `key` (or `default` if absent) with `f` of it. `f` runs on the
    /// store's write path, so no other write interleaves: this is the atomic
    /// read-modify-write. A panic in `f` fails the store and leaves the state untouched.
    Modify {
        /// The state key.
        key: String,
        /// What `f` receives when the key is absent.
        default: Value,
        /// The modification.
        f: Box<dyn FnOnce(Value) -> Value + Send>,
    },
    /// Removes every key that starts with `prefix` (all keys for an empty prefix).
    ClearPrefix {
        /// The prefix, e.g. `turn:`.
        prefix: String,
    },
}

// Keys only: values may hold anything a tool stored, and a Debug line can reach a log.
impl std::fmt::Debug for StateOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (op, field, name) = match self {
            StateOp::Set { key, .. } => ("Set", "key", key),
            StateOp::Remove { key } => ("Remove", "key", key),
            StateOp::Modify { key, .. } => ("Modify", "key", key),
            StateOp::ClearPrefix { prefix } => ("ClearPrefix", "prefix", prefix),
        };
        f.debug_struct(op)
            .field(field, name)
            .finish_non_exhaustive()
    }
}

/// The whole state at one point of the journal.
#[derive(Debug, Clone)]
pub(crate) struct StateData {
    /// Key → value; never holds `null`.
    pub(crate) map: OrdMap<String, Value>,
    /// The sequence number the next mutation takes (the first is 1).
    pub(crate) next_sequence: u64,
    /// The last [`RECENT_MUTATIONS`] mutations, oldest first. Shared, not owned: a commit
    /// copies the ring's last chunk (copy on write, the snapshot before it keeps the old
    /// one), and copying 64 pointers costs a fraction of cloning 64 mutations (their keys,
    /// values and origins).
    pub(crate) recent: Vector<Arc<StateMutation>>,
}

impl Default for StateData {
    fn default() -> Self {
        StateData {
            map: OrdMap::new(),
            next_sequence: 1,
            recent: Vector::new(),
        }
    }
}

/// What applying a batch produced.
#[derive(Debug)]
pub(crate) struct Applied {
    /// The state after the batch.
    pub(crate) data: StateData,
    /// The journal entries, in order (no-op writes produce none): the same allocations as
    /// the recent-mutations ring holds, not copies of them.
    pub(crate) mutations: Vec<Arc<StateMutation>>,
    /// One value per op: the value before it (`null` if absent); for `ClearPrefix`, an
    /// object of the removed keys and their values.
    pub(crate) olds: Vec<Value>,
}

impl StateData {
    /// The value at `key`; for an unprefixed key (no `:`) that is absent, the value at
    /// `derived:{key}`.
    pub(crate) fn lookup(&self, key: &str) -> Option<&Value> {
        self.map.get(key).or_else(|| {
            if key.contains(':') {
                None
            } else {
                self.map.get(format!("{DERIVED_PREFIX}{key}").as_str())
            }
        })
    }

    /// The sequence number of the last mutation (0 before the first).
    pub(crate) fn cursor(&self) -> u64 {
        self.next_sequence.saturating_sub(1)
    }

    /// Applies `ops` in order, at session time `timestamp_ms`; `delta` marks the mutations
    /// as coming from a delta view's commit. Pure: `self` is unchanged.
    pub(crate) fn apply(&self, ops: Vec<StateOp>, delta: bool, timestamp_ms: u64) -> Applied {
        let mut next = Writer {
            data: self.clone(),
            // At most one entry an op, but for `ClearPrefix` (one a key it removes).
            mutations: Vec::with_capacity(ops.len()),
            timestamp_ms,
            delta,
        };
        let olds = ops.into_iter().map(|op| next.op(op)).collect();
        Applied {
            data: next.data,
            mutations: next.mutations,
            olds,
        }
    }
}

/// The batch being applied.
struct Writer {
    data: StateData,
    mutations: Vec<Arc<StateMutation>>,
    timestamp_ms: u64,
    delta: bool,
}

impl Writer {
    fn op(&mut self, op: StateOp) -> Value {
        match op {
            StateOp::Set { key, value } => self.write(key, value, origin::SET),
            StateOp::Remove { key } => self.write(key, Value::Null, origin::REMOVE),
            StateOp::Modify { key, default, f } => {
                let current = self.data.map.get(&key).cloned().unwrap_or(default);
                let new = f(current);
                self.write(key, new, origin::MODIFY)
            }
            StateOp::ClearPrefix { prefix } => {
                let keys: Vec<String> = self
                    .data
                    .map
                    .range::<_, str>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .take_while(|(key, _)| key.starts_with(prefix.as_str()))
                    .map(|(key, _)| key.clone())
                    .collect();
                let mut removed = Map::new();
                for key in keys {
                    let old = self.write(key.clone(), Value::Null, origin::CLEAR_PREFIX);
                    removed.insert(key, old);
                }
                Value::Object(removed)
            }
        }
    }

    /// Sets `key` to `new` (`null`: removes it) and journals the change, if it is one.
    fn write(&mut self, key: String, new: Value, origin: &str) -> Value {
        let old = self.data.map.get(&key).cloned().unwrap_or(Value::Null);
        if old == new {
            return old;
        }
        if new.is_null() {
            self.data.map.remove(&key);
        } else {
            self.data.map.insert(key.clone(), new.clone());
        }
        let mutation = Arc::new(StateMutation {
            sequence: self.data.next_sequence,
            key,
            old: old.clone(),
            new,
            origin: origin.to_owned(),
            timestamp_ms: self.timestamp_ms,
            delta: self.delta,
        });
        self.data.next_sequence += 1;
        self.data.recent.push_back(Arc::clone(&mutation));
        if self.data.recent.len() > RECENT_MUTATIONS {
            self.data.recent.pop_front();
        }
        self.mutations.push(mutation);
        old
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(key: &str, value: Value) -> StateOp {
        StateOp::Set {
            key: key.to_owned(),
            value,
        }
    }

    fn mutation(
        sequence: u64,
        key: &str,
        old: Value,
        new: Value,
        origin: &str,
    ) -> Arc<StateMutation> {
        Arc::new(StateMutation {
            sequence,
            key: key.to_owned(),
            old,
            new,
            origin: origin.to_owned(),
            timestamp_ms: 42,
            delta: false,
        })
    }

    #[test]
    fn apply_is_pure_and_journals_in_op_order() {
        let empty = StateData::default();
        let applied = empty.apply(
            vec![
                set("a", json!(1)),
                set("a", json!(2)),
                StateOp::Modify {
                    key: "n".to_owned(),
                    default: json!(10),
                    f: Box::new(|v| json!(v.as_i64().unwrap() + 1)),
                },
                StateOp::Remove {
                    key: "a".to_owned(),
                },
            ],
            false,
            42,
        );
        assert!(empty.map.is_empty());
        assert_eq!(empty.next_sequence, 1);
        assert_eq!(
            applied.mutations,
            vec![
                mutation(1, "a", Value::Null, json!(1), "set"),
                mutation(2, "a", json!(1), json!(2), "set"),
                mutation(3, "n", Value::Null, json!(11), "modify"),
                mutation(4, "a", json!(2), Value::Null, "remove"),
            ]
        );
        assert_eq!(
            applied.olds,
            vec![Value::Null, json!(1), Value::Null, json!(2)]
        );
        assert_eq!(applied.data.next_sequence, 5);
        assert_eq!(applied.data.map.get("n"), Some(&json!(11)));
        assert_eq!(applied.data.map.get("a"), None);
    }

    #[test]
    fn no_op_writes_are_not_journaled_and_take_no_sequence() {
        let data = StateData::default()
            .apply(vec![set("a", json!("x"))], false, 42)
            .data;
        let applied = data.apply(
            vec![
                set("a", json!("x")),
                StateOp::Remove {
                    key: "missing".to_owned(),
                },
                set("also_missing", Value::Null),
                set("b", json!(true)),
            ],
            false,
            42,
        );
        assert_eq!(
            applied.mutations,
            vec![mutation(2, "b", Value::Null, json!(true), "set")]
        );
    }

    #[test]
    fn setting_null_removes_the_key() {
        let data = StateData::default()
            .apply(vec![set("a", json!(1))], false, 42)
            .data;
        let applied = data.apply(vec![set("a", Value::Null)], false, 42);
        assert_eq!(
            applied.mutations,
            vec![mutation(2, "a", json!(1), Value::Null, "set")]
        );
        assert!(applied.data.map.is_empty());
    }

    #[test]
    fn clear_prefix_removes_only_that_prefix_in_key_order() {
        let data = StateData::default()
            .apply(
                vec![
                    set("turn:b", json!(2)),
                    set("turn", json!(0)),
                    set("turn:a", json!(1)),
                    set("turns", json!(9)),
                ],
                false,
                42,
            )
            .data;
        let applied = data.apply(
            vec![StateOp::ClearPrefix {
                prefix: "turn:".to_owned(),
            }],
            true,
            42,
        );
        let mut expected = vec![
            mutation(5, "turn:a", json!(1), Value::Null, "clear_prefix"),
            mutation(6, "turn:b", json!(2), Value::Null, "clear_prefix"),
        ];
        for m in &mut expected {
            Arc::make_mut(m).delta = true;
        }
        assert_eq!(applied.mutations, expected);
        assert_eq!(applied.olds, vec![json!({"turn:a": 1, "turn:b": 2})]);
        let keys: Vec<_> = applied.data.map.keys().cloned().collect();
        assert_eq!(keys, vec!["turn", "turns"]);
    }

    #[test]
    fn lookup_falls_back_to_derived_for_unprefixed_keys_only() {
        let data = StateData::default()
            .apply(
                vec![
                    set("derived:risk", json!("high")),
                    set("derived:app:x", json!(1)),
                ],
                false,
                42,
            )
            .data;
        assert_eq!(data.lookup("risk"), Some(&json!("high")));
        assert_eq!(data.lookup("app:x"), None);
        let data = data.apply(vec![set("risk", json!("low"))], false, 42).data;
        assert_eq!(data.lookup("risk"), Some(&json!("low")), "direct key wins");
    }

    #[test]
    fn the_ring_keeps_the_last_entries() {
        let mut data = StateData::default();
        for i in 0..(RECENT_MUTATIONS as u64 + 10) {
            data = data.apply(vec![set("k", json!(i))], false, 42).data;
        }
        assert_eq!(data.recent.len(), RECENT_MUTATIONS);
        assert_eq!(data.recent.front().map(|m| m.sequence), Some(11));
        assert_eq!(
            data.recent.back().map(|m| m.sequence),
            Some(RECENT_MUTATIONS as u64 + 10)
        );
        assert_eq!(data.cursor(), RECENT_MUTATIONS as u64 + 10);
    }

    #[test]
    fn debug_shows_keys_not_values() {
        let op = set("app:token", json!("sk-secret"));
        assert_eq!(format!("{op:?}"), r#"Set { key: "app:token", .. }"#);
    }
}
