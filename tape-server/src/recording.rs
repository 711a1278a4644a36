//! The wire log a recording proxy writes for one client connection.
//!
//! File name: for a client that named its test, `<test>.wire.jsonl`, then
//! `<test>.2.wire.jsonl`, … ([`TestName::file_name`]); otherwise `<model>-<n>.wire.jsonl`
//! in the recording directory, `<model>` the last
//! segment of the setup's model name (`models/gemini-live-2.5-flash` →
//! `gemini-live-2.5-flash`; a Vertex resource name keeps its model id too), characters
//! other than ASCII letters, digits, `.`, `_` and `-` replaced by `_`, and `session` when
//! the first frame names no model; `<n>` the first number from 1 whose file does not exist
//! yet (claimed atomically, so concurrent connections never share a file). Entries are
//! stamped by the proxy: sequence from 1 across both directions, time from a wall-clock
//! anchor advanced by tokio time. Each entry is handed to the operating system as it is
//! recorded, so a recording can be followed while it grows. With a [`Redactor`], each payload
//! is redacted on its way to the file (the counts are of frames, redacted or not).
//!
//! A recording whose file did not take every entry (a full disk, a file size limit) is not
//! left as a tape: [`Recording::finish`] removes it when nothing reached it, or else renames
//! it `X.wire.jsonl.failed` (the tape loader skips it), and the connection is reported
//! [`Outcome::RecordFailed`](super::Outcome::RecordFailed) with the error.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use reel_protocol::decode_client;
use reel_recorder::clock::{Clock, TokioClock};
use reel_recorder::redact::Redactor;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry, WireRecorder};
use reel_recorder::{Durability, FileWireRecorder};

use super::error::ConnectionError;
use super::tape_index::TAPE_SUFFIX;
use super::test_name::{TestName, file_safe};

/// The file-name stem for a session whose first client frame is `first_frame`.
///
/// A recording proxy names each connection's wire log `<stem>-<n>.wire.jsonl`: the stem is
/// the last segment of the setup's model name, characters other than ASCII letters, digits,
/// `.`, `_` and `-` replaced by `_` (`session` when the frame names no model); `<n>` is the
/// first number from 1 whose file does not exist yet, claimed atomically so concurrent
/// connections never share a file.
///
/// ```
/// use reel_tape_server::recording_stem;
///
/// assert_eq!(recording_stem(br#"{"setup":{"model":"models/gemini-live-2.5-flash"}}"#), "gemini-live-2.5-flash");
/// assert_eq!(recording_stem(br#"{"setup":{"model":"projects/p/locations/l/publishers/google/models/m:1"}}"#), "m_1");
/// assert_eq!(recording_stem(b"not a setup"), "session");
/// ```
pub fn recording_stem(first_frame: &[u8]) -> String {
    let model = decode_client(first_frame)
        .ok()
        .and_then(|message| message.setup)
        .and_then(|setup| setup.model)
        .unwrap_or_default();
    let last = model.rsplit('/').next().unwrap_or_default();
    let stem = file_safe(last);
    if stem.trim_matches('.').is_empty() {
        "session".to_owned()
    } else {
        stem
    }
}

/// How a recording's file is named.
pub(crate) enum Naming<'a> {
    /// `<stem>-<n>.wire.jsonl`, from the setup's model ([`recording_stem`]).
    Model(String),
    /// The test's own files.
    Test(&'a TestName),
}

/// One connection's recording.
pub(crate) struct Recording {
    recorder: FileWireRecorder,
    redactor: Option<Redactor>,
    clock: TokioClock,
    next_seq: u64,
    frames_out: u32,
    frames_in: u32,
}

impl Recording {
    /// Claims the next free file name in `dir` and opens it.
    pub(crate) fn create(
        dir: &Path,
        naming: &Naming<'_>,
        redactor: Option<&Redactor>,
    ) -> Result<Self, ConnectionError> {
        let error = |error: std::io::Error| ConnectionError::Recording {
            dir: dir.to_path_buf(),
            message: error.to_string(),
        };
        let mut n = 1u32;
        let path = loop {
            let name = match naming {
                Naming::Model(stem) => format!("{stem}-{n}{TAPE_SUFFIX}"),
                Naming::Test(test) => test.file_name(n),
            };
            let path = dir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => break path,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => n = n.saturating_add(1),
                Err(e) => return Err(error(e)),
            }
        };
        let recorder = FileWireRecorder::create(&path)
            .map_err(|e| ConnectionError::Recording {
                dir: dir.to_path_buf(),
                message: e.to_string(),
            })?
            .with_durability(Durability::FlushEachEntry);
        Ok(Recording {
            recorder,
            redactor: redactor.cloned(),
            clock: TokioClock::from_wall_clock(),
            next_seq: 1,
            frames_out: 0,
            frames_in: 0,
        })
    }

    /// The file.
    pub(crate) fn path(&self) -> &Path {
        self.recorder.path()
    }

    fn seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Records a frame.
    pub(crate) fn frame(&mut self, dir: Direction, payload: &Bytes, binary: bool) {
        match dir {
            Direction::Out => self.frames_out += 1,
            Direction::In => self.frames_in += 1,
        }
        let seq = self.seq();
        let payload = match &self.redactor {
            Some(redactor) => match redactor.redact(payload) {
                std::borrow::Cow::Borrowed(_) => payload.clone(),
                std::borrow::Cow::Owned(redacted) => Bytes::from(redacted),
            },
            None => payload.clone(),
        };
        let entry = WireEntry::frame(seq, dir, self.clock.now_ms(), payload, None, binary);
        self.recorder.record(entry);
    }

    /// Records the end of the connection.
    pub(crate) fn close(&mut self, code: Option<u16>, reason: Option<String>, client: bool) {
        let seq = self.seq();
        let mark = CloseMark {
            code,
            reason,
            client,
        };
        self.recorder
            .record(WireEntry::close_mark(seq, self.clock.now_ms(), None, mark));
    }

    /// Flushes and closes the file; returns its path, the frame counts, and, when entries
    /// are missing from it, why and where what was written is kept (see [`Failure`]).
    pub(crate) fn finish(self) -> Finished {
        self.recorder.flush();
        let path = self.recorder.path().to_path_buf();
        let failure = self.recorder.incomplete();
        drop(self.recorder);
        let failure = failure.map(|error| {
            tracing::warn!(
                path = %path.display(),
                %error,
                "the recording is missing entries: writes failed"
            );
            Failure {
                kept: set_aside(&path),
                error,
            }
        });
        Finished {
            path,
            frames_out: self.frames_out,
            frames_in: self.frames_in,
            failure,
        }
    }
}

/// A finished recording.
pub(crate) struct Finished {
    /// The wire log written to.
    pub path: PathBuf,
    /// Client frames recorded.
    pub frames_out: u32,
    /// Upstream frames recorded.
    pub frames_in: u32,
    /// Set when entries are missing from the file.
    pub failure: Option<Failure>,
}

/// Why a recording is not whole, and what became of its file.
pub(crate) struct Failure {
    /// The last write error.
    pub error: String,
    /// Where what was written is kept, or `None` when the file was empty and removed.
    pub kept: Option<PathBuf>,
}

/// The suffix a failed recording is renamed with: not a tape's (`.wire.jsonl`), so a tape
/// directory with a failed recording in it still loads.
pub const FAILED_SUFFIX: &str = ".failed";

/// Takes a failed recording at `path` out of the tapes: removed when empty, else renamed
/// to `X.wire.jsonl.failed`; where it is now, if anywhere. If neither can be done, it stays
/// where it is, said in the log.
fn set_aside(path: &Path) -> Option<PathBuf> {
    let empty = std::fs::metadata(path).is_ok_and(|meta| meta.len() == 0);
    if empty {
        match std::fs::remove_file(path) {
            Ok(()) => return None,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "the empty failed recording could not be removed");
                return Some(path.to_path_buf());
            }
        }
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(FAILED_SUFFIX);
    let aside = PathBuf::from(aside);
    match std::fs::rename(path, &aside) {
        Ok(()) => Some(aside),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "the failed recording could not be renamed");
            Some(path.to_path_buf())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe_file_names() {
        assert_eq!(recording_stem(br#"{"setup":{"model":"../../etc"}}"#), "etc");
        assert_eq!(recording_stem(br#"{"setup":{"model":".."}}"#), "session");
        assert_eq!(recording_stem(br#"{"setup":{"model":"a b"}}"#), "a_b");
        assert_eq!(recording_stem(br#"{"setup":{}}"#), "session");
    }

    #[test]
    fn names_count_up_from_one() {
        let dir = std::env::temp_dir().join(format!("reel-recording-names-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let model = Naming::Model("m".into());
        let first = Recording::create(&dir, &model, None).unwrap();
        let second = Recording::create(&dir, &model, None).unwrap();
        assert_eq!(first.path(), dir.join("m-1.wire.jsonl"));
        assert_eq!(second.path(), dir.join("m-2.wire.jsonl"));
        let test = TestName::new("t").unwrap();
        let first = Recording::create(&dir, &Naming::Test(&test), None).unwrap();
        let second = Recording::create(&dir, &Naming::Test(&test), None).unwrap();
        assert_eq!(first.path(), dir.join("t.wire.jsonl"));
        assert_eq!(second.path(), dir.join("t.2.wire.jsonl"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
