//! [`Tape`]: a recorded session to replay, in memory or streamed from a wire log file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use reel_protocol::{ClientMessageKind, client_frame_may_be, decode_client};
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
    File(FileSource),
}

/// How many entries a file tape's reader thread reads and parses ahead of the replay.
pub const READ_AHEAD: usize = 256;

/// How far ahead the reader may run while someone waits for an entry further on (see
/// [`ReadAhead::lift`]): a recorded tool response comes that many entries after its call
/// at most, or the waiter is told there is none.
pub const LIFTED_READ_AHEAD: usize = 16_384;

/// The read buffer of a file tape.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// A wire log read and parsed on a thread of its own, at most [`READ_AHEAD`] entries
/// ahead of the replay (or [`LIFTED_READ_AHEAD`] while lifted).
struct FileSource {
    feed: Arc<Feed>,
    /// The reader's warnings, set before the tape's end can be seen.
    warnings: Arc<Mutex<Vec<String>>>,
}

impl Drop for FileSource {
    fn drop(&mut self) {
        self.feed.consumer_gone();
    }
}

/// The queue between a file tape's reader thread and the replay.
struct Feed {
    state: Mutex<FeedState>,
    /// The replay waits here for an entry.
    readable: Condvar,
    /// The reader waits here for room.
    writable: Condvar,
}

#[derive(Default)]
struct FeedState {
    items: VecDeque<Result<WireEntry, RecordError>>,
    /// Lifts held ([`ReadAhead::lift`]).
    lifts: usize,
    /// The reader has handed over its last entry.
    ended: bool,
    /// The tape was dropped: nobody reads on.
    gone: bool,
    reader_waits: bool,
    consumer_waits: bool,
}

impl Feed {
    fn new() -> Arc<Feed> {
        Arc::new(Feed {
            state: Mutex::new(FeedState::default()),
            readable: Condvar::new(),
            writable: Condvar::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands `item` over, waiting for room; `false` once the tape is dropped.
    fn push(&self, item: Result<WireEntry, RecordError>) -> bool {
        let mut state = self.lock();
        loop {
            if state.gone {
                return false;
            }
            let limit = if state.lifts > 0 {
                LIFTED_READ_AHEAD
            } else {
                READ_AHEAD
            };
            if state.items.len() < limit {
                break;
            }
            state.reader_waits = true;
            state = self
                .writable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.items.push_back(item);
        if std::mem::take(&mut state.consumer_waits) {
            self.readable.notify_one();
        }
        true
    }

    /// The reader has no more entries.
    fn end(&self) {
        let mut state = self.lock();
        state.ended = true;
        if std::mem::take(&mut state.consumer_waits) {
            self.readable.notify_one();
        }
    }

    /// The next entry, waiting for the reader; `None` at the end.
    fn pull(&self) -> Option<Result<WireEntry, RecordError>> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.items.pop_front() {
                // The reader is woken once half the read-ahead is free, not per entry.
                if state.reader_waits && state.items.len() <= READ_AHEAD / 2 {
                    state.reader_waits = false;
                    self.writable.notify_one();
                }
                return Some(item);
            }
            if state.ended {
                return None;
            }
            state.consumer_waits = true;
            state = self
                .readable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn consumer_gone(&self) {
        let mut state = self.lock();
        state.gone = true;
        state.items.clear();
        self.writable.notify_one();
    }

    fn lift(&self) {
        let mut state = self.lock();
        state.lifts += 1;
        if std::mem::take(&mut state.reader_waits) {
            self.writable.notify_one();
        }
    }

    fn unlift(&self) {
        let mut state = self.lock();
        state.lifts = state.lifts.saturating_sub(1);
    }

    fn buffered(&self) -> usize {
        self.lock().items.len()
    }
}

/// A handle on how far a file tape's reader runs ahead of the replay, for whoever watches
/// the entries as the reader reads them (a [`crate::tape_scan::TapeScan`]) and must see one
/// further on than the replay has come: while a [`Lift`] is held, the reader reads up to
/// [`LIFTED_READ_AHEAD`] entries ahead instead of [`READ_AHEAD`].
#[derive(Clone)]
pub struct ReadAhead(Arc<Feed>);

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead")
            .field("buffered", &self.buffered())
            .finish()
    }
}

impl ReadAhead {
    /// Lets the reader run up to [`LIFTED_READ_AHEAD`] entries ahead until the lift is
    /// dropped.
    pub fn lift(&self) -> Lift {
        self.0.lift();
        Lift(Arc::clone(&self.0))
    }

    /// How many entries are read and waiting for the replay.
    pub fn buffered(&self) -> usize {
        self.0.buffered()
    }
}

/// A held [`ReadAhead::lift`].
pub struct Lift(Arc<Feed>);

impl Drop for Lift {
    fn drop(&mut self) {
        self.0.unlift();
    }
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
    /// Classifies an entry. An outbound frame is the application's or the runtime's as its
    /// `source` says; unmarked, it is the application's when it is realtime input or client
    /// content (what an application sends) and the runtime's otherwise.
    pub fn of(entry: WireEntry) -> TapeItem {
        if entry.is_close_marker() {
            return TapeItem::Close(entry);
        }
        match entry.dir {
            Direction::In => TapeItem::Inbound(entry),
            Direction::Out => match entry.source {
                Some(Source::App) => TapeItem::AppOutbound(entry),
                Some(Source::Runtime) => TapeItem::RuntimeOutbound(entry),
                None if is_app_kind(&entry) => TapeItem::AppOutbound(entry),
                None => TapeItem::RuntimeOutbound(entry),
            },
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

/// The kinds of message an application sends.
const APP_KINDS: [ClientMessageKind; 2] = [
    ClientMessageKind::RealtimeInput,
    ClientMessageKind::ClientContent,
];

/// Whether an unmarked outbound frame is realtime input or client content. The runtime's
/// own frames (a setup, a tool response, a context update) are told by their top-level
/// key, with no decode ([`client_frame_may_be`]); only a frame that may be the
/// application's is decoded.
fn is_app_kind(entry: &WireEntry) -> bool {
    client_frame_may_be(&entry.payload, &APP_KINDS)
        && decode_client(&entry.payload)
            .ok()
            .is_some_and(|m| m.realtime_input.is_some() || m.client_content.is_some())
}

/// Whether `entry`, as [`TapeItem::of`] classifies it, is a frame the application sent
/// (without taking or copying it).
pub(crate) fn is_app_outbound(entry: &WireEntry) -> bool {
    !entry.is_close_marker()
        && entry.dir == Direction::Out
        && match entry.source {
            Some(Source::App) => true,
            Some(Source::Runtime) => false,
            None => is_app_kind(entry),
        }
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

    /// A tape streamed from a wire log file. A thread reads and parses the file at most
    /// [`READ_AHEAD`] entries ahead of the replay (so reading and parsing overlap with
    /// the session tree, and memory stays bounded whatever the file's length); it stops
    /// when the tape is dropped.
    pub fn open(path: impl AsRef<Path>) -> Result<Tape, RecordError> {
        Tape::open_with(path.as_ref(), false)
    }

    /// A tape streamed from a damaged wire log (a NUL-filled tail after a power loss, a
    /// corrupt line): it holds the entries before the first bad line and ends there (see
    /// [`JsonlReader::salvaging`]). Otherwise as [`Tape::open`].
    pub fn open_salvaging(path: impl AsRef<Path>) -> Result<Tape, RecordError> {
        Tape::open_with(path.as_ref(), true)
    }

    fn open_with(path: &Path, salvage: bool) -> Result<Tape, RecordError> {
        let path: PathBuf = path.to_owned();
        let io_error = |source| RecordError::Io {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(io_error)?;
        let mut reader: JsonlReader<WireEntry> =
            JsonlReader::new(BufReader::with_capacity(READ_BUFFER_BYTES, file), &path);
        if salvage {
            reader = reader.salvaging();
        }
        let feed = Feed::new();
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&warnings);
        let writer = Arc::clone(&feed);
        std::thread::Builder::new()
            .name("reel-tape".to_owned())
            .spawn(move || {
                for entry in reader.by_ref() {
                    if !writer.push(entry) {
                        return; // the tape was dropped
                    }
                }
                *shared.lock().unwrap_or_else(PoisonError::into_inner) =
                    reader.warnings().iter().map(ToString::to_string).collect();
                // The replay sees the end after the warnings are set.
                writer.end();
            })
            .map_err(io_error)?;
        Ok(Tape {
            source: TapeSource::File(FileSource { feed, warnings }),
            peeked: VecDeque::new(),
            name: path.display().to_string(),
        })
    }

    /// A tape of `entries`, taken from them on a thread of its own at most
    /// [`READ_AHEAD`] entries ahead of the replay, as [`Tape::open`] reads a file: for a
    /// source that checks, counts or watches the entries as they are read (the command
    /// line's reader, a [`crate::tape_scan::TapeScan`]). The source ends the tape by ending;
    /// when the tape is dropped before that, the thread still takes the rest of the source
    /// (and drops it), so that whatever it watches sees the whole recording.
    pub fn streamed<I>(name: impl Into<String>, entries: I) -> std::io::Result<Tape>
    where
        I: IntoIterator<Item = WireEntry>,
        I::IntoIter: Send + 'static,
    {
        let mut entries = entries.into_iter();
        let feed = Feed::new();
        let writer = Arc::clone(&feed);
        std::thread::Builder::new()
            .name("reel-tape".to_owned())
            .spawn(move || {
                for entry in entries.by_ref() {
                    if !writer.push(Ok(entry)) {
                        entries.for_each(drop);
                        return;
                    }
                }
                writer.end();
            })?;
        Ok(Tape {
            source: TapeSource::File(FileSource {
                feed,
                warnings: Arc::default(),
            }),
            peeked: VecDeque::new(),
            name: name.into(),
        })
    }

    /// [`Tape::streamed`], except that the first [`READ_AHEAD`] entries are taken here, on
    /// the caller's thread: a source that ends within them (a short session: the bulk of a
    /// replay farm) becomes a tape in memory, with no thread and no hand-over per entry;
    /// a longer one is streamed as [`Tape::streamed`] streams it, from the entries already
    /// taken. Either way the source is taken to its end, in order, exactly once, and memory
    /// holds at most the read-ahead a streamed tape holds.
    pub fn streamed_unless_short<I>(name: impl Into<String>, entries: I) -> std::io::Result<Tape>
    where
        I: IntoIterator<Item = WireEntry>,
        I::IntoIter: Send + 'static,
    {
        let mut entries = entries.into_iter();
        let mut first = Vec::with_capacity(32);
        while first.len() < READ_AHEAD {
            match entries.next() {
                Some(entry) => first.push(entry),
                None => {
                    let mut tape = Tape::from_entries(first);
                    tape.name = name.into();
                    return Ok(tape);
                }
            }
        }
        Tape::streamed(name, first.into_iter().chain(entries))
    }

    /// How far the reader of a streamed tape ([`Tape::open`], [`Tape::streamed`]) runs
    /// ahead; `None` for a tape in memory, whose entries are all there.
    pub fn read_ahead(&self) -> Option<ReadAhead> {
        match &self.source {
            TapeSource::Memory(_) => None,
            TapeSource::File(file) => Some(ReadAhead(Arc::clone(&file.feed))),
        }
    }

    fn pull(&mut self) -> Option<Result<WireEntry, RecordError>> {
        match &mut self.source {
            TapeSource::Memory(entries) => entries.next().map(Ok),
            TapeSource::File(file) => file.feed.pull(),
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
            TapeSource::File(file) => file
                .warnings
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use reel_recorder::wire_log::{CloseMark, Direction};

    use super::*;

    fn entries(n: u64) -> Vec<WireEntry> {
        let mut entries: Vec<WireEntry> = (1..n)
            .map(|seq| {
                let payload = format!(r#"{{"serverContent":{{"turnComplete":true}},"n":{seq}}}"#);
                WireEntry::frame(
                    seq,
                    Direction::In,
                    1_000 + seq,
                    payload.into_bytes(),
                    None,
                    false,
                )
            })
            .collect();
        let mark = CloseMark {
            code: Some(1000),
            reason: None,
            client: true,
        };
        entries.push(WireEntry::close_mark(n, 1_000 + n, None, mark));
        entries
    }

    fn file_of(name: &str, text: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("reel-tape-{name}-{}.jsonl", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn lines(entries: &[WireEntry]) -> String {
        entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect()
    }

    #[test]
    fn a_file_tape_yields_every_entry_in_order_far_past_the_read_ahead() {
        let all = entries(READ_AHEAD as u64 * 4 + 3);
        let path = file_of("order", &lines(&all));
        let mut tape = Tape::open(&path).unwrap();
        assert_eq!(tape.peek(), Some(&all[0]));
        let mut read = Vec::new();
        while let Some(entry) = tape.next_entry() {
            read.push(entry.unwrap());
        }
        assert_eq!(read, all);
        assert!(tape.peek().is_none());
        assert!(tape.warnings().is_empty());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_torn_last_line_is_a_warning_once_the_end_is_reached() {
        let all = entries(5);
        let mut text = lines(&all);
        text.truncate(text.len() - 10);
        let path = file_of("torn", &text);
        let mut tape = Tape::open(&path).unwrap();
        let read: Vec<WireEntry> = std::iter::from_fn(|| tape.next_entry())
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, all[..4]);
        let warnings = tape.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("torn last line"), "{warnings:?}");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_corrupt_line_is_an_error_in_its_place_and_ends_the_tape() {
        let all = entries(4);
        let text = lines(&all[..2]) + "{not json}\n" + &lines(&all[2..]);
        let path = file_of("corrupt", &text);
        let mut tape = Tape::open(&path).unwrap();
        assert_eq!(tape.next_entry().unwrap().unwrap(), all[0]);
        assert_eq!(tape.next_entry().unwrap().unwrap(), all[1]);
        match tape.next_entry() {
            Some(Err(RecordError::Corrupt { line, .. })) => assert_eq!(line, 3),
            other => panic!("expected the corrupt line 3, got {other:?}"),
        }
        assert!(tape.next_entry().is_none());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_salvaging_tape_ends_before_a_nul_filled_tail() {
        let all = entries(5);
        let text = lines(&all[..3]) + &"\0".repeat(200);
        let path = file_of("nul-tail", &text);
        let mut tape = Tape::open(&path).unwrap();
        for entry in &all[..3] {
            assert_eq!(&tape.next_entry().unwrap().unwrap(), entry);
        }
        match tape.next_entry() {
            Some(Err(RecordError::NulFilled { line, .. })) => assert_eq!(line, 4),
            other => panic!("expected the NUL-filled line 4, got {other:?}"),
        }
        let mut tape = Tape::open_salvaging(&path).unwrap();
        for entry in &all[..3] {
            assert_eq!(&tape.next_entry().unwrap().unwrap(), entry);
        }
        assert!(tape.next_entry().is_none());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let path = std::env::temp_dir().join("reel-tape-does-not-exist.jsonl");
        match Tape::open(&path) {
            Err(RecordError::Io { path: named, .. }) => assert_eq!(named, path),
            other => panic!("expected an I/O error, got {other:?}"),
        }
    }

    /// A source that counts the entries taken from it, and whether it was asked past its end.
    fn counted(
        all: Vec<WireEntry>,
    ) -> (
        impl Iterator<Item = WireEntry> + Send + 'static,
        Arc<std::sync::atomic::AtomicUsize>,
    ) {
        let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = Arc::clone(&taken);
        let source = all.into_iter().inspect(move |_| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        (source, taken)
    }

    #[test]
    fn a_short_source_is_taken_on_the_callers_thread_into_a_tape_in_memory() {
        let all = entries(22);
        let (source, taken) = counted(all.clone());
        let mut tape = Tape::streamed_unless_short("short.wire.jsonl", source).unwrap();
        // Every entry was taken before the call returned: no reader thread, no read-ahead.
        assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), 22);
        assert!(tape.read_ahead().is_none());
        assert_eq!(tape.name, "short.wire.jsonl");
        let read: Vec<WireEntry> = std::iter::from_fn(|| tape.next_entry())
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, all);
    }

    #[test]
    fn a_source_longer_than_the_read_ahead_is_streamed_from_the_entries_already_taken() {
        let all = entries(READ_AHEAD as u64 * 3 + 1);
        let (source, taken) = counted(all.clone());
        let mut tape = Tape::streamed_unless_short("long.wire.jsonl", source).unwrap();
        assert!(tape.read_ahead().is_some());
        let read: Vec<WireEntry> = std::iter::from_fn(|| tape.next_entry())
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, all);
        assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), all.len());
    }

    #[test]
    fn a_source_of_exactly_the_read_ahead_ends_in_order() {
        let all = entries(READ_AHEAD as u64);
        let mut tape = Tape::streamed_unless_short("edge", all.clone()).unwrap();
        let read: Vec<WireEntry> = std::iter::from_fn(|| tape.next_entry())
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, all);
    }

    /// An unmarked outbound frame (a log written before the `source` mark) is the
    /// application's when it is realtime input or client content, told by its top-level
    /// key: the runtime's own frames (a setup, a tool response, a context update) are not
    /// decoded to tell, and a frame that names an application's key but does not decode
    /// is the runtime's, as before.
    #[test]
    fn an_unmarked_frame_is_the_applications_by_its_key_and_decoded_only_then() {
        let classes = [
            (r#"{"setup":{"model":"m"}}"#, false, 0),
            (r#"{"toolResponse":{"functionResponses":[]}}"#, false, 0),
            (r#"{"context_update":{"systemInstruction":{}}}"#, false, 0),
            (r#"{"clientContent":{"turnComplete":true}}"#, true, 1),
            (r#"{"realtime_input":{"audioStreamEnd":true}}"#, true, 1),
            (r#"{"clientContent":{"turnComplete":"yes"}}"#, false, 1),
            (r#"{"\u0063lientContent":{"turnComplete":true}}"#, true, 1),
        ];
        for (payload, app, decodes) in classes {
            let entry = WireEntry::frame(1, Direction::Out, 0, payload.as_bytes(), None, false);
            let before = reel_protocol::client_decodes_on_this_thread();
            let item = TapeItem::of(entry.clone());
            let decoded = reel_protocol::client_decodes_on_this_thread() - before;
            assert_eq!(matches!(item, TapeItem::AppOutbound(_)), app, "{payload}");
            assert_eq!(is_app_outbound(&entry), app, "{payload}");
            assert_eq!(decoded, decodes, "{payload}");
        }
    }

    #[test]
    fn a_tape_dropped_early_stops_its_reader() {
        let all = entries(READ_AHEAD as u64 * 8);
        let path = file_of("dropped", &lines(&all));
        let mut tape = Tape::open(&path).unwrap();
        assert_eq!(tape.next_entry().unwrap().unwrap(), all[0]);
        drop(tape);
        // The reader thread ends at its next hand-over; the file can go at once.
        std::fs::remove_file(path).unwrap();
    }
}
