//! A session store that tells owners apart, in memory: one claim per id at a time (like
//! SQLite's lock file or PostgreSQL's advisory lock), so a run can check that a session's
//! id is free the moment its end is announced.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use reel_actors::persistence::{
    PersistenceError, SessionClaim, SessionPersistence, SessionSnapshot,
};
use reel_persistence::MemoryPersistence;

/// The id every simulated session runs under.
pub const SESSION_ID: &str = "sim-session";

/// Snapshots in memory, and the ids claimed now.
#[derive(Default)]
pub struct Claims {
    snapshots: MemoryPersistence,
    held: Mutex<BTreeSet<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Claims {
    /// Claims [`SESSION_ID`] and gives it up at once: `Err` with the refusal if it is held.
    pub async fn reclaim(self: &Arc<Self>) -> Result<(), String> {
        let claim = Arc::clone(self)
            .claim(SESSION_ID.to_owned())
            .await
            .map_err(|error| error.to_string())?;
        claim.release().await;
        Ok(())
    }
}

struct Claim {
    claims: Arc<Claims>,
    id: String,
}

impl SessionClaim for Claim {
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.claims.snapshots.save(&self.id, snapshot)
    }

    fn generation(&self) -> u64 {
        1
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        lock(&self.claims.held).remove(&self.id);
        Box::pin(async {})
    }
}

impl SessionPersistence for Claims {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.snapshots.save(session_id, snapshot)
    }

    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        self.snapshots.load(session_id)
    }

    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.snapshots.delete(session_id)
    }

    fn claim(
        self: Arc<Self>,
        session_id: String,
    ) -> BoxFuture<'static, Result<Box<dyn SessionClaim>, PersistenceError>> {
        Box::pin(async move {
            if !lock(&self.held).insert(session_id.clone()) {
                return Err(PersistenceError::Claimed {
                    session_id,
                    holder: "the simulated session".to_owned(),
                });
            }
            Ok(Box::new(Claim {
                claims: self,
                id: session_id,
            }) as Box<dyn SessionClaim>)
        })
    }
}
