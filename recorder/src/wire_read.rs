//! Reading a wire log back: raw streaming with [`open_wire_log`], or checked with
//! [`WireLogReader`] and [`read_wire_log`].
//!
//! Both stream one line at a time (bounded memory), skip a torn last line with a warning,
//! and report any other bad line as [`RecordError::Corrupt`] with the file and line. The
//! checked reader also rejects what a replay cannot use: sequence numbers that do not
//! strictly increase ([`RecordError::OutOfOrder`]) and a log with no entry
//! ([`RecordError::Empty`]). Either can be made to salvage a damaged log (a NUL-filled
//! tail after a power loss): it then reads the entries before the first bad line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::RecordError;
use crate::jsonl::{JsonlReader, JsonlWarning};
use crate::salvage::Salvaged;
use crate::wire_log::WireEntry;

/// Streams the wire log at `path`, one entry at a time, without checking sequence order.
pub fn open_wire_log(
    path: impl AsRef<Path>,
) -> Result<JsonlReader<WireEntry, BufReader<File>>, RecordError> {
    JsonlReader::open(path)
}

/// Reads and checks the whole wire log at `path` (see [`WireLogReader`]). A torn last line
/// is skipped with a warning in the log; use [`WireLogReader::open`] to see the warnings or
/// to stream a long log.
pub fn read_wire_log(path: impl AsRef<Path>) -> Result<Vec<WireEntry>, RecordError> {
    WireLogReader::open(path)?.collect()
}

/// A streaming wire-log reader that checks the log as it goes.
///
/// On top of [`JsonlReader`]'s rules it fails with [`RecordError::OutOfOrder`] at the first
/// entry whose sequence number is not greater than the one before, and, at the end, with
/// [`RecordError::Empty`] when the log held no entry. After an error it yields nothing more.
///
/// ```
/// use reel_recorder::jsonl::JsonlReader;
/// use reel_recorder::wire_read::WireLogReader;
/// use reel_recorder::RecordError;
///
/// let text = concat!(
///     r#"{"seq":2,"dir":"out","ts_ms":1,"payload_b64":""}"#, "\n",
///     r#"{"seq":1,"dir":"in","ts_ms":2,"payload_b64":""}"#, "\n",
/// );
/// let mut reader = WireLogReader::new(JsonlReader::new(text.as_bytes(), "x.wire.jsonl"));
/// assert_eq!(reader.next().unwrap()?.seq, 2);
/// assert!(matches!(
///     reader.next(),
///     Some(Err(RecordError::OutOfOrder { line: 2, seq: 1, previous: 2, .. }))
/// ));
/// # Ok::<(), RecordError>(())
/// ```
pub struct WireLogReader<R = BufReader<File>> {
    lines: JsonlReader<WireEntry, R>,
    previous: Option<u64>,
    done: bool,
}

impl WireLogReader<BufReader<File>> {
    /// Opens the wire log at `path` for checked streaming.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        open_wire_log(path).map(WireLogReader::new)
    }
}

impl<R: BufRead> WireLogReader<R> {
    /// Checks the entries `lines` yields.
    pub fn new(lines: JsonlReader<WireEntry, R>) -> Self {
        WireLogReader {
            lines,
            previous: None,
            done: false,
        }
    }

    /// The file being read, as named in errors.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// What the reader tolerated so far: at most one torn last line.
    pub fn warnings(&self) -> &[JsonlWarning] {
        self.lines.warnings()
    }

    /// Makes the reader salvage a damaged log: the entries before its first NUL-filled or
    /// corrupt line are read, and the log ends there (see [`JsonlReader::salvaging`]). A log
    /// damaged from its first line is still an error: the damage, not
    /// [`RecordError::Empty`].
    pub fn salvaging(mut self) -> Self {
        self.lines = self.lines.salvaging();
        self
    }

    /// Where a [`salvaging`](WireLogReader::salvaging) reader stopped, once it has.
    pub fn salvaged(&self) -> Option<&Salvaged> {
        self.lines.salvaged()
    }

    fn fail(&mut self, error: RecordError) -> Option<Result<WireEntry, RecordError>> {
        self.done = true;
        Some(Err(error))
    }
}

impl<R: BufRead> Iterator for WireLogReader<R> {
    type Item = Result<WireEntry, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.lines.next() {
            Some(Ok(entry)) => match self.previous {
                Some(previous) if entry.seq <= previous => {
                    let error = RecordError::OutOfOrder {
                        path: self.lines.path().to_path_buf(),
                        line: self.lines.lines_read(),
                        seq: entry.seq,
                        previous,
                    };
                    self.fail(error)
                }
                _ => {
                    self.previous = Some(entry.seq);
                    Some(Ok(entry))
                }
            },
            Some(Err(error)) => self.fail(error),
            None if self.previous.is_none() => {
                let error = match self.lines.salvaged() {
                    Some(salvaged) => salvaged.to_error(),
                    None => RecordError::Empty {
                        path: self.lines.path().to_path_buf(),
                    },
                };
                self.fail(error)
            }
            None => {
                self.done = true;
                None
            }
        }
    }
}

impl<R> std::fmt::Debug for WireLogReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireLogReader")
            .field("previous", &self.previous)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
