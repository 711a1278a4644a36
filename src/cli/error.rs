//! [`CliError`]: what ends a command with exit code 2 (bad input), as one line naming the
//! file, and the line where there is one.

use reel_recorder::RecordError;
use reel_replayer::ReplayError;

/// An error that ends the command with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Recordings in object storage could not be listed or read (no such bucket, no such
    /// key, access refused, a partial object).
    #[error("{0}")]
    Recordings(#[from] reel::recordings::RecordingsError),
    /// A `--shard` value that names no shard.
    #[error("{0}")]
    Shard(#[from] reel::recordings::ShardError),
    /// A cassette (or another JSON document reel reads whole) that cannot be read: the
    /// message names the file and the JSON path.
    #[error("{0}")]
    Document(#[from] reel_recorder::llm_tape::DocumentError),
    /// The demo could not run.
    #[error("the demo could not run: {0}")]
    Demo(String),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A wire log with no entry.
    #[error("{path}: empty wire log (no entries); is it the right file?")]
    Empty {
        /// The file.
        path: String,
    },
    /// A file of binary data where JSON lines were expected.
    #[error("{path}: not a {what}: it holds binary data, not JSON lines")]
    Binary {
        /// The file.
        path: String,
        /// `wire log` or `journal`.
        what: &'static str,
    },
    /// A line that is not a valid entry, anywhere but at the torn end of the file.
    #[error("{path}: corrupt at line {line}: not a valid {what} entry ({message})")]
    Corrupt {
        /// The file.
        path: String,
        /// 1-based line.
        line: u64,
        /// `wire log` or `journal`.
        what: &'static str,
        /// What the parser said (string literals blanked).
        message: String,
    },
    /// A NUL-filled line: the file was cut off there, as a power loss leaves it.
    #[error(
        "{path}: line {line} is NUL-filled: the {what} was cut off there (a power loss leaves zeros where unwritten entries were); --salvage reads the entries before it"
    )]
    NulFilled {
        /// The file.
        path: String,
        /// 1-based number of the first NUL-filled line.
        line: u64,
        /// `wire log` or `journal`.
        what: &'static str,
    },
    /// Sequence numbers that do not increase.
    #[error(
        "{path}: out of order at line {line}: sequence number {seq} does not follow {previous}"
    )]
    OutOfOrder {
        /// The file.
        path: String,
        /// 1-based line.
        line: u64,
        /// The entry's sequence number.
        seq: u64,
        /// The one before.
        previous: u64,
    },
    /// A wire log whose first outbound frame is not a setup.
    #[error("{path}: no setup frame: {found}; a session's wire log starts with its setup")]
    NoSetup {
        /// The file.
        path: String,
        /// What was found instead: `the first frame the client sent (seq 3) is not a
        /// setup`, or `the client sent no frame`.
        found: String,
    },
    /// A journal whose mutations fall outside the wire log's time range.
    #[error(
        "{journal}: journal of another session: its mutations span {journal_range}, the wire log {log} spans {log_range}"
    )]
    ForeignJournal {
        /// The journal.
        journal: String,
        /// Its time range, readable.
        journal_range: String,
        /// The wire log.
        log: String,
        /// Its time range, readable.
        log_range: String,
    },
    /// `reel flow check LOG` without a flow file, and no `X.flow.json` beside the log (a
    /// governed session writes its flow there when it serializes).
    #[error(
        "{log}: no flow file given and no {expected} beside the log; give the flow: reel flow check LOG FLOW.json"
    )]
    NoFlowBeside {
        /// The wire log.
        log: String,
        /// The file looked for.
        expected: String,
    },
    /// `--journal` was given with more than one log to replay.
    #[error("--journal compares one session's journal: give one wire log with it, not {logs} logs")]
    JournalNeedsOneLog {
        /// How many logs were given.
        logs: usize,
    },
    /// Standard input (`-`) named for more than one input: it can be read once.
    #[error(
        "`-` (standard input) is given {count} times: standard input can be read once, name the other inputs as files"
    )]
    StdinTwice {
        /// How many inputs were `-`.
        count: usize,
    },
    /// A directory given to `reel replay` that holds no wire log: zero recordings is not a
    /// passing test suite.
    #[error("{dir}: no wire logs (`*.wire.jsonl`) in this directory or below: nothing to replay")]
    NoRecordings {
        /// The directory.
        dir: String,
    },
    /// The JUnit report could not be put into XML.
    #[error("cannot render the JUnit report {path}: {source}")]
    RenderJunit {
        /// The file it was for.
        path: String,
        /// The XML writer's error.
        source: quick_junit::SerializeError,
    },
    /// The JUnit report could not be written.
    #[error("cannot write the JUnit report {path}: {source}")]
    WriteJunit {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The snapshot the recorded session resumed from (`X.resume.json` beside the wire
    /// log) could not be read.
    #[error("{path}: cannot resume the replay like the recording: {source}")]
    Resume {
        /// The wire log.
        path: String,
        /// What was wrong with the resume file.
        source: reel_persistence::PersistenceError,
    },
    /// The replay could not run.
    #[error("{path}: {source}")]
    Replay {
        /// The wire log.
        path: String,
        /// The underlying error.
        source: ReplayError,
    },
    /// A wire log's audio could not be rendered within the WAV's bounds (a damaged
    /// timestamp, audio over the size limit); nothing over the bound was written.
    #[error("{path}: cannot render the audio: {source}")]
    Wav {
        /// The wire log.
        path: String,
        /// What was out of bounds.
        source: reel_replayer::export::WavError,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// Standard output could not be written (other than a closed pipe, which ends the
    /// command quietly).
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
    /// `reel show --turn N` for a turn the log does not have.
    #[error("{log}: no turn {turn}: {}", turns_held(*.turns, *.last))]
    NoSuchTurn {
        /// The wire log.
        log: String,
        /// The turn asked for.
        turn: u64,
        /// The model turns the log completed.
        turns: u64,
        /// The last turn that has frames (one more than `turns` when frames follow the
        /// last `turnComplete`).
        last: u64,
    },
    /// `reel show --kind K` when no frame (of the turn asked for) has a kind starting with K.
    #[error(
        "{log}: no frame {}has a kind starting with \"{kind}\"; its kinds: {}",
        turn.map_or_else(String::new, |t| format!("of turn {t} ")),
        if kinds.is_empty() { "none" } else { kinds.as_str() }
    )]
    NoSuchKind {
        /// The wire log.
        log: String,
        /// The kind asked for.
        kind: String,
        /// The turn asked for, if one was.
        turn: Option<u64>,
        /// The kinds the frames (of that turn) have, in the order first seen.
        kinds: String,
    },
    /// `reel decode` given a wire log: it reads bare frames; `reel show` reads wire logs.
    #[error(
        "{path}: a wire log (line {line} is a recorded entry, not a frame); `reel decode` reads bare frames, one JSON message a line; to read a wire log: reel show {path}"
    )]
    DecodeWireLog {
        /// The file.
        path: String,
        /// The line that is a wire-log entry.
        line: usize,
    },
    /// A flow file that does not read or does not compile.
    #[error("{path}: {source}")]
    Flow {
        /// The flow file.
        path: String,
        /// What is wrong with it.
        source: reel_flow::FlowError,
    },
    /// `reel eval`: a suite that cannot run, inputs that hold no recording.
    #[error("{0}")]
    Eval(#[from] reel_eval::EvalError),
    /// `reel eval`: the judge's cassette or model cannot be opened.
    #[error("{path}: the judge: {message}")]
    Judge {
        /// The judge's cassette.
        path: String,
        /// Why.
        message: String,
    },
    /// A report could not be written as JSON.
    #[error("cannot write the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The turns a log holds, for [`CliError::NoSuchTurn`]: "it has 3 turns (1 to 3)", naming
/// the frames after the last `turnComplete` as a turn of their own when there are some.
fn turns_held(turns: u64, last: u64) -> String {
    let counted = match turns {
        0 => "it has no complete model turn".to_owned(),
        1 => "it has 1 model turn".to_owned(),
        n => format!("it has {n} model turns"),
    };
    match (last, last > turns) {
        (0, _) => format!("{counted} and no frames"),
        (1, _) => format!("{counted}; --turn takes 1"),
        (last, true) => format!(
            "{counted}; --turn takes 1 to {last} (turn {last}: the frames after the last turnComplete)"
        ),
        (last, false) => format!("{counted}; --turn takes 1 to {last}"),
    }
}

impl CliError {
    /// The error of reading `path` (a `what`: `wire log` or `journal`).
    pub fn from_record(path: &str, what: &'static str, error: RecordError) -> CliError {
        let path = path.to_owned();
        match error {
            RecordError::Io { source, .. } => CliError::Read { path, source },
            RecordError::Corrupt { line, message, .. } => CliError::Corrupt {
                path,
                line,
                what,
                message,
            },
            RecordError::OutOfOrder {
                line,
                seq,
                previous,
                ..
            } => CliError::OutOfOrder {
                path,
                line,
                seq,
                previous,
            },
            RecordError::Empty { .. } => CliError::Empty { path },
            RecordError::NulFilled { line, .. } => CliError::NulFilled { path, line, what },
            other => CliError::Read {
                path,
                source: std::io::Error::other(other.to_string()),
            },
        }
    }
}
