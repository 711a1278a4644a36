//! [`ResolveError`] and [`ResolutionsError`]: why a resolution or its log failed, naming
//! the resolver or the file.

use std::path::PathBuf;

use reel_actors::state::StateError;

/// Why a [`Resolver`](crate::Resolver) produced no result. Every variant names the
/// resolver.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The source (the agent, the fetch, the model) failed; its message is also written
    /// to `{resolver}:error`.
    #[error("resolver `{resolver}` ({source_kind}) failed: {message}")]
    Failed {
        /// The resolver.
        resolver: String,
        /// `agent`, `fetch` or `llm`.
        source_kind: String,
        /// What the source reported.
        message: String,
    },
    /// An llm resolver's prompt names a state key that is not set.
    #[error(
        "resolver `{resolver}`: its prompt reads `{{{key}}}`, but state key `{key}` is not set"
    )]
    MissingInput {
        /// The resolver.
        resolver: String,
        /// The key the prompt reads.
        key: String,
    },
    /// Writing the result (or the error) to state failed.
    #[error("resolver `{resolver}`: writing state key `{key}` failed: {source}")]
    State {
        /// The resolver.
        resolver: String,
        /// The key written.
        key: String,
        /// The state's error.
        #[source]
        source: StateError,
    },
    /// A replay asked for a resolution the recording does not hold (the resolver ran
    /// more often than when recording, or is new): nothing is called in a replay, so
    /// there is no result.
    #[error(
        "resolver `{resolver}`: the recording holds no call {call} of it (a replay calls nothing)"
    )]
    NotRecorded {
        /// The resolver.
        resolver: String,
        /// Which call of it, from 1.
        call: u64,
    },
    /// A dispatched resolution's task ended before it delivered its result.
    #[error("resolver `{resolver}`: its dispatched task {what}")]
    Task {
        /// The resolver.
        resolver: String,
        /// `panicked`, `was cancelled`, or `was dropped before its recorded landing`.
        what: String,
    },
}

impl ResolveError {
    /// The name of the resolver the error happened in.
    pub fn resolver(&self) -> &str {
        match self {
            ResolveError::Failed { resolver, .. }
            | ResolveError::MissingInput { resolver, .. }
            | ResolveError::State { resolver, .. }
            | ResolveError::NotRecorded { resolver, .. }
            | ResolveError::Task { resolver, .. } => resolver,
        }
    }
}

/// Why a resolutions file could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolutionsError {
    /// The file could not be created, written or read.
    #[error("resolutions file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the file is not a resolution.
    #[error("resolutions file {} line {line}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
}
