//! Reading the recordings named on the command line: wire logs and journals, streamed,
//! with every problem turned into a [`CliError`] naming the file (and line).
//!
//! Before the JSON lines reader sees a file, its first bytes are looked at: a file of
//! binary data (bytes that are not UTF-8) is reported as such, rather than as a torn or
//! corrupt line, which would send the user looking for the wrong problem. NUL bytes are not
//! taken for binary data: they are what a power loss leaves in a file that was being
//! written, and the reader reports the first NUL-filled line ([`CliError::NulFilled`]).
//!
//! With `--salvage`, a damaged file is read up to its first bad line (NUL-filled or
//! corrupt), with a warning on stderr saying how many entries were read and where reading
//! stopped.
//!
//! A compressed input (gzip or Zstandard, told by its first bytes: `X.wire.jsonl.gz`,
//! `X.journal.jsonl.zst`, or piped) is decompressed as it is read, before any of this.
//!
//! Every input is opened once and read once, front to back: the bytes looked at for binary
//! data are the first bytes the reader then reads. So a pipe works as well as a file
//! (`reel show <(cat log)`, a FIFO, `-` for standard input); see decision 0023.

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reel_recorder::compressed::decompressing;
use reel_recorder::journal::StateMutation;
use reel_recorder::jsonl::{JsonlReader, JsonlWarning};
use reel_recorder::salvage::{Damage, Salvaged};
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

/// Prints on stderr where a salvaging read stopped.
fn warn_salvaged(salvaged: &Salvaged, path: &str) {
    let entries = super::plural(salvaged.entries, "entry", "entries");
    eprintln!(
        "reel: warning: {path}: salvaged {entries}; line {} and after are not read (it is {})",
        salvaged.line,
        match &salvaged.damage {
            Damage::NulFilled => "NUL-filled",
            Damage::Corrupt { .. } => "corrupt",
        }
    );
}

/// The argument that names standard input where one file is read.
pub const STDIN: &str = "-";

/// The bytes of one input, read once: the sniffed head, then the rest of the stream.
pub type InputReader = BufReader<Box<dyn Read + Send>>;

/// The read buffer of an input: a two-hour log is hundreds of megabytes, read in 256 KiB
/// calls instead of 8 KiB ones (90,000 `read`s became 2,800 for `reel replay`).
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// Opens `path` (standard input for [`STDIN`]) once and checks that it starts as text:
/// fails with [`CliError::Binary`] if it does not (NUL bytes are text here: a NUL-filled
/// region is reported by the reader, with its line). The reader returned yields every
/// byte of the input, the sniffed ones included.
pub fn open_text(path: &str, what: &'static str) -> Result<InputReader, CliError> {
    let read_error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    let raw: Box<dyn Read + Send> = if path == STDIN {
        Box::new(std::io::stdin())
    } else if reel::recordings::ObjectUrl::is_object_url(path) {
        object_reader(path)?
    } else {
        Box::new(File::open(path).map_err(read_error)?)
    };
    // A gzip or Zstandard recording (`.wire.jsonl.gz`, `.zst`, or piped) is read as the
    // text it holds: the compression is told by its first bytes.
    let mut source = decompressing(raw).map_err(read_error)?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut source)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    let binary = match std::str::from_utf8(&head) {
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
    let whole: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(source));
    Ok(BufReader::with_capacity(READ_BUFFER_BYTES, whole))
}

/// The object at the `s3://` URL `path`, streamed ([`reel::recordings::open`]).
fn object_reader(path: &str) -> Result<Box<dyn Read + Send>, CliError> {
    Ok(reel::recordings::open(path, super::s3_endpoint())?)
}

/// Whether `path` names a regular file (following symlinks), which can be read again;
/// standard input, a pipe or a FIFO cannot.
pub fn is_regular_file(path: &str) -> bool {
    path != STDIN && std::fs::metadata(path).is_ok_and(|meta| meta.is_file())
}

/// Fails when more than one of `paths` is [`STDIN`]: standard input can be read once.
pub fn one_stdin<'a>(paths: impl IntoIterator<Item = &'a str>) -> Result<(), CliError> {
    let count = paths.into_iter().filter(|path| *path == STDIN).count();
    if count > 1 {
        return Err(CliError::StdinTwice { count });
    }
    Ok(())
}

/// A wire log streamed entry by entry, checked (sequence order, emptiness), counting the
/// entries read into a shared counter (for progress).
pub struct WireInput {
    path: String,
    reader: WireLogReader<InputReader>,
    read: Arc<AtomicU64>,
    warned: usize,
    salvage_reported: bool,
}

impl WireInput {
    /// Opens the wire log at `path` (standard input for [`STDIN`]), once.
    pub fn open(path: &str) -> Result<WireInput, CliError> {
        let lines = open_text(path, "wire log")?;
        let reader = WireLogReader::new(JsonlReader::new(lines, path));
        Ok(WireInput {
            path: path.to_owned(),
            reader,
            read: Arc::default(),
            warned: 0,
            salvage_reported: false,
        })
    }

    /// With `salvage`, reads a damaged log up to its first bad line (see the module doc).
    pub fn salvaging(mut self, salvage: bool) -> Self {
        if salvage {
            self.reader = self.reader.salvaging();
        }
        self
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
        if let Some(salvaged) = self.reader.salvaged()
            && !std::mem::replace(&mut self.salvage_reported, true)
        {
            warn_salvaged(salvaged, &self.path);
        }
        let next = next?;
        self.read.fetch_add(1, Ordering::Relaxed);
        Some(next.map_err(|error| CliError::from_record(&self.path, "wire log", error)))
    }
}

/// The journal at `path` (standard input for [`STDIN`]), opened once, line by line.
pub fn open_journal(
    path: &str,
    salvage: bool,
) -> Result<JsonlReader<StateMutation, InputReader>, CliError> {
    let reader = JsonlReader::new(open_text(path, "journal")?, path);
    Ok(if salvage { reader.salvaging() } else { reader })
}

/// Reads the whole journal at `path` into each key's final value; with `salvage`, up to its
/// first bad line. A torn last line, and where salvaging stopped, are warned about on stderr.
/// With `keep`, the entries read are kept too (for an input that cannot be read twice).
pub fn read_journal(
    path: &str,
    salvage: bool,
    mut keep: Option<&mut Vec<StateMutation>>,
) -> Result<JournalFinal, CliError> {
    let mut reader = open_journal(path, salvage)?;
    let mut folded = JournalFinal::new();
    for mutation in reader.by_ref() {
        let mutation = mutation.map_err(|error| CliError::from_record(path, "journal", error))?;
        folded.apply(&mutation);
        if let Some(kept) = keep.as_mut() {
            kept.push(mutation);
        }
    }
    for warning in reader.warnings() {
        warn(warning, path);
    }
    if let Some(salvaged) = reader.salvaged() {
        warn_salvaged(salvaged, path);
    }
    Ok(folded)
}

#[cfg(test)]
mod tests {
    /// A log is read in 256 KiB calls: with `BufReader`'s default 8 KiB, a two-hour log
    /// took 90,000 `read`s.
    #[test]
    fn a_log_is_read_in_large_calls() {
        let path = std::env::temp_dir().join(format!(
            "reel-input-buffer-{}.wire.jsonl",
            std::process::id()
        ));
        std::fs::write(&path, "{}\n").unwrap();
        let reader = super::open_text(path.to_str().unwrap(), "wire log").unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(reader.capacity(), 256 * 1024);
    }
}
