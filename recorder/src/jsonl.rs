//! JSON Lines, the shape of every reel recording: one JSON value per line.
//!
//! [`JsonlReader`] streams entries one line at a time, so a two-hour recording is read in
//! the memory of its longest line. It is strict about corruption and lenient about exactly
//! one thing: a crash mid-write leaves a *torn* last line (not valid JSON, no final newline),
//! which is skipped with a warning instead of failing the whole file. A line holding NUL
//! bytes (what a power loss leaves) is [`RecordError::NulFilled`], and a reader made with
//! [`JsonlReader::salvaging`] stops before the first bad line instead of failing (see
//! [`crate::salvage`]). [`JsonlWriter`] is the matching buffered writer; it writes each
//! entry as one whole line.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::RecordError;
use crate::json_fault::parser_message;
use crate::salvage::{Damage, Salvaged};

/// The longest line a reader accepts by default: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Something a reader tolerated but the caller may want to know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonlWarning {
    /// The file the warning is about.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: u64,
    /// What was tolerated.
    pub message: String,
}

impl fmt::Display for JsonlWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` line {}: {}",
            self.path.display(),
            self.line,
            self.message
        )
    }
}

/// A streaming reader of JSON Lines, yielding one `T` per non-blank line.
///
/// - blank lines (only whitespace) are skipped;
/// - a torn last line (it does not parse because it ends early, and the file does not end
///   with a newline) ends the stream with a warning: logged with `tracing::warn!` and kept
///   in [`JsonlReader::warnings`];
/// - a line with a NUL byte in it (a NUL-filled region, even at the very end) is
///   [`RecordError::NulFilled`] with its line number;
/// - any other bad line is [`RecordError::Corrupt`] with its line number, and a read failure
///   is [`RecordError::Io`]. After an error the reader yields nothing more;
/// - made [`salvaging`](JsonlReader::salvaging), the reader ends the stream at a NUL-filled
///   or corrupt line instead, and [`JsonlReader::salvaged`] says where.
///
/// ```
/// use reel_recorder::jsonl::JsonlReader;
///
/// let text = b"{\"a\":1}\n\n{\"a\":2}\n{\"a\":";
/// let mut reader = JsonlReader::<serde_json::Value, _>::new(&text[..], "example.jsonl");
/// let values: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
/// assert_eq!(values, vec![serde_json::json!({"a": 1}), serde_json::json!({"a": 2})]);
/// assert_eq!(reader.warnings().len(), 1); // the torn `{"a":`
/// ```
pub struct JsonlReader<T, R = BufReader<File>> {
    reader: R,
    path: PathBuf,
    line: u64,
    max_line_bytes: usize,
    buf: Vec<u8>,
    done: bool,
    warnings: Vec<JsonlWarning>,
    /// Entries yielded so far.
    entries: u64,
    /// Whether a bad line ends the stream instead of failing it.
    salvage: bool,
    salvaged: Option<Salvaged>,
    entry: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> JsonlReader<T, BufReader<File>> {
    /// Opens the file at `path` for streaming.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JsonlReader::new(BufReader::new(file), path))
    }
}

impl<T: DeserializeOwned, R: BufRead> JsonlReader<T, R> {
    /// Reads from `reader`; `path` names the source in errors and warnings.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        JsonlReader {
            reader,
            path: path.into(),
            line: 0,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            buf: Vec::new(),
            done: false,
            warnings: Vec::new(),
            entries: 0,
            salvage: false,
            salvaged: None,
            entry: PhantomData,
        }
    }

    /// Makes the reader salvage a damaged file: at the first NUL-filled or corrupt line the
    /// stream ends (as if the file ended there) instead of failing, with a warning in the
    /// log, and [`JsonlReader::salvaged`] reports how many entries were read and where it
    /// stopped. Read failures ([`RecordError::Io`]) are still errors.
    ///
    /// ```
    /// use reel_recorder::jsonl::JsonlReader;
    /// use reel_recorder::salvage::Damage;
    ///
    /// let text = b"[1]\n[2]\n[3\0\0\0\0\0\0";
    /// let mut reader = JsonlReader::<Vec<u8>, _>::new(&text[..], "x.jsonl").salvaging();
    /// let read: Vec<_> = reader.by_ref().collect::<Result<_, _>>()?;
    /// assert_eq!(read, vec![vec![1], vec![2]]);
    /// let salvaged = reader.salvaged().unwrap();
    /// assert_eq!((salvaged.entries, salvaged.line, &salvaged.damage), (2, 3, &Damage::NulFilled));
    /// # Ok::<(), reel_recorder::RecordError>(())
    /// ```
    pub fn salvaging(mut self) -> Self {
        self.salvage = true;
        self
    }

    /// Where a [`salvaging`](JsonlReader::salvaging) reader stopped, once it has: `None`
    /// while it reads, and at the end of a file with no bad line.
    pub fn salvaged(&self) -> Option<&Salvaged> {
        self.salvaged.as_ref()
    }

    /// Sets the longest line accepted (default [`DEFAULT_MAX_LINE_BYTES`]); a longer line is
    /// [`RecordError::Corrupt`]. This is what bounds the reader's memory.
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// The file being read, as named in errors.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many lines have been read so far (blank lines included).
    pub fn lines_read(&self) -> u64 {
        self.line
    }

    /// What the reader tolerated so far: at most one torn last line.
    pub fn warnings(&self) -> &[JsonlWarning] {
        &self.warnings
    }

    /// Ends the stream at the current line, which is damaged: an error, or when salvaging,
    /// the end of the stream with a report.
    fn damaged(&mut self, damage: Damage) -> Option<Result<T, RecordError>> {
        self.done = true;
        let salvaged = Salvaged {
            path: self.path.clone(),
            entries: self.entries,
            line: self.line,
            damage,
        };
        if !self.salvage {
            return Some(Err(salvaged.to_error()));
        }
        tracing::warn!("{salvaged}");
        self.salvaged = Some(salvaged);
        None
    }

    fn corrupt(&mut self, message: String) -> Option<Result<T, RecordError>> {
        self.damaged(Damage::Corrupt { message })
    }
}

impl<T: DeserializeOwned, R: BufRead> Iterator for JsonlReader<T, R> {
    type Item = Result<T, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            // Read one more byte than allowed, to tell "too long" from "exactly the limit".
            let limit = u64::try_from(self.max_line_bytes)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            match self
                .reader
                .by_ref()
                .take(limit)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(0) => self.done = true,
                Ok(_) => {}
                Err(source) => {
                    self.done = true;
                    return Some(Err(RecordError::Io {
                        path: self.path.clone(),
                        source,
                    }));
                }
            }
            if self.done {
                return None;
            }
            self.line += 1;
            let terminated = self.buf.last() == Some(&b'\n');
            let content_len = self.buf.len() - usize::from(terminated);
            if content_len > self.max_line_bytes {
                if self.buf.contains(&0) {
                    return self.damaged(Damage::NulFilled);
                }
                let max = self.max_line_bytes;
                return self.corrupt(format!("line is longer than {max} bytes"));
            }
            let content = self.buf.trim_ascii();
            if content.is_empty() {
                continue;
            }
            match serde_json::from_slice::<T>(content) {
                Ok(entry) => {
                    self.entries += 1;
                    return Some(Ok(entry));
                }
                // JSON never holds a raw NUL, so only a line that failed is looked at. A
                // NUL-filled end is not a torn line: entries are missing, not half of one.
                Err(_) if content.contains(&0) => return self.damaged(Damage::NulFilled),
                Err(error) if !terminated && (error.is_eof() || error.is_syntax()) => {
                    self.done = true;
                    let warning = JsonlWarning {
                        path: self.path.clone(),
                        line: self.line,
                        message: format!(
                            "torn last line skipped (a write was cut short): {}",
                            describe(&error)
                        ),
                    };
                    tracing::warn!(
                        path = %warning.path.display(),
                        line = warning.line,
                        "{}",
                        warning.message
                    );
                    self.warnings.push(warning);
                    return None;
                }
                Err(error) => return self.corrupt(describe(&error)),
            }
        }
        None
    }
}

/// The parser's complaint with its column, string literals blanked so that no recorded
/// value reaches an error or a log line.
fn describe(error: &serde_json::Error) -> String {
    // The line is always 1 here: say the column only.
    format!("{}, at column {}", parser_message(error), error.column())
}

/// A buffered JSON Lines writer: each entry is serialized whole, then written as one line.
///
/// Nothing reaches the underlying writer until the buffer fills or [`JsonlWriter::flush`]
/// is called; dropping the writer flushes it, ignoring errors (call `flush` to see them).
#[derive(Debug)]
pub struct JsonlWriter<W: Write> {
    out: BufWriter<W>,
    scratch: Vec<u8>,
}

impl JsonlWriter<File> {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JsonlWriter::new(file))
    }
}

impl<W: Write> JsonlWriter<W> {
    /// Writes to `inner`, through a buffer.
    pub fn new(inner: W) -> Self {
        JsonlWriter {
            out: BufWriter::new(inner),
            scratch: Vec::new(),
        }
    }

    /// Appends `entry` as one line.
    pub fn write<T: Serialize + ?Sized>(&mut self, entry: &T) -> std::io::Result<()> {
        self.scratch.clear();
        serde_json::to_writer(&mut self.scratch, entry)?;
        self.scratch.push(b'\n');
        self.out.write_all(&self.scratch)
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        self.out.get_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlong_line_is_corrupt() {
        let text = b"[1]\n[1,2,3,4]\n";
        let mut reader = JsonlReader::<Vec<u8>, _>::new(&text[..], "x").with_max_line_bytes(5);
        assert_eq!(reader.next().unwrap().unwrap(), vec![1]);
        match reader.next().unwrap() {
            Err(RecordError::Corrupt { line, message, .. }) => {
                assert_eq!(line, 2);
                assert_eq!(message, "line is longer than 5 bytes");
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
        assert!(reader.next().is_none());
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_read() {
        let text = b"[1,2]\n[3]";
        let reader = JsonlReader::<Vec<u8>, _>::new(&text[..], "x").with_max_line_bytes(5);
        let all: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
        assert_eq!(all, vec![vec![1, 2], vec![3]]);
    }

    #[test]
    fn writer_writes_whole_lines() {
        let mut writer = JsonlWriter::new(Vec::new());
        writer.write(&serde_json::json!({"a": 1})).unwrap();
        writer.write(&[1, 2]).unwrap();
        writer.flush().unwrap();
        assert_eq!(writer.get_ref(), b"{\"a\":1}\n[1,2]\n");
    }
}
