//! [`Tape`]: a recorded session to replay, in memory or streamed from a wire log file.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use reel_protocol::decode_client;
use reel_recorder::RecordError;
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::wire_log::{Direction, Source, WireEntry};

/// A recorded session. Entries are read one at a time, so a file of any length replays in
/// bounded memory.
pub struct Tape {
    source: TapeSource,
    peeked: VecDeque<WireEntry>,
    /// The file, for messages.
    pub name: String,
}

enum TapeSource {
    Memory(std::vec::IntoIter<WireEntry>),
    File(Box<JsonlReader<WireEntry>>),
}

impl std::fmt::Debug for Tape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tape")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What one tape entry is to a replay.
#[derive(Debug, Clone, PartialEq)]
pub enum TapeItem {
    /// A frame the server sent.
    Inbound(WireEntry),
    /// A frame the runtime sent: the replay produces it again and compares.
    RuntimeOutbound(WireEntry),
    /// A frame the application sent: recorded for audit, not re-sent.
    AppOutbound(WireEntry),
    /// A connection ended.
    Close(WireEntry),
}

impl TapeItem {
    /// Classifies an entry. An outbound frame is the application's when it is marked so, or
    /// when it is realtime input or client content (what an application sends; for logs
    /// written without the mark).
    pub fn of(entry: WireEntry) -> TapeItem {
        if entry.is_close_marker() {
            return TapeItem::Close(entry);
        }
        match entry.dir {
            Direction::In => TapeItem::Inbound(entry),
            Direction::Out if entry.source == Some(Source::App) || is_app_kind(&entry) => {
                TapeItem::AppOutbound(entry)
            }
            Direction::Out => TapeItem::RuntimeOutbound(entry),
        }
    }

    /// The entry.
    pub fn entry(&self) -> &WireEntry {
        match self {
            TapeItem::Inbound(e)
            | TapeItem::RuntimeOutbound(e)
            | TapeItem::AppOutbound(e)
            | TapeItem::Close(e) => e,
        }
    }
}

fn is_app_kind(entry: &WireEntry) -> bool {
    decode_client(&entry.payload)
        .ok()
        .is_some_and(|m| m.realtime_input.is_some() || m.client_content.is_some())
}

impl Tape {
    /// A tape of entries already in memory.
    pub fn from_entries(entries: Vec<WireEntry>) -> Tape {
        Tape {
            source: TapeSource::Memory(entries.into_iter()),
            peeked: VecDeque::new(),
            name: "(memory)".to_owned(),
        }
    }

    /// A tape streamed from a wire log file.
    pub fn open(path: impl AsRef<Path>) -> Result<Tape, RecordError> {
        let path: PathBuf = path.as_ref().to_owned();
        let reader = JsonlReader::open(&path)?;
        Ok(Tape {
            source: TapeSource::File(Box::new(reader)),
            peeked: VecDeque::new(),
            name: path.display().to_string(),
        })
    }

    fn pull(&mut self) -> Option<Result<WireEntry, RecordError>> {
        match &mut self.source {
            TapeSource::Memory(entries) => entries.next().map(Ok),
            TapeSource::File(reader) => reader.next(),
        }
    }

    /// The next entry.
    pub fn next_entry(&mut self) -> Option<Result<WireEntry, RecordError>> {
        match self.peeked.pop_front() {
            Some(entry) => Some(Ok(entry)),
            None => self.pull(),
        }
    }

    /// The entry after the current one, without taking it (errors are kept for
    /// `next_entry`).
    pub fn peek(&mut self) -> Option<&WireEntry> {
        if self.peeked.is_empty() {
            match self.pull()? {
                Ok(entry) => self.peeked.push_back(entry),
                Err(error) => {
                    tracing::warn!(%error, "the tape ends at a bad entry");
                    return None;
                }
            }
        }
        self.peeked.front()
    }

    /// Warnings from reading (a torn last line).
    pub fn warnings(&self) -> Vec<String> {
        match &self.source {
            TapeSource::Memory(_) => Vec::new(),
            TapeSource::File(reader) => reader.warnings().iter().map(ToString::to_string).collect(),
        }
    }
}
