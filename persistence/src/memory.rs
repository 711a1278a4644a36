//! [`MemoryPersistence`]: snapshots in memory.

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use reel_actors::persistence::PersistenceError;
use reel_actors::persistence::SessionPersistence;
use reel_actors::persistence::SessionSnapshot;
use reel_actors::persistence::check_session_id;

/// Snapshots kept in memory, lost when the process exits: for tests and in-process
/// restarts. Checks session ids like [`FsPersistence`](super::FsPersistence), so code
/// tested against it behaves the same on files.
#[derive(Debug, Default)]
pub struct MemoryPersistence {
    snapshots: Mutex<BTreeMap<String, SessionSnapshot>>,
}

impl MemoryPersistence {
    /// No snapshots.
    pub fn new() -> Self {
        MemoryPersistence::default()
    }

    /// The snapshot of `session_id` now, if any (without going through the async trait).
    pub fn get(&self, session_id: &str) -> Option<SessionSnapshot> {
        lock(&self.snapshots).get(session_id).cloned()
    }

    /// The ids of the sessions with a snapshot, in order.
    pub fn session_ids(&self) -> Vec<String> {
        lock(&self.snapshots).keys().cloned().collect()
    }
}

impl SessionPersistence for MemoryPersistence {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        let result = check_session_id(session_id).map(|()| {
            lock(&self.snapshots).insert(session_id.to_owned(), snapshot.clone());
        });
        Box::pin(async move { result })
    }

    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        let result = check_session_id(session_id).map(|()| self.get(session_id));
        Box::pin(async move { result })
    }

    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        let result = check_session_id(session_id).map(|()| {
            lock(&self.snapshots).remove(session_id);
        });
        Box::pin(async move { result })
    }
}

/// The map, even if a thread panicked holding it: every operation on it is one insert,
/// remove or read, so it is whole whatever happened.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
