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
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A stored snapshot does not read as one.
    #[error(
        "the snapshot of session {session_id:?} at {location} is not a session snapshot: {source}"
    )]
    Corrupt {
        /// The session.
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
        /// The session.
        session_id: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A custom backend failed.
    #[error("the {backend} backend failed for session {session_id:?}: {source}")]
    Backend {
        /// The backend (`redis`, `firestore`, …).
        backend: String,
        /// The session.
        session_id: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
