//! The state-mutation journal: one [`StateMutation`] per line.
//!
//! ```text
//! {"sequence":7,"key":"app:last_city","old":null,"new":"London","origin":"set","timestamp_ms":1718000000456,"delta":false}
//! ```
//!
//! The state store hands every mutation to a [`JournalSink`] synchronously, on its write
//! path. [`FileJournalSink`] appends them to a JSONL file through a buffer flushed when a
//! record finds a second passed, on flush and on drop (in a session, its writer thread
//! flushes it as soon as no mutation waits, at least every 50 ms:
//! `reel_actors::state::JournalWriter`);
//! [`MemoryJournalSink`] keeps them for tests. [`read_journal`] reads a
//! journal back, tolerating a torn last line.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::RecordError;
use crate::jsonl::{JsonlReader, JsonlWriter};

/// One change of one state key. Field order is the journal's column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateMutation {
    /// Position in the session's journal: starts at 1, one more for each mutation.
    pub sequence: u64,
    /// The key changed.
    pub key: String,
    /// The value before (`null`: the key was absent).
    pub old: Value,
    /// The value after (`null`: the key was removed).
    pub new: Value,
    /// What wrote it: one of the [`origin`] names.
    pub origin: String,
    /// Session time of the write, in epoch milliseconds.
    pub timestamp_ms: u64,
    /// Whether the write came through a delta view's commit.
    pub delta: bool,
}

/// The names [`StateMutation::origin`] takes.
pub mod origin {
    /// A plain set.
    pub const SET: &str = "set";
    /// A read-modify-write.
    pub const MODIFY: &str = "modify";
    /// A removal of one key.
    pub const REMOVE: &str = "remove";
    /// A removal of every key under a prefix (one mutation per key removed).
    pub const CLEAR_PREFIX: &str = "clear_prefix";
}

/// Receives every state mutation, in journal order, as it is applied.
///
/// Called synchronously on the state store's write path: an implementation must be cheap
/// (buffer, don't block), must never panic, and has no way to fail the write: a sink that
/// cannot record logs and counts the problem itself.
pub trait JournalSink: Send + Sync {
    /// Records one mutation.
    fn record(&self, mutation: &StateMutation);
    /// Pushes buffered mutations to their destination (the session calls it on stop).
    fn flush(&self) {}
    /// Whether `record` may block on I/O (it writes a file). A session puts such a sink
    /// behind a writer thread of its own, so the write never runs on the state's write
    /// path. In-memory sinks keep the default, `false`.
    fn does_io(&self) -> bool {
        false
    }
    /// Whether `flush` may block (it writes a file, or waits for a thread that does). A
    /// session runs such a flush on its disk (tokio's blocking pool), never on a worker;
    /// a flush that cannot block runs where the session is, with no thread hand-over.
    /// By default, whether the sink does I/O ([`JournalSink::does_io`]).
    fn flush_blocks(&self) -> bool {
        self.does_io()
    }
}

/// How long a [`FileJournalSink`] lets entries sit in its buffer, at most, while writes
/// keep coming.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Appends mutations to a JSONL file through a buffer.
///
/// The buffer is flushed when a record finds more than [`DEFAULT_FLUSH_INTERVAL`] passed
/// since the last flush, on [`JournalSink::flush`] and on drop. An I/O error is logged
/// (`tracing::warn!`, naming the file and the error, never an entry) and counted in
/// [`FileJournalSink::error_count`]; it never reaches the session.
///
/// The sink is generic over its writer so that tests can give it one that fails; in use it
/// writes a [`File`].
pub struct FileJournalSink<W: Write + Send = File> {
    writer: Mutex<Buffered<W>>,
    path: PathBuf,
    flush_interval: Duration,
    errors: AtomicU64,
}

struct Buffered<W: Write> {
    out: JsonlWriter<W>,
    last_flush: Instant,
}

impl FileJournalSink<File> {
    /// Creates (or truncates) the journal file at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(FileJournalSink::from_writer(file, path))
    }
}

impl<W: Write + Send> FileJournalSink<W> {
    /// A sink writing to `writer`; `path` names the destination in log lines.
    pub fn from_writer(writer: W, path: impl Into<PathBuf>) -> Self {
        FileJournalSink {
            writer: Mutex::new(Buffered {
                out: JsonlWriter::new(writer),
                last_flush: Instant::now(),
            }),
            path: path.into(),
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            errors: AtomicU64::new(0),
        }
    }

    /// Sets how long entries may sit in the buffer (`Duration::ZERO`: flush on every record).
    pub fn with_flush_interval(mut self, flush_interval: Duration) -> Self {
        self.flush_interval = flush_interval;
        self
    }

    /// The journal's destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many writes or flushes have failed so far.
    pub fn error_count(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Buffered<W>> {
        // Nothing panics while holding the lock; if something ever did, the buffer is
        // still a valid buffer, so carry on rather than lose the journal.
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn failed(&self, what: &str, error: &std::io::Error) {
        let count = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::warn!(
            path = %self.path.display(),
            error = %error,
            errors = count,
            "journal {what} failed; mutations may be missing from the file"
        );
    }

    fn flush_locked(&self, buffered: &mut Buffered<W>) {
        buffered.last_flush = Instant::now();
        if let Err(error) = buffered.out.flush() {
            self.failed("flush", &error);
        }
    }
}

impl<W: Write + Send> JournalSink for FileJournalSink<W> {
    fn record(&self, mutation: &StateMutation) {
        let mut buffered = self.lock();
        if let Err(error) = buffered.out.write(mutation) {
            self.failed("write", &error);
        }
        if buffered.last_flush.elapsed() >= self.flush_interval {
            self.flush_locked(&mut buffered);
        }
    }

    fn flush(&self) {
        let mut buffered = self.lock();
        self.flush_locked(&mut buffered);
    }

    fn does_io(&self) -> bool {
        true
    }
}

impl<W: Write + Send> Drop for FileJournalSink<W> {
    fn drop(&mut self) {
        JournalSink::flush(self);
    }
}

impl<W: Write + Send> std::fmt::Debug for FileJournalSink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileJournalSink")
            .field("path", &self.path)
            .field("flush_interval", &self.flush_interval)
            .field("errors", &self.error_count())
            .finish_non_exhaustive()
    }
}

/// Keeps every mutation in memory, for tests.
#[derive(Debug, Default)]
pub struct MemoryJournalSink {
    entries: Mutex<Vec<StateMutation>>,
    flushes: AtomicU64,
}

impl MemoryJournalSink {
    /// An empty sink.
    pub fn new() -> Self {
        MemoryJournalSink::default()
    }

    /// The mutations recorded so far, in order.
    pub fn entries(&self) -> Vec<StateMutation> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many times [`JournalSink::flush`] was called.
    pub fn flush_count(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }
}

impl JournalSink for MemoryJournalSink {
    fn record(&self, mutation: &StateMutation) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(mutation.clone());
    }

    fn flush(&self) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
    }
}

/// Streams the journal at `path`, one mutation at a time.
pub fn open_journal(
    path: impl AsRef<Path>,
) -> Result<JsonlReader<StateMutation, BufReader<File>>, RecordError> {
    JsonlReader::open(path)
}

/// Reads the whole journal at `path`. A torn last line is skipped with a warning in the
/// log; use [`open_journal`] to see the warnings or to stream a long journal.
pub fn read_journal(path: impl AsRef<Path>) -> Result<Vec<StateMutation>, RecordError> {
    open_journal(path)?.collect()
}
