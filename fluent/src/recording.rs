//! Recording a live session: the wire log (every frame, both directions) and the
//! state-mutation journal, to files or to any recorder and sink.
//!
//! Files are created when the session starts, not when the chain names them, so a chain
//! that fails validation leaves no empty file behind. A persisting session that resumes
//! from a saved snapshot and records to a wire log file `X.wire.jsonl` also keeps that
//! snapshot in `X.resume.json` ([`crate::resume_file`]), so that its replay resumes too. A replay records nothing: it reads
//! the recording and keeps its own journal in memory
//! ([`ReplayedSession::journal`](crate::ReplayedSession::journal)), so replaying a file
//! can never overwrite it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reel_recorder::FileWireRecorder;
use reel_recorder::journal::{FileJournalSink, JournalSink};
use reel_recorder::live_feed::is_live_name;
use reel_recorder::wire_log::WireRecorder;

use crate::builder::LiveBuilder;
use crate::error::ConnectError;
use crate::resume_file::{remove_stale, resume_path_beside};
use crate::studio_link::{JournalTee, StudioLink, StudioTarget, WireTee};

enum WireTarget {
    File(PathBuf),
    Recorder(Arc<dyn WireRecorder>),
}

enum JournalTarget {
    File(PathBuf),
    Sink(Arc<dyn JournalSink>),
}

/// The recording part of a [`LiveBuilder`].
#[derive(Default)]
pub(crate) struct RecordingPart {
    wire: Option<WireTarget>,
    journal: Option<JournalTarget>,
    /// Where the session streams to, live ([`LiveBuilder::studio`]).
    pub(crate) studio: Option<StudioTarget>,
    /// A studio token given before the studio ([`LiveBuilder::studio_token`]).
    pub(crate) studio_token: Option<reel_protocol::Secret>,
}

impl fmt::Debug for RecordingPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wire = match &self.wire {
            Some(WireTarget::File(path)) => Some(path.display().to_string()),
            Some(WireTarget::Recorder(_)) => Some("(recorder)".to_owned()),
            None => None,
        };
        let journal = match &self.journal {
            Some(JournalTarget::File(path)) => Some(path.display().to_string()),
            Some(JournalTarget::Sink(_)) => Some("(sink)".to_owned()),
            None => None,
        };
        f.debug_struct("Recording")
            .field("wire", &wire)
            .field("journal", &journal)
            .field("studio", &self.studio)
            .finish()
    }
}

/// Where a starting session records.
#[derive(Default)]
pub(crate) struct Recorders {
    pub(crate) wire: Option<Arc<dyn WireRecorder>>,
    pub(crate) journal: Option<Arc<dyn JournalSink>>,
    /// Where the snapshot a persisting session resumes from is kept (`X.resume.json`
    /// beside a wire log file `X.wire.jsonl`).
    pub(crate) resume: Option<PathBuf>,
}

impl RecordingPart {
    /// The wire log file the chain records to, if it records to a file.
    pub(crate) fn wire_path(&self) -> Option<&Path> {
        match &self.wire {
            Some(WireTarget::File(path)) => Some(path),
            _ => None,
        }
    }

    /// The journal file the chain records to, if it records to a file.
    pub(crate) fn journal_path(&self) -> Option<&Path> {
        match &self.journal {
            Some(JournalTarget::File(path)) => Some(path),
            _ => None,
        }
    }

    /// Creates the files the chain named, and removes the resume file an earlier
    /// recording left beside the wire log file (this session writes its own, if it
    /// resumes).
    pub(crate) fn open(&self) -> Result<Recorders, ConnectError> {
        let resume = self.wire_path().map(resume_path_beside);
        if let Some(path) = &resume {
            remove_stale(path).map_err(ConnectError::Resume)?;
        }
        let wire = match &self.wire {
            None => None,
            Some(WireTarget::Recorder(recorder)) => Some(Arc::clone(recorder)),
            Some(WireTarget::File(path)) => {
                let file =
                    FileWireRecorder::create(path).map_err(|source| ConnectError::Recording {
                        what: "wire log",
                        path: path.clone(),
                        source,
                    })?;
                Some(Arc::new(file) as Arc<dyn WireRecorder>)
            }
        };
        let journal = match &self.journal {
            None => None,
            Some(JournalTarget::Sink(sink)) => Some(Arc::clone(sink)),
            Some(JournalTarget::File(path)) => {
                let file =
                    FileJournalSink::create(path).map_err(|source| ConnectError::Recording {
                        what: "journal",
                        path: path.clone(),
                        source,
                    })?;
                // A file sink: the session writes it on a thread of its own.
                Some(Arc::new(file) as Arc<dyn JournalSink>)
            }
        };
        Ok(Recorders {
            wire,
            journal,
            resume,
        })
    }

    /// Connects to the studio the chain streams to, if any (before any file is created, so
    /// a studio that does not answer leaves none).
    pub(crate) async fn connect_studio(&self) -> Result<Option<Arc<StudioLink>>, ConnectError> {
        let Some(target) = &self.studio else {
            return Ok(None);
        };
        let name = target.name.clone().unwrap_or_else(|| {
            self.wire_path()
                .and_then(|path| path.file_name())
                .and_then(|name| name.to_str())
                .map(|name| name.strip_suffix(".wire.jsonl").unwrap_or(name).to_owned())
                .filter(|name| is_live_name(name))
                .unwrap_or_else(|| "session".to_owned())
        });
        Ok(Some(Arc::new(
            StudioLink::connect_with_token(&target.addr, &name, target.token.as_ref()).await?,
        )))
    }
}

impl Recorders {
    /// Records into `link` too, beside the session's own recorders.
    pub(crate) fn with_studio(mut self, link: Option<Arc<StudioLink>>) -> Recorders {
        let Some(link) = link else {
            return self;
        };
        self.wire = Some(Arc::new(WireTee {
            recording: self.wire.take(),
            link: Arc::clone(&link),
        }));
        self.journal = Some(Arc::new(JournalTee {
            journal: self.journal.take(),
            link,
        }));
        self
    }
}

impl LiveBuilder {
    /// Records every frame of the session, both directions, to a wire log at `path`
    /// (JSONL, created or truncated when the session starts; buffered, flushed once the
    /// frames waiting are written (at least every 50 ms), after each model turn and when
    /// the session ends, so a crash loses at most
    /// the last 100 ms). Replay it with [`replay`](LiveBuilder::replay).
    ///
    /// With [`persistence`](LiveBuilder::persistence), a session that resumes from a saved
    /// snapshot also writes that snapshot beside the log, before the session starts:
    /// `X.resume.json` for `X.wire.jsonl`. A resume file an earlier recording left there is
    /// removed when the session starts.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().record_wire("recordings/session.wire.jsonl");
    /// # drop(builder);
    /// ```
    pub fn record_wire(mut self, path: impl Into<PathBuf>) -> Self {
        self.recording.wire = Some(WireTarget::File(path.into()));
        self
    }

    /// Records every frame into `recorder` (a
    /// [`MemoryWireRecorder`](reel_recorder::MemoryWireRecorder) in tests, a
    /// [`RedactingRecorder`](reel_recorder::RedactingRecorder) around a file, …).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_fluent::Live;
    /// use reel_recorder::MemoryWireRecorder;
    ///
    /// let recorder = Arc::new(MemoryWireRecorder::new());
    /// let builder = Live::builder().record_wire_to(recorder.clone());
    /// # drop(builder);
    /// ```
    pub fn record_wire_to(mut self, recorder: Arc<dyn WireRecorder>) -> Self {
        self.recording.wire = Some(WireTarget::Recorder(recorder));
        self
    }

    /// Writes every state mutation to a journal at `path` (JSONL, created or truncated
    /// when the session starts; written on a thread of its own and flushed once the
    /// mutations waiting are written (at least every 50 ms), so a crash loses at most the last 100 ms).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().journal("recordings/session.journal.jsonl");
    /// # drop(builder);
    /// ```
    pub fn journal(mut self, path: impl Into<PathBuf>) -> Self {
        self.recording.journal = Some(JournalTarget::File(path.into()));
        self
    }

    /// Sends every state mutation to `sink`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_fluent::Live;
    /// use reel_recorder::journal::MemoryJournalSink;
    ///
    /// let journal = Arc::new(MemoryJournalSink::new());
    /// let builder = Live::builder().journal_to(journal.clone());
    /// # drop(builder);
    /// ```
    pub fn journal_to(mut self, sink: Arc<dyn JournalSink>) -> Self {
        self.recording.journal = Some(JournalTarget::Sink(sink));
        self
    }
}
