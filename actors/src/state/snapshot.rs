//! [`StateSnapshot`]: the whole state at one instant, taken in O(1).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::data::StateData;

/// The state at one point of its journal. Taking one is O(1) (it shares the persistent
/// map); later writes never show through it.
#[derive(Clone)]
pub struct StateSnapshot {
    data: Arc<StateData>,
}

impl StateSnapshot {
    pub(crate) fn new(data: Arc<StateData>) -> Self {
        StateSnapshot { data }
    }

    /// The value at `key` (with the derived fallback of [`super::State::get_raw`]).
    pub fn get_raw(&self, key: &str) -> Option<&Value> {
        self.data.lookup(key)
    }

    /// The value at `key` as `T`, if present and of that shape.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.get_raw(key)?).ok()
    }

    /// Whether [`StateSnapshot::get_raw`] finds a value.
    pub fn contains(&self, key: &str) -> bool {
        self.get_raw(key).is_some()
    }

    /// Every key, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.data.map.keys().map(String::as_str)
    }

    /// Every key and value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        self.data.map.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.data.map.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.data.map.is_empty()
    }

    /// The sequence number of the last mutation this snapshot includes (0: none).
    pub fn cursor(&self) -> u64 {
        self.data.cursor()
    }

    /// The persistent map itself.
    pub fn as_map(&self) -> &imbl::OrdMap<String, Value> {
        &self.data.map
    }

    /// The state as one JSON object, keys in order (for golden files and diffs).
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.iter()
                .map(|(k, v)| (k.to_owned(), v.clone()))
                .collect::<Map<_, _>>(),
        )
    }
}

// Keys only: values may hold anything a tool stored, and a Debug line can reach a log.
impl std::fmt::Debug for StateSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSnapshot")
            .field("cursor", &self.cursor())
            .field("keys", &self.data.map.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
