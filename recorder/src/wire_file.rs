//! [`FileWireRecorder`]: the wire log as a JSONL file, one line per entry.
//!
//! The transport hands it every frame synchronously, so recording costs a serialization and
//! a copy into a buffer; the file is written when the buffer has grown, when a record finds
//! a second passed since the last write, on [`WireRecorder::flush`] and on drop. That is
//! [`Durability::Buffered`]; [`Durability::FlushEachEntry`] and
//! [`Durability::FsyncEachEntry`] trade speed for losing less in a crash.
//!
//! Recording is infallible by contract. An I/O error is logged (`tracing::warn!`, naming
//! the file and the error, never a payload), counted in [`WireRecorder::error_count`], and
//! never reaches the session; the bytes the file did not take are kept and retried with the
//! next entries, so a disk that was full and frees up gets whole lines again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crate::error::RecordError;
use crate::journal::DEFAULT_FLUSH_INTERVAL;
use crate::line_buffer::{DEFAULT_MAX_PENDING_BYTES, LineBuffer};
use crate::wire_log::{WireEntry, WireRecorder};

/// How many buffered bytes make a [`Durability::Buffered`] recorder write to the file
/// without waiting for the flush interval.
pub const WRITE_THRESHOLD_BYTES: usize = 64 * 1024;

/// When entries reach the disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Buffered: written once [`WRITE_THRESHOLD_BYTES`] are buffered, when a record finds
    /// [`DEFAULT_FLUSH_INTERVAL`] passed since the last write, on flush and on drop. Alone,
    /// a crash loses what came since the last write; in a session, the Recorder flushes it
    /// once its queue is empty (at least every 50 ms), so a crash loses at most the last
    /// 100 ms.
    #[default]
    Buffered,
    /// Every entry is handed to the operating system before `record` returns: a crash of
    /// the process loses nothing, a crash of the machine may.
    FlushEachEntry,
    /// Every entry is written and `fsync`ed (data only) before `record` returns: nothing
    /// acknowledged is lost, at the price of a disk round trip per frame.
    FsyncEachEntry,
}

/// Appends wire entries to a JSONL file (see the [module docs](self)).
///
/// ```no_run
/// use reel_recorder::wire_file::{Durability, FileWireRecorder};
/// use reel_recorder::wire_log::{Direction, WireEntry, WireRecorder};
///
/// let recorder = FileWireRecorder::create("session.wire.jsonl")?
///     .with_durability(Durability::FlushEachEntry);
/// recorder.record(WireEntry::frame(1, Direction::Out, 1_718_000_000_000, &b"{}"[..], None, false));
/// assert_eq!(recorder.error_count(), 0);
/// # Ok::<(), reel_recorder::RecordError>(())
/// ```
pub struct FileWireRecorder {
    state: Mutex<State>,
    path: PathBuf,
    durability: Durability,
    errors: AtomicU64,
}

/// What the lock guards.
struct State {
    out: LineBuffer<File>,
    line: Vec<u8>,
    last_write: Instant,
    /// Whether the last attempt failed: a failing streak is logged once, not per entry.
    failing: bool,
    /// The last failure, as the operating system (or the encoder) said it.
    last_error: Option<String>,
    /// Entries given up on (not encodable, or no room left in the buffer).
    lost: u64,
}

impl FileWireRecorder {
    /// Creates (or truncates) the wire log at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(FileWireRecorder {
            state: Mutex::new(State {
                out: LineBuffer::new(file, DEFAULT_MAX_PENDING_BYTES),
                line: Vec::new(),
                last_write: Instant::now(),
                failing: false,
                last_error: None,
                lost: 0,
            }),
            path: path.to_path_buf(),
            durability: Durability::default(),
            errors: AtomicU64::new(0),
        })
    }

    /// Sets when entries reach the disk (default [`Durability::Buffered`]).
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The wire log's destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// When entries reach the disk.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Why the file is not the whole recording, if it is not: after a
    /// [`flush`](WireRecorder::flush), `Some` with the last error when an entry was given up
    /// on or the last write failed (its bytes are still unwritten). Failed writes that a
    /// later write made good do not count: the file then holds every entry.
    pub fn incomplete(&self) -> Option<String> {
        let state = self.lock();
        (state.failing || state.lost > 0).then(|| {
            state
                .last_error
                .clone()
                .unwrap_or_else(|| "a write failed".to_owned())
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; if something ever did, the buffer still
        // holds whole lines, so carry on rather than lose the recording.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a failure, and logs it if it starts a failing streak.
    fn failed(&self, state: &mut State, what: &str, error: &dyn std::fmt::Display) {
        let count = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
        // The buffer filling up follows a failing file: the file's error is the reason.
        if what != "buffer" || state.last_error.is_none() {
            state.last_error = Some(error.to_string());
        }
        if !state.failing {
            state.failing = true;
            tracing::warn!(
                path = %self.path.display(),
                error = %error,
                errors = count,
                "wire log {what} failed; entries may be missing from the file until writes succeed again"
            );
        }
    }

    fn succeeded(&self, state: &mut State) {
        if state.failing {
            state.failing = false;
            tracing::warn!(
                path = %self.path.display(),
                errors = self.error_count(),
                "wire log writes succeed again"
            );
        }
    }

    /// Writes out what is pending, then syncs if `sync`.
    fn write_out(&self, state: &mut State, sync: bool) {
        state.last_write = Instant::now();
        let result = state.out.write_out().and_then(|()| {
            if sync {
                state.out.get_ref().sync_data()
            } else {
                Ok(())
            }
        });
        match result {
            Ok(()) => self.succeeded(state),
            Err(error) => self.failed(state, "write", &error),
        }
    }
}

impl WireRecorder for FileWireRecorder {
    fn record(&self, entry: WireEntry) {
        let mut guard = self.lock();
        let state = &mut *guard;
        state.line.clear();
        if let Err(error) = crate::wire_line::write_entry(&entry, &mut state.line) {
            self.failed(state, "encoding", &error);
            state.lost += 1;
            return;
        }
        state.line.push(b'\n');
        if state.out.push(&state.line).is_err() {
            // The file has refused bytes for a while: retry, then take the line if it fits.
            self.write_out(state, false);
            if state.out.push(&state.line).is_err() {
                self.failed(state, "buffer", &"the buffer of unwritten entries is full");
                state.lost += 1;
                return;
            }
        }
        match self.durability {
            Durability::Buffered => {
                if state.out.pending_len() >= WRITE_THRESHOLD_BYTES
                    || state.last_write.elapsed() >= DEFAULT_FLUSH_INTERVAL
                {
                    self.write_out(state, false);
                }
            }
            Durability::FlushEachEntry => self.write_out(state, false),
            Durability::FsyncEachEntry => self.write_out(state, true),
        }
    }

    fn flush(&self) {
        let mut state = self.lock();
        self.write_out(&mut state, self.durability == Durability::FsyncEachEntry);
    }

    fn error_count(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

impl Drop for FileWireRecorder {
    fn drop(&mut self) {
        WireRecorder::flush(self);
    }
}

impl std::fmt::Debug for FileWireRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWireRecorder")
            .field("path", &self.path)
            .field("durability", &self.durability)
            .field("errors", &self.error_count())
            .finish_non_exhaustive()
    }
}
