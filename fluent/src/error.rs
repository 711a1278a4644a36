//! What can go wrong: a chain that does not describe a valid session ([`BuildError`],
//! found before anything connects), a session that could not start ([`ConnectError`]), a
//! recording that could not be replayed ([`ReplayError`]). Every text says what to fix; the
//! texts of the runtime's own checks (phases, tools) are reused as they are.

use std::path::PathBuf;

use reel_actors::SessionStartError;
use reel_actors::audio::{JitterConfigError, VadConfigError};
use reel_actors::llm::CassetteError;
use reel_actors::phases::PhaseError;
use reel_persistence::{PersistenceError, SessionIdProblem};
use reel_protocol::EndpointError;
use reel_reactive::ReactiveError;
use reel_recorder::RecordError;
use reel_tools::DispatchError;

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
    /// The flow given to `govern`/`observe` does not compile (the error names the step
    /// and the fix).
    #[error("invalid flow: {0}")]
    Flow(#[from] reel_flow::FlowError),
    /// A watcher watches a `derived:` key that no computed value and no extractor of the
    /// chain writes, so it would never fire.
    #[error(
        "a watcher watches `{key}`, but no computed value `{}` is defined; defined computed \
         values: {defined:?}{}; add `.computed(\"{}\", ..)` or watch another key",
        derived_name(key),
        extracted_note(extracted),
        derived_name(key)
    )]
    WatchesUnknownComputed {
        /// The key watched, e.g. `derived:total`.
        key: String,
        /// The computed values the chain defines, in the order they were added.
        defined: Vec<String>,
        /// The fields the chain's typed extractors write under `derived:`, in the order
        /// declared (empty without extractors).
        extracted: Vec<String>,
    },
    /// A computed value depends on a `derived:` key that no computed value and no
    /// extractor writes, so it would read nothing there.
    #[error(
        "computed value `{computed}` depends on `{key}`, but no computed value `{}` is \
         defined; defined computed values: {defined:?}{}; add `.computed(\"{}\", ..)` or \
         fix the dependency",
        derived_name(key),
        extracted_note(extracted),
        derived_name(key)
    )]
    DependsOnUnknownComputed {
        /// The computed value.
        computed: String,
        /// The dependency, e.g. `derived:total`.
        key: String,
        /// The computed values the chain defines, in the order they were added.
        defined: Vec<String>,
        /// The fields the chain's typed extractors write under `derived:`, in the order
        /// declared (empty without extractors).
        extracted: Vec<String>,
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
    /// Two extractors have the same name: each writes its whole result under its name, so
    /// one would overwrite the other.
    #[error(
        "two extractors are named `{name}`, and an extractor's name is its state key; give \
         one another name (a typed extractor is named after its type: extract into another \
         type, or add an `LlmExtractor` with a name of its own with `.extractor(..)`)"
    )]
    DuplicateExtractor {
        /// The name.
        name: String,
    },
    /// An extractor given with `.extractor(..)` has an empty name.
    #[error(
        "extractor number {position} (from 1) has an empty name; name it (its name is its \
         state key)"
    )]
    EmptyExtractorName {
        /// Its place among the chain's extractors, from 1.
        position: usize,
    },
    /// Tools that must be confirmed, and no one to confirm them.
    #[error(
        "{} must be confirmed before {} run, but the chain has no \
         `.confirmation_provider(..)`: add one (a prompt, a policy, \
         `StaticConfirmation::allow_all()`)",
        tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "),
        if tools.len() == 1 { "it can" } else { "they can" }
    )]
    ConfirmationWithoutProvider {
        /// The tools marked with `ConfirmTool`.
        tools: Vec<String>,
    },
    /// `.persistence(..)` without `.session_id(..)`.
    #[error(
        "`.persistence(..)` needs a session id to know which snapshot to load and save: add \
         `.session_id(\"…\")`"
    )]
    PersistenceWithoutSessionId,
    /// `.session_id(..)` without `.persistence(..)`: the id would name nothing.
    #[error(
        "`.session_id({id:?})` names the snapshot a session saves and resumes from, but the \
         chain has no `.persistence(..)` and no wire log file to keep one beside: add one \
         (e.g. `SqlitePersistence::open(path)`), record with `.record_wire(path)`, or drop \
         the id"
    )]
    SessionIdWithoutPersistence {
        /// The id given.
        id: String,
    },
    /// The session id cannot name a snapshot.
    #[error(
        "invalid session id {id:?}: {problem}; give `.session_id(..)` an id a backend can store"
    )]
    InvalidSessionId {
        /// The id (cut to the longest id accepted).
        id: String,
        /// What is wrong with it.
        problem: SessionIdProblem,
    },
    /// `.llm_cassette(..)` keeps the cassette next to the wire log, and the chain records
    /// no wire log file.
    #[error(
        "`.llm_cassette(..)` keeps the cassette next to the wire log, but the chain records \
         no wire log file: add `.record_wire(\"session.wire.jsonl\")`, or name the cassette \
         with `.llm_cassette_at(path, mode)`"
    )]
    CassetteWithoutWireLog,
    /// `.jitter_buffer(..)` was given settings that cannot work (a 0 ms frame, a min
    /// target above the max, …).
    #[error("`.jitter_buffer(..)`: {0}")]
    Jitter(#[from] JitterConfigError),
    /// `.client_vad(..)` was given settings that cannot work.
    #[error("`.client_vad(..)`: {0}")]
    ClientVad(#[from] VadConfigError),
    /// `.client_vad(..)` turns the server's activity detection off, but a later
    /// `.vad(..)` turned it back on: the server would detect activity and refuse the
    /// client's `activityStart` / `activityEnd`.
    #[error(
        "`.client_vad(..)` needs the server's activity detection off, but `.vad(..)` turns it          on; drop `.vad(..)`, or give it `disabled: Some(true)`"
    )]
    ClientVadWithServerVad,
}

/// `; fields extractors write: [..]`, or nothing without extractors.
fn extracted_note(extracted: &[String]) -> String {
    if extracted.is_empty() {
        String::new()
    } else {
        format!("; fields extractors write: {extracted:?}")
    }
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
        /// `wire log`, `journal` or `flow` (a governed session's `X.flow.json`).
        what: &'static str,
        /// The file, as the chain or the caller named it.
        path: PathBuf,
        /// The underlying error.
        source: RecordError,
    },
    /// The model-call cassette (`llm_cassette`, `llm_cassette_at`) could not be opened.
    #[error("cannot open the model-call cassette: {source}")]
    Cassette {
        /// The cassette file.
        path: PathBuf,
        /// The underlying error.
        source: CassetteError,
    },
    /// The resume file an earlier recording left beside the wire log (`X.resume.json`)
    /// could not be removed. (Writing the snapshot the session resumes from is part of
    /// starting it: a failure there is a [`ConnectError::Start`].)
    #[error("cannot record the snapshot the session resumes from: {0}")]
    Resume(PersistenceError),
    /// The resolutions file beside the wire log (`X.resolved.jsonl`) could not be
    /// created.
    #[error("cannot record the resolvers' results: {0}")]
    Resolutions(#[from] reel_agents::ResolutionsError),
    /// The session did not start, or ended before it was live.
    #[error(transparent)]
    Start(#[from] SessionStartError),
    /// An MCP server of the chain ([`mcp`](crate::LiveBuilder::mcp)) could not be started,
    /// reached or listed; the error names it. Nothing was sent to the model.
    #[cfg(feature = "mcp")]
    #[error(transparent)]
    Mcp(#[from] reel_tools::mcp::McpError),
    /// The studio the chain streams to ([`studio`](crate::LiveBuilder::studio)) could not
    /// be reached, or the recording's name cannot be used there.
    #[error("cannot stream to the studio at {addr}: {reason}")]
    Studio {
        /// The address the chain gave.
        addr: String,
        /// What went wrong.
        reason: String,
    },
}

/// A recording that could not be replayed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The chain is invalid.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The chain has MCP servers, whose tools a replay declares as the recorded setup did,
    /// and the recording has no setup to take them from.
    #[error("cannot declare the MCP tools as recorded: {0}")]
    RecordedSetup(reel_replayer::tape_scan::MissingSetup),
    /// The wire log could not be opened.
    #[error("cannot replay the recording: {source}")]
    Tape {
        /// The file, as the chain or the caller named it.
        path: PathBuf,
        /// The underlying error.
        source: RecordError,
    },
    /// The cassette answering the replay's model calls could not be opened.
    #[error("cannot replay the model calls: {source}")]
    Cassette {
        /// The cassette file.
        path: PathBuf,
        /// The underlying error.
        source: CassetteError,
    },
    /// The journal recorded with the wire log (the chain's `.journal(path)`, or
    /// `X.journal.jsonl` beside `X.wire.jsonl`) could not be read.
    #[error("cannot read the recorded journal {}: {source}", path.display())]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// The underlying error.
        source: RecordError,
    },
    /// The snapshot the recorded session resumed from (`X.resume.json` beside
    /// `X.wire.jsonl`) could not be read.
    #[error("cannot resume the replay like the recording: {0}")]
    Resume(PersistenceError),
    /// The chain keeps its model calls in a cassette next to the wire log
    /// (`.llm_cassette(..)`), and there is none to replay them from.
    #[error(
        "the chain records its model calls with `.llm_cassette(..)`, but {}; replay the wire \
         log the cassette was recorded beside, or name it with `.llm_cassette_at(path, mode)`",
        match expected {
            Some(path) => format!("there is no cassette at `{}`", path.display()),
            None => "a recording in memory has no cassette beside it".to_owned(),
        }
    )]
    NoCassette {
        /// Where it was looked for (`None`: the recording is not a file).
        expected: Option<PathBuf>,
    },
    /// The resolutions recorded beside the wire log (`X.resolved.jsonl`) could not be
    /// read.
    #[error("cannot replay the resolvers' results: {0}")]
    Resolutions(#[from] reel_agents::ResolutionsError),
    /// The replay did not start (an empty tape, no setup handshake, the tree did not spawn).
    #[error(transparent)]
    Replay(#[from] reel_replayer::ReplayError),
}
