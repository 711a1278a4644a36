//! A seek index: where to start reading a long log for a window near its end.
//!
//! Without it, every window of frames, every waveform and every frame opened reads the
//! log from its first line (a window at the end of a two-hour call pays for the 97 %
//! before it). The index is one pass over the log, taken the first time a large log is
//! asked for something past its start: a [`SeekPoint`] every [`SEEK_EVERY_BYTES`] with
//! the byte offset of a line, that entry's time and sequence number, and where each audio
//! channel ends there (so a waveform started there places its audio exactly as one read
//! from the start). It is kept per file, for as long as the file keeps its size and
//! modification time, in a few kilobytes.
//!
//! Starting at a point is exact, not approximate: for a window from `from_ms`, the point
//! is one whose entry is later than none of the window (times only grow in a log; a log
//! where they do not gets no points, and is read from the start); for a waveform, one
//! before which no audio plays into the window; for a frame, one whose sequence number is
//! not past it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use reel_recorder::WireLogReader;
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::wire_log::WireEntry;
use reel_replayer::export::{PeakMeter, WAV_RATE};

/// How far apart the points are, in bytes of log.
pub const SEEK_EVERY_BYTES: u64 = 4 * 1024 * 1024;

/// Logs smaller than this are always read from the start (a pass takes milliseconds).
pub const SEEK_MIN_BYTES: u64 = 16 * 1024 * 1024;

/// A place to start reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeekPoint {
    /// The byte offset of the entry's line.
    pub offset: u64,
    /// The entry's time, ms since the log's first entry.
    pub t_ms: u64,
    /// The entry's sequence number.
    pub seq: u64,
    /// Where each channel's audio ends before the entry, frames at [`WAV_RATE`] (user,
    /// model), as [`PeakMeter::placement`] says.
    pub cursor: [u64; 2],
}

/// The points of one log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekIndex {
    /// The log's first entry's time, epoch ms.
    pub t0: u64,
    /// In file order.
    pub points: Vec<SeekPoint>,
}

impl SeekIndex {
    /// Reads `path` once. A line that does not read ends the index there (the points
    /// before it stay good; reading from them reports the line as any reader would), and
    /// so does a time earlier than one before it (no point is then trusted: the log is
    /// read from the start).
    pub fn build(path: &Path) -> std::io::Result<SeekIndex> {
        SeekIndex::build_every(path, SEEK_EVERY_BYTES)
    }

    /// [`build`](SeekIndex::build) with a point every `every_bytes` (at least 1): for
    /// tests, and to tune.
    pub fn build_every(path: &Path, every_bytes: u64) -> std::io::Result<SeekIndex> {
        let every_bytes = every_bytes.max(1);
        let mut reader = BufReader::new(File::open(path)?);
        let mut line = Vec::new();
        let mut offset = 0u64;
        let mut meter = PeakMeter::new(0, 1, 1);
        let mut index = SeekIndex {
            t0: 0,
            points: Vec::new(),
        };
        let mut next_point = every_bytes;
        let mut latest = 0;
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line)? as u64;
            if read == 0 {
                break;
            }
            let Ok(entry) = serde_json::from_slice::<WireEntry>(&line) else {
                break;
            };
            if offset == 0 {
                index.t0 = entry.ts_ms;
            }
            if entry.ts_ms < latest {
                index.points.clear();
                break;
            }
            latest = entry.ts_ms;
            if offset >= next_point {
                index.points.push(SeekPoint {
                    offset,
                    t_ms: entry.ts_ms - index.t0,
                    seq: entry.seq,
                    cursor: meter.placement().1,
                });
                next_point = offset + every_bytes;
            }
            meter.push(&entry);
            offset += read;
        }
        Ok(index)
    }

    /// The last point whose entry is earlier than `from_ms`: every entry before it is.
    pub fn for_window(&self, from_ms: u64) -> Option<&SeekPoint> {
        self.points.iter().rev().find(|p| p.t_ms < from_ms)
    }

    /// The last point for a waveform from `from_ms`: earlier than it, and with all audio
    /// placed before it ending by then.
    pub fn for_peaks(&self, from_ms: u64) -> Option<&SeekPoint> {
        let from_frame = from_ms * u64::from(WAV_RATE) / 1000;
        self.points
            .iter()
            .rev()
            .find(|p| p.t_ms < from_ms && p.cursor[0] <= from_frame && p.cursor[1] <= from_frame)
    }

    /// The last point not past frame `seq`.
    pub fn for_seq(&self, seq: u64) -> Option<&SeekPoint> {
        self.points.iter().rev().find(|p| p.seq <= seq)
    }
}

/// A reader of `path` from `point`'s line (from the start without one).
pub fn read_from(path: &Path, point: Option<&SeekPoint>) -> Result<WireLogReader, String> {
    let Some(point) = point else {
        return WireLogReader::open(path).map_err(|error| error.to_string());
    };
    let mut file = File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    file.seek(SeekFrom::Start(point.offset))
        .map_err(|error| format!("{}: {error}", path.display()))?;
    Ok(WireLogReader::new(JsonlReader::new(
        BufReader::new(file),
        path,
    )))
}

/// An index with the size and modification time of the log it was built from.
type Cached = (u64, Option<SystemTime>, Arc<SeekIndex>);

/// The indexes of the logs the studio was asked about, by path; rebuilt when a log's size
/// or modification time changes.
#[derive(Debug, Default)]
pub struct SeekCache {
    indexes: Mutex<HashMap<PathBuf, Cached>>,
    /// The logs a [`warm`](SeekCache::warm) thread is indexing now.
    building: Mutex<std::collections::HashSet<PathBuf>>,
}

impl SeekCache {
    /// The index of `path`, built on first use; `None` for a log too small to need one (or
    /// one that cannot be read: the request reads it from the start and says why).
    pub fn index(&self, path: &Path) -> Option<Arc<SeekIndex>> {
        let meta = std::fs::metadata(path).ok()?;
        if meta.len() < SEEK_MIN_BYTES {
            return None;
        }
        let key = (meta.len(), meta.modified().ok());
        if let Some((len, modified, index)) = self.lock().get(path)
            && (*len, *modified) == key
        {
            return Some(Arc::clone(index));
        }
        // Built outside the lock: another log's requests do not wait for this one.
        let index = Arc::new(SeekIndex::build(path).ok()?);
        self.lock()
            .insert(path.to_path_buf(), (key.0, key.1, Arc::clone(&index)));
        Some(index)
    }

    /// Builds the index of `path` on a thread of its own, if the log is long enough to need
    /// one and it is not built yet (the overview's request calls it: the windows that follow
    /// find it ready).
    pub fn warm(self: &Arc<Self>, path: &Path) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.len() < SEEK_MIN_BYTES
            || self.lock().get(path).is_some_and(|(len, modified, _)| {
                (*len, *modified) == (meta.len(), meta.modified().ok())
            })
        {
            return;
        }
        let path = path.to_path_buf();
        if !self
            .building
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.clone())
        {
            return; // one thread per log at a time
        }
        let cache = Arc::clone(self);
        std::thread::spawn(move || {
            cache.index(&path);
            cache
                .building
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&path);
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        self.indexes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
