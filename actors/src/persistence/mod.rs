//! Session persistence: a running session's client-side state saved as a
//! [`SessionSnapshot`] at every turn boundary, and restored when a session with the same id
//! starts again (after a process restart, say).
//!
//! Give a session a backend and an id with
//! [`LiveSessionBuilder::persistence`](crate::LiveSessionBuilder::persistence) and
//! [`LiveSessionBuilder::session_id`](crate::LiveSessionBuilder::session_id). Then:
//!
//! - **At start**, if the backend holds a snapshot for the id: the state is restored (one
//!   batch, journaled like any write, stamped with the session time the session started
//!   at, or the recorded one in a replay: see [`RestoredSnapshot`]), the phase machine starts in the saved phase (its
//!   instruction is the setup's system instruction; the initial phase's `on_enter` does not
//!   run), the turn count goes on from the saved one, and the saved resumption handle is
//!   presented to the server in the setup (`sessionResumption.handle`). When the session is
//!   live, the control lane publishes [`LiveEvent::Resumed`](crate::LiveEvent::Resumed) and
//!   runs `on_resumed` before `on_connected`.
//! - **At each turn boundary** (the last step of the turn pipeline) the control lane hands a
//!   snapshot to a writer task and goes on: saves never stall the lane. The task saves in
//!   order, and when it falls behind it saves only the latest snapshot waiting, so a later
//!   snapshot is never overwritten by an earlier one.
//! - **When the control lane shuts down** (disconnect, server close) it saves a final
//!   snapshot and waits until it and every earlier one are written, so what changed since
//!   the last turn boundary is kept even if the process exits right after the session ends.
//!
//! This module is the interface the tree drives (decision 0043): [`SessionPersistence`],
//! [`SessionClaim`], [`SessionSnapshot`], [`RestoredSnapshot`], [`PersistenceError`] and
//! the saver task. The backends are in the `reel-persistence` crate: `FsPersistence` (a
//! JSON file per session, written atomically), `MemoryPersistence` (tests, in-process
//! restarts), `SqlitePersistence` (feature `sqlite`: one embedded database file, sessions
//! claimed by a lock per id) and `PostgresPersistence` (feature `postgres`: a fleet's
//! shared database, sessions claimed by an advisory lock); implement
//! [`SessionPersistence`] for anything else. A running session owns its id through a
//! [`SessionClaim`] (see [`claim`]): a second session with the same id is refused while
//! the first runs, and a stale owner's saves are fenced off.

pub mod claim;
mod error;
mod restored;
mod saver;
mod session_id;
mod snapshot;
mod time;

use std::sync::Arc;

use futures_util::future::BoxFuture;

pub use claim::SessionClaim;
use claim::Unfenced;
pub use error::PersistenceError;
pub use restored::RestoredSnapshot;
pub use session_id::{MAX_SESSION_ID_LEN, SessionIdProblem, check_session_id};
pub use snapshot::{SUMMARY_TURNS, SessionSnapshot};
pub use time::rfc3339_utc;

pub(crate) use saver::SnapshotSaver;

/// Where session snapshots are kept.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_actors::persistence::{PersistenceError, SessionPersistence, SessionSnapshot};
///
/// /// Keeps nothing (a backend for sessions that must not leave a trace).
/// struct Forgetful;
///
/// impl SessionPersistence for Forgetful {
///     fn save<'a>(&'a self, _id: &'a str, _snapshot: &'a SessionSnapshot)
///         -> BoxFuture<'a, Result<(), PersistenceError>> {
///         Box::pin(async { Ok(()) })
///     }
///     fn load<'a>(&'a self, _id: &'a str)
///         -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
///         Box::pin(async { Ok(None) })
///     }
///     fn delete<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
///         Box::pin(async { Ok(()) })
///     }
/// }
/// ```
pub trait SessionPersistence: Send + Sync + 'static {
    /// Saves `snapshot` as the session `session_id`'s, replacing any earlier one.
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>>;

    /// The session's snapshot, or `None` if it has none.
    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>>;

    /// Forgets the session's snapshot (nothing to forget is not an error).
    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>>;

    /// Claims `session_id` for a session about to start (see [`claim`]): the
    /// session loads its snapshot after this and saves only through the claim. The default
    /// cannot tell owners apart: it never refuses, and its saves are this backend's
    /// [`save`](SessionPersistence::save) (last writer wins).
    fn claim(
        self: Arc<Self>,
        session_id: String,
    ) -> BoxFuture<'static, Result<Box<dyn SessionClaim>, PersistenceError>> {
        Box::pin(async move {
            Ok(Box::new(Unfenced {
                backend: self,
                session_id,
            }) as Box<dyn SessionClaim>)
        })
    }
}
