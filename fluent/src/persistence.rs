//! Session persistence in the chain: a backend and a session id, checked together, and the
//! callback that runs when a session resumes ([`reel_persistence`]).
//!
//! With both, the session saves a [`SessionSnapshot`] at every turn boundary and when it
//! ends, and a session started later with the same id resumes from it: the state restored,
//! the saved phase entered (its instruction in the setup), the turn count going on, and
//! the saved resumption handle presented to the server.
//!
//! A replay never touches the backend: it runs on an in-memory one under the same id, so
//! replaying cannot read or overwrite a real snapshot, and the snapshot the replay saved
//! can be compared ([`ReplayedSession::saved_snapshot`](crate::ReplayedSession::saved_snapshot)).
//! That backend starts empty — unless the recorded session resumed from a snapshot: a
//! session recording to `X.wire.jsonl` writes the snapshot it resumes from to
//! `X.resume.json` before it starts, and a replay of `X.wire.jsonl` starts with it.

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use reel_actors::callbacks::CallbackMode;
use reel_actors::state::State;
use reel_persistence::{PersistenceError, SessionPersistence, SessionSnapshot, check_session_id};

use crate::builder::LiveBuilder;
use crate::error::BuildError;
use crate::extraction::pair;

/// The persistence part of a [`LiveBuilder`].
#[derive(Clone, Default)]
pub(crate) struct PersistencePart {
    backend: Option<Arc<dyn SessionPersistence>>,
    session_id: Option<String>,
}

impl fmt::Debug for PersistencePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Persistence")
            .field("backend", &self.backend.is_some())
            .field("session_id", &self.session_id)
            .finish()
    }
}

/// A checked backend and id.
#[derive(Clone)]
pub(crate) struct Persisting {
    pub(crate) backend: Arc<dyn SessionPersistence>,
    pub(crate) session_id: String,
}

/// The file the sessions of a chain with an id and no backend are kept in, beside its
/// wire log (feature `sqlite`, on by default).
#[cfg(feature = "sqlite")]
pub const DEFAULT_SESSIONS_DB: &str = "reel-sessions.sqlite3";

impl PersistencePart {
    /// The backend and the id, `None` without persistence; a backend without an id, or an
    /// id no backend can store, is a mistake. An id without a backend gets the default one
    /// when the chain records to a wire log file: `reel-sessions.sqlite3` beside it
    /// (opened when the session starts); otherwise it is a mistake too.
    pub(crate) fn checked(
        &self,
        wire_log: Option<&Path>,
    ) -> Result<Option<Persisting>, BuildError> {
        let default = match (&self.backend, wire_log) {
            (None, Some(log)) => default_backend(log),
            _ => None,
        };
        match (self.backend.as_ref().or(default.as_ref()), &self.session_id) {
            (None, None) => Ok(None),
            (Some(_), None) if self.backend.is_some() => {
                Err(BuildError::PersistenceWithoutSessionId)
            }
            (Some(_), None) => Ok(None),
            (None, Some(id)) => Err(BuildError::SessionIdWithoutPersistence { id: id.clone() }),
            (Some(backend), Some(id)) => {
                if let Err(PersistenceError::InvalidSessionId { id, problem }) =
                    check_session_id(id)
                {
                    return Err(BuildError::InvalidSessionId { id, problem });
                }
                Ok(Some(Persisting {
                    backend: Arc::clone(backend),
                    session_id: id.clone(),
                }))
            }
        }
    }
}

impl LiveBuilder {
    /// Saves the session's snapshots to `backend` — at every turn boundary and when the
    /// session ends — and resumes the session from its snapshot there, if it has one.
    /// Needs a [`session_id`](LiveBuilder::session_id): the chain is refused without one.
    ///
    /// Recorded with [`record_wire("X.wire.jsonl")`](LiveBuilder::record_wire), a session
    /// that resumes writes the snapshot it resumes from to `X.resume.json`, before it
    /// starts; [`replay("X.wire.jsonl")`](LiveBuilder::replay) resumes from it in turn
    /// (on an in-memory backend: the replay never touches this one).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_persistence::FsPersistence;
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .session_resume(true)
    ///     .persistence(Arc::new(FsPersistence::new("sessions")))
    ///     .session_id("caller-42");
    /// assert!(builder.validate().is_ok());
    ///
    /// let error = Live::builder()
    ///     .persistence(Arc::new(FsPersistence::new("sessions")))
    ///     .validate()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "`.persistence(..)` needs a session id to know which snapshot to load and save: \
    ///      add `.session_id(\"…\")`"
    /// );
    /// ```
    pub fn persistence(mut self, backend: Arc<dyn SessionPersistence>) -> Self {
        self.persistence.backend = Some(backend);
        self
    }

    /// The id the session's snapshots are saved under: 1 to 128 ASCII letters, digits,
    /// `-`, `_` or `.`, not starting with a dot. Only meaningful with
    /// [`persistence`](LiveBuilder::persistence): the chain is refused without it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_persistence::MemoryPersistence;
    /// use reel_fluent::Live;
    ///
    /// let error = Live::builder()
    ///     .persistence(Arc::new(MemoryPersistence::new()))
    ///     .session_id("../caller")
    ///     .validate()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "invalid session id \"../caller\": it starts with a dot; give `.session_id(..)` \
    ///      an id a backend can store"
    /// );
    /// ```
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.persistence.session_id = Some(id.into());
        self
    }

    /// The session was restored from its snapshot: the snapshot, and the state, already
    /// restored. Runs once, when the session is live, before
    /// [`on_connected`](LiveBuilder::on_connected); the control lane waits for it, so it
    /// finishes before anything else is handled.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_resumed(|snapshot, state| async move {
    ///     let name: Option<String> = state.get("app:name");
    ///     println!("back in {} after {} turns, with {name:?}", snapshot.phase, snapshot.turn_count);
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_resumed<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(SessionSnapshot, State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_resumed = Some(pair(CallbackMode::Blocking, f));
        self
    }
}

/// The default backend of a chain recording to `log`: SQLite beside it.
#[cfg(feature = "sqlite")]
fn default_backend(log: &Path) -> Option<Arc<dyn SessionPersistence>> {
    let dir = log.parent().unwrap_or(Path::new(""));
    Some(Arc::new(lazy_sqlite::LazySqlite::new(
        dir.join(DEFAULT_SESSIONS_DB),
    )))
}

/// Without the `sqlite` feature there is no default backend.
#[cfg(not(feature = "sqlite"))]
fn default_backend(_log: &Path) -> Option<Arc<dyn SessionPersistence>> {
    None
}

#[cfg(feature = "sqlite")]
mod lazy_sqlite {
    //! The default backend, opened when a session first needs it: checking a chain creates
    //! no file.

    use std::path::PathBuf;
    use std::sync::{Arc, Mutex, PoisonError};

    use futures_util::future::BoxFuture;
    use reel_persistence::{
        PersistenceError, SessionClaim, SessionPersistence, SessionSnapshot, SqlitePersistence,
    };

    pub(super) struct LazySqlite {
        path: PathBuf,
        opened: Mutex<Option<SqlitePersistence>>,
    }

    impl LazySqlite {
        pub(super) fn new(path: PathBuf) -> LazySqlite {
            LazySqlite {
                path,
                opened: Mutex::new(None),
            }
        }

        fn get(&self) -> Result<SqlitePersistence, PersistenceError> {
            let mut opened = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(backend) = opened.as_ref() {
                return Ok(backend.clone());
            }
            let backend = SqlitePersistence::open(&self.path)?;
            *opened = Some(backend.clone());
            Ok(backend)
        }
    }

    impl SessionPersistence for LazySqlite {
        fn save<'a>(
            &'a self,
            session_id: &'a str,
            snapshot: &'a SessionSnapshot,
        ) -> BoxFuture<'a, Result<(), PersistenceError>> {
            Box::pin(async move { self.get()?.save(session_id, snapshot).await })
        }

        fn load<'a>(
            &'a self,
            session_id: &'a str,
        ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
            Box::pin(async move { self.get()?.load(session_id).await })
        }

        fn delete<'a>(
            &'a self,
            session_id: &'a str,
        ) -> BoxFuture<'a, Result<(), PersistenceError>> {
            Box::pin(async move { self.get()?.delete(session_id).await })
        }

        fn claim(
            self: Arc<Self>,
            session_id: String,
        ) -> BoxFuture<'static, Result<Box<dyn SessionClaim>, PersistenceError>> {
            Box::pin(async move { Arc::new(self.get()?).claim(session_id).await })
        }
    }
}
