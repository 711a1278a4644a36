//! [`SessionStartError`]: why a session could not start, in words that say what to fix.

use crate::audio::{JitterConfigError, VadConfigError};
use crate::persistence::PersistenceError;
use crate::phases::PhaseError;
use crate::state::StateError;

/// A session that could not be started. The texts say what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStartError {
    /// The phases do not form a valid machine.
    #[error("invalid phases: {0}")]
    Phases(#[from] PhaseError),
    /// A tool is declared both in the config and in the dispatcher.
    #[error(
        "tool `{name}` is declared twice: once in the session config and once in the dispatcher; keep one"
    )]
    DuplicateTool {
        /// The tool's name.
        name: String,
    },
    /// The actor tree could not be spawned.
    #[error("could not start the session's actors: {message}")]
    Spawn {
        /// The actor framework's error, as text.
        message: String,
    },
    /// The session ended before it was live.
    #[error("the session ended before it was live: {reason}")]
    NotLive {
        /// How it ended (as [`SessionEnd::reason`](crate::SessionEnd::reason)).
        reason: String,
    },
    /// Two extractors have the same name (they would write the same state key).
    #[error("two extractors are named `{name}`; each needs its own name (it is its state key)")]
    DuplicateExtractor {
        /// The name.
        name: String,
    },
    /// An extractor has an empty name.
    #[error(
        "extractor number {position} (from 1) has an empty name; name it (its name is its state key)"
    )]
    EmptyExtractorName {
        /// Its place among the extractors, from 1.
        position: usize,
    },
    /// Persistence was configured without a session id.
    #[error(
        "persistence is configured but the session has no id: call .session_id(..) so the \
         session knows which snapshot to load and save"
    )]
    MissingSessionId,
    /// The session id is invalid, or its snapshot could not be loaded.
    #[error("{0}")]
    Persistence(#[from] PersistenceError),
    /// The saved snapshot's phase is not one of the session's phases.
    #[error(
        "the snapshot of session {session_id:?} is in phase `{phase}`, which the session's \
         phases do not have; add the phase, or delete the snapshot to start afresh"
    )]
    UnknownSavedPhase {
        /// The session's id.
        session_id: String,
        /// The saved phase.
        phase: String,
    },
    /// The saved state could not be restored.
    #[error("could not restore the saved state: {0}")]
    RestoreState(StateError),
    /// The jitter buffer's config cannot work.
    #[error("invalid jitter buffer: {0}")]
    Jitter(#[from] JitterConfigError),
    /// The client-side voice activity detector's config cannot work.
    #[error("invalid client VAD: {0}")]
    ClientVad(#[from] VadConfigError),
}
