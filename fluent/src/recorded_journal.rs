//! The journal a replayed recording was made with: what a replay's own journal is compared
//! with, entry by entry, to call it CLEAN ([`ReplayOutcome::verdict`](crate::ReplayOutcome::verdict)).
//!
//! Looked for the way a chain records: when the replay's wire log is the one this chain
//! records to (`.record_wire(path)`), the chain's `.journal(path)` file; otherwise
//! `X.journal.jsonl` beside `X.wire.jsonl`. A recording in memory, or a file with no
//! journal beside it, has none: its replay is judged on its frames alone.

use std::path::{Path, PathBuf};

use reel_recorder::journal::{StateMutation, read_journal};

use crate::beside::path_beside;
use crate::error::ReplayError;
use crate::recording::RecordingPart;

/// Where the journal recorded with the wire log `log` is, if it exists.
pub(crate) fn recorded_journal_path(recording: &RecordingPart, log: &Path) -> Option<PathBuf> {
    let own = match (recording.wire_path(), recording.journal_path()) {
        (Some(wire), Some(journal)) if wire == log => Some(journal.to_owned()),
        _ => None,
    };
    own.or_else(|| Some(path_beside(log, "journal.jsonl")))
        .filter(|path| path.exists())
}

/// Reads the whole journal at `path`.
pub(crate) fn read(path: PathBuf) -> Result<Vec<StateMutation>, ReplayError> {
    read_journal(&path).map_err(|source| ReplayError::Journal { path, source })
}
