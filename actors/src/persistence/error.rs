//! [`PersistenceError`]: why a snapshot could not be saved, loaded or deleted.

use std::path::PathBuf;

use super::session_id::SessionIdProblem;

/// A persistence operation that failed. Messages name the session and, for files, the path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PersistenceError {
    /// The session id cannot name a snapshot.
    #[error("invalid session id {id:?}: {problem}")]
    InvalidSessionId {
        /// The id (cut to [`super::MAX_SESSION_ID_LEN`] characters).
        id: String,
        /// What is wrong with it.
        problem: SessionIdProblem,
    },
    /// A file operation failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done: `create the directory`, `write`, `rename into place`,
        /// `read`, `delete`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A stored snapshot does not read as one.
    #[error(
        "the snapshot of session {session_id:?} at {location} is not a session snapshot: {source}"
    )]
    Corrupt {
        /// The session's id.
        session_id: String,
        /// Where it is stored (a path, or the backend's name for it).
        location: String,
        /// What the JSON reader said.
        #[source]
        source: serde_json::Error,
    },
    /// The snapshot could not be encoded as JSON.
    #[error("could not encode the snapshot of session {session_id:?}: {source}")]
    Encode {
        /// The session's id.
        session_id: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// Another session holds the id (it is running, in this process or another).
    #[error(
        "session {session_id:?} is running elsewhere ({holder}); two sessions cannot share an id: \
         wait for it to end, or give this one another id"
    )]
    Claimed {
        /// The session's id.
        session_id: String,
        /// Who holds it, as far as the backend can tell (`the lock file …`, `a PostgreSQL
        /// connection`).
        holder: String,
    },
    /// A save by a claim that is no longer the id's latest: another process took the
    /// session over, and this one's snapshot was refused rather than merged.
    #[error(
        "session {session_id:?} was taken over by a newer claim (generation {current}, this one \
         {generation}); its snapshot was not written"
    )]
    Fenced {
        /// The session's id.
        session_id: String,
        /// The refused claim's generation.
        generation: u64,
        /// The id's latest generation.
        current: u64,
    },
    /// A custom backend failed.
    #[error("the {backend} backend failed for session {session_id:?}: {source}")]
    Backend {
        /// The backend (`redis`, `firestore`, …).
        backend: String,
        /// The session's id.
        session_id: String,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
