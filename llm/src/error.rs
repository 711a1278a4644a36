//! What can go wrong with a model call, including a recorded or replayed one.

use std::path::PathBuf;

use reel_recorder::llm_tape::DocumentError;

use super::matching::RequestMismatch;

/// A model call that failed. Messages never contain an API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// No API key was configured.
    #[error("no API key for the Gemini API: set {variables}")]
    MissingApiKey {
        /// The environment variables that were looked at.
        variables: &'static str,
    },
    /// A variable that moves the host (`GOOGLE_GEMINI_BASE_URL`, `GOOGLE_VERTEX_BASE_URL`)
    /// is not a usable URL.
    #[error("{0}")]
    Endpoint(reel_protocol::EndpointError),
    /// The API answered with an error status.
    #[error("the model API answered {status} for {url}: {message}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The URL called, with any key removed.
        url: String,
        /// The API's error message (its `error.message` when it sent one).
        message: String,
    },
    /// The connection failed or broke.
    #[error("could not reach the model API at {url}: {reason}")]
    Transport {
        /// The URL called, with any key removed.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The API's answer could not be read.
    #[error("could not read the model's answer ({context}): {reason}")]
    Decode {
        /// Where in the answer (for example `event 3 of the stream`).
        context: String,
        /// What was wrong.
        reason: String,
    },
    /// The model blocked the prompt or the answer.
    #[error("the model refused the request: {reason}")]
    Blocked {
        /// The block reason the API gave.
        reason: String,
    },
    /// A per-call tape could not be recorded or replayed.
    #[error(transparent)]
    Tape(#[from] TapeError),
    /// A cassette could not record or answer a call.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    /// The recorded call failed, and its replay fails the same way, at the same point.
    #[error("the recorded call failed: {message}")]
    Recorded {
        /// The failure as it was recorded (the original error's message).
        message: String,
    },
    /// A processor around the model (a caller's request or response transform, such as
    /// `reel-compose`'s `RequestProcessor`) refused the call.
    #[error("{message}")]
    Processor {
        /// The processor's name.
        processor: String,
        /// What it said, whole (which end, which processor, why).
        message: String,
    },
}

/// A per-call tape that could not be recorded or replayed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TapeError {
    /// The tape file could not be read or written, or is not a valid tape.
    #[error(transparent)]
    File(#[from] DocumentError),
    /// The request is not the one the tape recorded (under the replay's match rules). No
    /// chunk was yielded.
    #[error("the request does not match the tape {tape}: {mismatch}")]
    Mismatch {
        /// The tape: its file, or its label when it was not read from a file.
        tape: String,
        /// Where the requests differ, with both values.
        mismatch: Box<RequestMismatch>,
    },
    /// A recorder writing one tape file was asked to record a second call.
    #[error(
        "the tape `{}` already holds a call; record each call to its own file (TapeSink::Folder)",
        path.display()
    )]
    AlreadyRecorded {
        /// The tape file.
        path: PathBuf,
    },
    /// The tape was abandoned before the call ended: its chunks are only the beginning of
    /// the answer. Replay yields them, then this.
    #[error("the tape {tape} is incomplete after {chunks} chunks: {reason}")]
    Incomplete {
        /// The tape: its file, or its label.
        tape: String,
        /// How many chunks it holds.
        chunks: usize,
        /// Why the recording stopped early.
        reason: String,
    },
    /// A replay speed that is not a positive number.
    #[error("the replay speed must be a positive number, not {speed}")]
    InvalidSpeed {
        /// The speed given.
        speed: f64,
    },
    /// The request could not be turned into JSON to be recorded or compared.
    #[error("the request could not be written as JSON: {reason}")]
    Encode {
        /// What the encoder said.
        reason: String,
    },
}

/// A cassette that could not record or answer a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The cassette file could not be read or written, is not a valid cassette, or would
    /// grow past its size cap (then the call's interaction is not added and the file is
    /// left as it was).
    #[error(transparent)]
    File(#[from] DocumentError),
    /// Replay mode, and no recorded interaction matches the request.
    #[error(
        "the cassette `{}` has no recorded answer for a request to {model}{}{}",
        path.display(),
        quoted(prompt),
        nearest_note(nearest)
    )]
    Miss {
        /// The cassette file.
        path: PathBuf,
        /// The model the request asked for.
        model: String,
        /// The request's last user text, shortened.
        prompt: Option<String>,
        /// The nearest recorded request (0-based interaction index) and where it differs.
        nearest: Option<(usize, Box<RequestMismatch>)>,
    },
    /// Replay mode, and every recorded answer to this request was already used (the
    /// session asked it more times than when it was recorded).
    #[error(
        "the cassette `{}` answered this request to {model}{} all {recorded} times it was recorded",
        path.display(),
        quoted(prompt)
    )]
    Exhausted {
        /// The cassette file.
        path: PathBuf,
        /// The model the request asked for.
        model: String,
        /// The request's last user text, shortened.
        prompt: Option<String>,
        /// How many interactions recorded this request.
        recorded: usize,
    },
    /// The call had to go to a live model, but the cassette's model has none behind it
    /// (see [`crate::Cassette::model`]).
    #[error(
        "the cassette `{}` must forward a request to {model}, but no live model is behind it",
        path.display()
    )]
    NoLiveModel {
        /// The cassette file.
        path: PathBuf,
        /// The model the request asked for.
        model: String,
    },
    /// The task recording a forwarded call failed.
    #[error("the cassette `{}` lost a forwarded call: its task {reason}", path.display())]
    Forward {
        /// The cassette file.
        path: PathBuf,
        /// What happened to the task (panicked, was cancelled).
        reason: String,
    },
}

/// ` ("the prompt")`, or nothing.
fn quoted(prompt: &Option<String>) -> String {
    prompt
        .as_ref()
        .map(|text| format!(" ({text:?})"))
        .unwrap_or_default()
}

/// `; the nearest recorded request (interaction 2) differs at …`, or nothing.
fn nearest_note(nearest: &Option<(usize, Box<RequestMismatch>)>) -> String {
    nearest
        .as_ref()
        .map(|(index, mismatch)| {
            format!("; the nearest recorded request (interaction {index}) differs {mismatch}")
        })
        .unwrap_or_default()
}

/// A cassette mode that is not `record`, `replay` or `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cassette mode `{given}`: use record, replay or auto")]
pub struct UnknownCassetteMode {
    /// The text given.
    pub given: String,
}
