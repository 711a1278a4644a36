//! [`Changes`]: what a mutation cycle did to each key, net — its value before the cycle's
//! first change and after its last.

use std::collections::BTreeMap;

use reel_recorder::journal::StateMutation;
use serde_json::Value;

use crate::state::StateSnapshot;

/// One key's net change over a cycle.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    /// The value before the cycle's first change of the key (`null`: absent).
    pub(crate) old: Value,
    /// The value after its last change (`null`: removed).
    pub(crate) new: Value,
}

/// Every key a cycle changed, with its net change. A key changed several times counts once,
/// from its first `old` to its last `new`; one changed and changed back is listed with
/// `old == new`, and only predicates that accept that (none of the built-in ones) fire.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Changes {
    by_key: BTreeMap<String, Change>,
}

impl Changes {
    /// The net changes of a run of journal entries (oldest first).
    pub(crate) fn from_journal<'a>(mutations: impl IntoIterator<Item = &'a StateMutation>) -> Self {
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

    /// The net changes of `keys` between two snapshots: what the journal would have said,
    /// for when its ring no longer reaches back to `before`.
    pub(crate) fn between<'k>(
        before: &StateSnapshot,
        after: &StateSnapshot,
        keys: impl IntoIterator<Item = &'k str>,
    ) -> Self {
        let value = |snapshot: &StateSnapshot, key: &str| {
            snapshot.as_map().get(key).cloned().unwrap_or(Value::Null)
        };
        let by_key = keys
            .into_iter()
            .filter_map(|key| {
                let (old, new) = (value(before, key), value(after, key));
                (old != new).then(|| (key.to_owned(), Change { old, new }))
            })
            .collect();
        Changes { by_key }
    }

    /// The net change of `key`, if the cycle touched it.
    pub(crate) fn get(&self, key: &str) -> Option<&Change> {
        self.by_key.get(key)
    }

    /// Whether the cycle changed nothing.
    pub(crate) fn is_empty(&self) -> bool {
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
        let changes = Changes::between(
            &before,
            &after,
            ["app:a", "app:b", "app:c", "d", "derived:d"],
        );
        assert_eq!(
            changes,
            Changes::from_journal(&[
                mutation(1, "app:a", json!(1), json!(2)),
                mutation(2, "derived:d", Value::Null, json!(true)),
            ])
        );
    }
}
