//! What can go wrong: a chain that does not describe a valid session ([`BuildError`],
//! found before anything connects), a session that could not start ([`ConnectError`]), a
//! recording that could not be replayed ([`ReplayError`]). Every text says what to fix; the
//! texts of the runtime's own checks (phases, tools) are reused as they are.

use std::path::PathBuf;

use reel_actors::SessionStartError;
use reel_actors::phases::PhaseError;
use reel_actors::reactive::ReactiveError;
use reel_actors::tools::DispatchError;
use reel_protocol::EndpointError;
use reel_recorder::RecordError;

/// The chain does not describe a valid session. Found by
/// [`LiveBuilder::validate`](crate::LiveBuilder::validate), and by every way to start,
/// before anything connects or any file is created.
///
/// ```
/// use reel_fluent::{BuildError, Live};
///
/// let error = Live::builder()
///     .phase("greeting", |p| p.transition("booking", |_| true))
///     .validate()
///     .unwrap_err();
/// assert!(matches!(error, BuildError::Phases(_)));
/// assert_eq!(
///     error.to_string(),
///     "invalid phases: phase `greeting` has a transition to `booking`, which is not defined; \
///      defined phases: [\"greeting\"]"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The phases do not form a valid machine: a transition to a phase that does not
    /// exist, an initial phase not defined, two phases with one name, a terminal phase with
    /// transitions, a phase allowing a tool that is not declared.
    #[error("invalid phases: {0}")]
    Phases(#[from] PhaseError),
    /// A tool call of the chain failed: a name registered twice, a name the Live API does
    /// not accept, a setting for a tool that is not registered.
    #[error("`.{call}`: {source}")]
    Tool {
        /// The call, e.g. `tool_background("get_weather")`.
        call: String,
        /// What is wrong, in the dispatcher's words.
        source: DispatchError,
    },
    /// The session config and the tools disagree (a function declared both through
    /// [`LiveBuilder::configure`](crate::LiveBuilder::configure) and as a tool).
    #[error(transparent)]
    Session(SessionStartError),
    /// The watchers, computed values or temporal patterns were refused by the runtime's
    /// check: computed values in a cycle, a computed value or temporal pattern name used
    /// twice, a rate or turn pattern with a count of 0.
    #[error("invalid reactive rules: {0}")]
    Reactive(#[from] ReactiveError),
    /// A watcher watches a `derived:` key that no computed value of the chain writes, so
    /// it would never fire.
    #[error(
        "a watcher watches `{key}`, but no computed value `{}` is defined; defined computed \
         values: {defined:?}; add `.computed(\"{}\", ..)` or watch another key",
        derived_name(key),
        derived_name(key)
    )]
    WatchesUnknownComputed {
        /// The key watched, e.g. `derived:total`.
        key: String,
        /// The computed values the chain defines, in the order they were added.
        defined: Vec<String>,
    },
    /// A computed value depends on a `derived:` key that no computed value writes, so it
    /// would read nothing there.
    #[error(
        "computed value `{computed}` depends on `{key}`, but no computed value `{}` is \
         defined; defined computed values: {defined:?}; add `.computed(\"{}\", ..)` or fix \
         the dependency",
        derived_name(key),
        derived_name(key)
    )]
    DependsOnUnknownComputed {
        /// The computed value.
        computed: String,
        /// The dependency, e.g. `derived:total`.
        key: String,
        /// The computed values the chain defines, in the order they were added.
        defined: Vec<String>,
    },
    /// A watcher's threshold is not a finite number (NaN or infinite), so it could never be
    /// crossed.
    #[error(
        "the watcher on `{key}` has threshold {threshold}, which can never be crossed; give a \
         finite number"
    )]
    InvalidThreshold {
        /// The key watched.
        key: String,
        /// The threshold given.
        threshold: f64,
    },
}

/// `total` for `derived:total`.
fn derived_name(key: &str) -> &str {
    key.strip_prefix(reel_actors::state::prefix::DERIVED)
        .unwrap_or(key)
}

impl From<SessionStartError> for BuildError {
    fn from(error: SessionStartError) -> Self {
        match error {
            SessionStartError::Phases(phases) => BuildError::Phases(phases),
            SessionStartError::Reactive(reactive) => BuildError::Reactive(reactive),
            other => BuildError::Session(other),
        }
    }
}

/// A session that could not be started.
///
/// ```
/// use reel_fluent::{BuildError, ConnectError};
/// use reel_actors::phases::PhaseError;
///
/// let error = ConnectError::from(BuildError::Phases(PhaseError::Duplicate { name: "a".into() }));
/// assert_eq!(
///     error.to_string(),
///     "invalid phases: phase `a` is defined twice; give each phase a unique name"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The chain is invalid (nothing was connected, no file was created).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The environment does not say where to connect (for
    /// [`connect_from_env`](crate::LiveBuilder::connect_from_env)).
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// A recording file (`record_wire`, `journal`) could not be created.
    #[error("cannot record the {what}: {source}; check that its folder exists and is writable")]
    Recording {
        /// `wire log` or `journal`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: RecordError,
    },
    /// The session did not start, or ended before it was live.
    #[error(transparent)]
    Start(#[from] SessionStartError),
}

/// A recording that could not be replayed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The chain is invalid.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The wire log could not be opened.
    #[error("cannot replay the recording: {source}")]
    Tape {
        /// The file.
        path: PathBuf,
        /// Why.
        source: RecordError,
    },
    /// The replay did not start (an empty tape, no setup handshake, the tree did not spawn).
    #[error(transparent)]
    Replay(#[from] reel_replayer::ReplayError),
}
