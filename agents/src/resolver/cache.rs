//! A resolver's TTL cache, keyed by its inputs' values, on the state's clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};

/// Results by inputs, each with the time it stops being fresh. Shared by clones.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    ttl: Duration,
    entries: Arc<Mutex<HashMap<String, (Value, u64)>>>,
}

impl Cache {
    pub(crate) fn new(ttl: Duration) -> Self {
        Cache {
            ttl,
            entries: Arc::default(),
        }
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The fresh result for `inputs` at `now_ms`.
    pub(crate) fn get(&self, inputs: &Map<String, Value>, now_ms: u64) -> Option<Value> {
        let key = key(inputs);
        let mut entries = self.lock();
        match entries.get(&key) {
            Some((value, until)) if now_ms < *until => Some(value.clone()),
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keeps `value` for `inputs` from `now_ms`.
    pub(crate) fn put(&self, inputs: &Map<String, Value>, value: Value, now_ms: u64) {
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        self.lock()
            .insert(key(inputs), (value, now_ms.saturating_add(ttl)));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (Value, u64)>> {
        // Each change is one insert or remove: a poisoned map is still whole.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The inputs as one string: their JSON, in the resolver's input order.
fn key(inputs: &Map<String, Value>) -> String {
    Value::Object(inputs.clone()).to_string()
}
