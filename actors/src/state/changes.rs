//! [`Changes`]: what a mutation cycle did to each key, net — its value before the cycle's
//! first change and after its last. The control lane gathers them at each commit point and
//! hands them to the session's [`StateReactor`](crate::reactor::StateReactor).

use std::collections::{BTreeMap, BTreeSet};

use reel_recorder::journal::StateMutation;
use serde_json::Value;

use crate::state::StateSnapshot;

/// One key's net change over a cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The value before the cycle's first change of the key (`null`: absent).
    pub old: Value,
    /// The value after its last change (`null`: removed).
    pub new: Value,
}

/// Every key a cycle changed, with its net change. A key changed several times counts once,
/// from its first `old` to its last `new`; one changed and changed back is listed with
/// `old == new` (a watcher's predicate decides whether that counts: none of the built-in
/// ones fires on it).
///
/// ```
/// use reel_actors::state::{Change, Changes, StateMutation};
/// use serde_json::{Value, json};
///
/// let set = |sequence, key: &str, old, new| StateMutation {
///     sequence,
///     key: key.to_owned(),
///     old,
///     new,
///     origin: "set".to_owned(),
///     timestamp_ms: 0,
///     delta: false,
/// };
/// let changes = Changes::from_journal(&[
///     set(1, "app:score", Value::Null, json!(1)),
///     set(2, "app:score", json!(1), json!(12)),
/// ]);
/// assert_eq!(changes.get("app:score"), Some(&Change { old: Value::Null, new: json!(12) }));
/// assert_eq!(changes.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    by_key: BTreeMap<String, Change>,
}

impl Changes {
    /// The net changes of a run of journal entries (oldest first).
    pub fn from_journal<'a>(mutations: impl IntoIterator<Item = &'a StateMutation>) -> Self {
        let mut by_key: BTreeMap<String, Change> = BTreeMap::new();
        for mutation in mutations {
            by_key
                .entry(mutation.key.clone())
                .and_modify(|change| change.new = mutation.new.clone())
                .or_insert_with(|| Change {
                    old: mutation.old.clone(),
                    new: mutation.new.clone(),
                });
        }
        Changes { by_key }
    }

    /// The net changes between two snapshots, over every key either holds: what the
    /// journal would have said (less the keys changed and changed back), for when its ring
    /// no longer reaches back to `before`.
    pub fn between(before: &StateSnapshot, after: &StateSnapshot) -> Self {
        let value = |snapshot: &StateSnapshot, key: &str| {
            snapshot.as_map().get(key).cloned().unwrap_or(Value::Null)
        };
        let keys: BTreeSet<&String> = before
            .as_map()
            .keys()
            .chain(after.as_map().keys())
            .collect();
        let by_key = keys
            .into_iter()
            .filter_map(|key| {
                let (old, new) = (value(before, key), value(after, key));
                (old != new).then(|| (key.clone(), Change { old, new }))
            })
            .collect();
        Changes { by_key }
    }

    /// The net change of `key`, if the cycle touched it.
    pub fn get(&self, key: &str) -> Option<&Change> {
        self.by_key.get(key)
    }

    /// Every key the cycle touched with its net change, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Change)> {
        self.by_key
            .iter()
            .map(|(key, change)| (key.as_str(), change))
    }

    /// How many keys the cycle touched.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether the cycle changed nothing.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::state::State;

    fn mutation(sequence: u64, key: &str, old: Value, new: Value) -> StateMutation {
        StateMutation {
            sequence,
            key: key.to_owned(),
            old,
            new,
            origin: "set".to_owned(),
            timestamp_ms: 0,
            delta: false,
        }
    }

    #[test]
    fn a_key_changed_several_times_has_its_first_old_and_last_new() {
        let journal = [
            mutation(1, "app:score", Value::Null, json!(1)),
            mutation(2, "app:tier", json!("a"), json!("b")),
            mutation(3, "app:score", json!(1), json!(5)),
            mutation(4, "app:score", json!(5), json!(12)),
            mutation(5, "app:tier", json!("b"), json!("a")),
        ];
        let changes = Changes::from_journal(&journal);
        assert_eq!(
            changes.get("app:score"),
            Some(&Change {
                old: Value::Null,
                new: json!(12)
            })
        );
        assert_eq!(
            changes.get("app:tier"),
            Some(&Change {
                old: json!("a"),
                new: json!("a")
            })
        );
        assert_eq!(changes.get("app:other"), None);
        assert!(Changes::from_journal(&[]).is_empty());
    }

    #[tokio::test]
    async fn between_snapshots_lists_only_keys_that_differ() {
        let state = State::new();
        state.set("app:a", 1).await.unwrap();
        state.set("app:b", 1).await.unwrap();
        let before = state.snapshot();
        state.set("app:a", 2).await.unwrap();
        state.set("app:b", 5).await.unwrap();
        state.set("app:b", 1).await.unwrap();
        state.remove("app:c").await.unwrap();
        state.set("derived:d", true).await.unwrap();
        let after = state.snapshot();
        let changes = Changes::between(&before, &after);
        assert_eq!(
            changes,
            Changes::from_journal(&[
                mutation(1, "app:a", json!(1), json!(2)),
                mutation(2, "derived:d", Value::Null, json!(true)),
            ])
        );
    }
}
