//! Session persistence in the chain: a backend and a session id, checked together, and the
//! callback that runs when a session resumes ([`reel_actors::persistence`]).
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
use std::sync::Arc;

use reel_actors::callbacks::CallbackMode;
use reel_actors::persistence::{
    PersistenceError, SessionPersistence, SessionSnapshot, check_session_id,
};
use reel_actors::state::State;

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

impl PersistencePart {
    /// The backend and the id, `None` without persistence; one without the other, or an
    /// id no backend can store, is a mistake.
    pub(crate) fn checked(&self) -> Result<Option<Persisting>, BuildError> {
        match (&self.backend, &self.session_id) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(BuildError::PersistenceWithoutSessionId),
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
    /// use reel_actors::persistence::FsPersistence;
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
    /// use reel_actors::persistence::MemoryPersistence;
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
