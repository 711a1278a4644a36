//! [`SessionClaim`]: one running session owns its id in a backend, so that two processes
//! never write one session's snapshots at once.
//!
//! A session claims its id before it loads its snapshot and holds the claim until its last
//! snapshot is written. A backend that can tell owners apart refuses a second claim while
//! the first is held ([`PersistenceError::Claimed`]), and *fences* its saves: each claim
//! takes the next generation number of the id, and a save is written only while its
//! claim's generation is still the id's latest ([`PersistenceError::Fenced`] otherwise).
//! So a process that lost its claim without knowing it (it was paused, its connection to
//! the database dropped and another process took over) cannot overwrite the newer owner's
//! snapshots: two writers are refused, never merged.
//!
//! The claim must end when its process does, however it ends: `reel-persistence`'s
//! `SqlitePersistence` holds an operating-system lock on a file per session (the kernel
//! drops it when the process dies, even by `SIGKILL`); its `PostgresPersistence` a
//! session-level advisory lock on its own database connection (the server drops it when
//! the connection closes). A backend that cannot tell owners apart (`FsPersistence`,
//! `MemoryPersistence`, and any implementation that keeps the default
//! [`SessionPersistence::claim`]) hands out an unfenced claim: last writer wins.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::SessionPersistence;
use super::error::PersistenceError;
use super::snapshot::SessionSnapshot;

/// A session's ownership of its id, and the only way it saves while it runs.
pub trait SessionClaim: Send + Sync {
    /// Saves `snapshot` as the session's, if this claim still owns the id.
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>>;

    /// The claim's generation: 1 for the first claim of an id, one more for each claim
    /// after; 0 for an unfenced claim.
    fn generation(&self) -> u64;

    /// Gives the id up (dropping the claim does too, as soon as it can).
    fn release(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// The claim of a backend that cannot tell owners apart: saves go straight to it.
pub(crate) struct Unfenced<S: SessionPersistence + ?Sized> {
    pub(crate) backend: Arc<S>,
    pub(crate) session_id: String,
}

impl<S: SessionPersistence + ?Sized> SessionClaim for Unfenced<S> {
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.backend.save(&self.session_id, snapshot)
    }

    fn generation(&self) -> u64 {
        0
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
