//! # reel-persistence
//!
//! Where a reel session's snapshots are kept. The session tree (`reel-actors`) saves a
//! [`SessionSnapshot`] at every turn boundary through the interface in
//! `reel_actors::persistence` ([`SessionPersistence`], [`SessionClaim`]); this crate holds
//! the stores that implement it (decision 0043):
//!
//! - [`FsPersistence`]: a JSON file per session, written atomically;
//! - [`MemoryPersistence`]: in memory, for tests and in-process restarts (a replay keeps
//!   its snapshots here);
//! - `SqlitePersistence` (feature `sqlite`): one embedded database file, sessions claimed
//!   by an operating-system lock per id;
//! - `PostgresPersistence` (feature `postgres`): a fleet's shared database, sessions
//!   claimed by an advisory lock.
//!
//! The interface is re-exported here, so one `use reel_persistence::…` finds both. Give a
//! session a store with `Live::builder().persistence(..)` (or
//! `LiveSessionBuilder::persistence`) and an id with `.session_id(..)`.

// Library code never unwraps: a failed save is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod fs;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use fs::FsPersistence;
pub use memory::MemoryPersistence;
#[cfg(feature = "postgres")]
pub use postgres::PostgresPersistence;
#[cfg(feature = "sqlite")]
pub use sqlite::SqlitePersistence;

/// The interface the session tree drives, re-exported from `reel_actors::persistence`.
pub use reel_actors::persistence::{
    MAX_SESSION_ID_LEN, PersistenceError, RestoredSnapshot, SUMMARY_TURNS, SessionClaim,
    SessionIdProblem, SessionPersistence, SessionSnapshot, check_session_id, claim, rfc3339_utc,
};
