//! Reading the recordings named on the command line: wire logs and journals, streamed,
//! with every problem turned into a [`CliError`] naming the file (and line).
//!
//! Before the JSON lines reader sees a file, its first bytes are looked at: a file of
//! binary data (a NUL byte, or bytes that are not UTF-8) is reported as such, rather than
//! as a torn or corrupt line, which would send the user looking for the wrong problem.

use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reel_recorder::journal::{StateMutation, open_journal};
use reel_recorder::jsonl::{JsonlReader, JsonlWarning};
use reel_recorder::wire_log::WireEntry;
use reel_recorder::wire_read::WireLogReader;
use reel_replayer::journal_diff::JournalFinal;

use super::CliError;

/// How much of a file is looked at to tell binary data from text.
const SNIFF_BYTES: usize = 8 * 1024;

/// Prints a warning on stderr.
pub fn warn(warning: &JsonlWarning, path: &str) {
    eprintln!(
        "reel: warning: {path}: torn last line {} skipped (a write was cut short)",
        warning.line
    );
}

/// Fails with [`CliError::Binary`] if the start of `path` is not text.
fn check_text(path: &str, what: &'static str) -> Result<(), CliError> {
    let read_error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(read_error)?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    file.take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    let binary = head.contains(&0)
        || match std::str::from_utf8(&head) {
            Ok(_) => false,
            // A character cut by the end of the sample is not a sign of binary data.
            Err(error) => error.error_len().is_some(),
        };
    if binary {
        return Err(CliError::Binary {
            path: path.to_owned(),
            what,
        });
    }
    Ok(())
}

/// A wire log streamed entry by entry, checked (sequence order, emptiness), counting the
/// entries read into a shared counter (for progress).
pub struct WireInput {
    path: String,
    reader: WireLogReader,
    read: Arc<AtomicU64>,
    warned: usize,
}

impl WireInput {
    /// Opens the wire log at `path`.
    pub fn open(path: &str) -> Result<WireInput, CliError> {
        check_text(path, "wire log")?;
        let reader = WireLogReader::open(path)
            .map_err(|error| CliError::from_record(path, "wire log", error))?;
        Ok(WireInput {
            path: path.to_owned(),
            reader,
            read: Arc::default(),
            warned: 0,
        })
    }

    /// Counts entries into `counter` as they are read.
    pub fn counting(mut self, counter: Arc<AtomicU64>) -> Self {
        self.read = counter;
        self
    }
}

impl Iterator for WireInput {
    type Item = Result<WireEntry, CliError>;

    /// The next entry. What the reader tolerates (a torn last line) is warned about on
    /// stderr as soon as it is met, before any error it leads to (an empty log).
    fn next(&mut self) -> Option<Self::Item> {
        let next = self.reader.next();
        for warning in &self.reader.warnings()[self.warned..] {
            warn(warning, &self.path);
        }
        self.warned = self.reader.warnings().len();
        let next = next?;
        self.read.fetch_add(1, Ordering::Relaxed);
        Some(next.map_err(|error| CliError::from_record(&self.path, "wire log", error)))
    }
}

/// Reads the whole journal at `path` into each key's final value. A torn last line is
/// warned about on stderr.
pub fn read_journal(path: &str) -> Result<JournalFinal, CliError> {
    check_text(path, "journal")?;
    let mut reader: JsonlReader<StateMutation, BufReader<File>> =
        open_journal(path).map_err(|error| CliError::from_record(path, "journal", error))?;
    let mut folded = JournalFinal::new();
    for mutation in reader.by_ref() {
        let mutation = mutation.map_err(|error| CliError::from_record(path, "journal", error))?;
        folded.apply(&mutation);
    }
    for warning in reader.warnings() {
        warn(warning, path);
    }
    Ok(folded)
}
