//! [`StateView`]: what a flow reads of the session state, so the flow is testable alone.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

/// Read access to session state by key. Implemented for JSON maps; the session tree's
/// `State` gets one in the live wiring.
pub trait StateView {
    /// The value at `key`, if present.
    fn get(&self, key: &str) -> Option<&Value>;
}

impl StateView for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
}

impl StateView for BTreeMap<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        BTreeMap::get(self, key)
    }
}

impl<S: std::hash::BuildHasher> StateView for HashMap<String, Value, S> {
    fn get(&self, key: &str) -> Option<&Value> {
        HashMap::get(self, key)
    }
}

impl StateView for Value {
    /// A JSON object's members; any other value holds no key.
    fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.get(key))
    }
}
