//! The tapes a server replays, and finding the recorded connection a client is replaying.
//!
//! A tape (wire log) holds one or more connections (entries carry `conn`; absent is the
//! first), split by close markers. Each recorded connection becomes a script of
//! [`Step`]s: a client frame the server expects, then the server frames (and possibly the
//! close) that followed it in the recording, up to the next client frame.
//!
//! A client is matched by its first frame (the setup): every recorded connection whose
//! first client frame matches is a candidate, in tape order (tapes in the order given, a
//! directory's files by name, connections in recorded order). A reconnect is matched the
//! same way: the resumed connection's setup presents the resumption handle the recording
//! presented, so it matches the recorded connection that did. Tapes are held in memory,
//! shared by every connection that replays them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use bytes::Bytes;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_recorder::wire_read::WireLogReader;
use serde_json::Value;

use super::error::TapeLoadError;
use super::matching::FrameMatcher;
use super::test_name::TestName;
use reel_protocol::json::PathDiff;

/// The file name ending of a tape in a tape directory.
pub const TAPE_SUFFIX: &str = ".wire.jsonl";

/// One tape: a name (its file) and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedTape {
    /// The file it came from, or the name it was given.
    pub name: String,
    /// Its entries, in sequence order.
    pub entries: Vec<WireEntry>,
}

/// The recorded sessions a tape server replays, held in memory and shared by every
/// connection.
///
/// A tape holds one or more recorded connections (entries carry `conn`; absent is the
/// first). A client's first frame (its setup) selects every recorded connection whose first
/// client frame matches, in library order: tapes in the order added, a directory's files by
/// name, connections in recorded order. A reconnect is matched the same way: its setup
/// presents the resumption handle the recording presented. When several match, the
/// client's later frames choose among them.
///
/// ```no_run
/// use reel_tape_server::TapeLibrary;
///
/// let mut tapes = TapeLibrary::open("tests/tapes")?; // a file or a directory of *.wire.jsonl
/// tapes.add_file("extra/session.wire.jsonl")?;
/// # Ok::<(), reel_tape_server::TapeLoadError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TapeLibrary {
    tapes: Vec<LoadedTape>,
}

impl TapeLibrary {
    /// No tapes.
    pub fn new() -> Self {
        TapeLibrary::default()
    }

    /// The tape at `path`, or every `*.wire.jsonl` in the directory at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TapeLoadError> {
        let path = path.as_ref();
        let mut library = TapeLibrary::new();
        if path.is_dir() {
            if library.add_dir(path)? == 0 {
                return Err(TapeLoadError::NoTapes {
                    path: path.to_path_buf(),
                });
            }
        } else {
            library.add_file(path)?;
        }
        Ok(library)
    }

    /// Adds the wire log at `path` (checked: sequence order, not empty; a torn last line is
    /// skipped with a warning).
    pub fn add_file(&mut self, path: impl AsRef<Path>) -> Result<(), TapeLoadError> {
        let path = path.as_ref();
        let mut reader = WireLogReader::open(path)?;
        let entries = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
        for warning in reader.warnings() {
            tracing::warn!(tape = %path.display(), %warning, "tape read with a warning");
        }
        self.add_entries(path.display().to_string(), entries);
        Ok(())
    }

    /// Adds every `*.wire.jsonl` file in `dir`, in file-name order; returns how many.
    pub fn add_dir(&mut self, dir: impl AsRef<Path>) -> Result<usize, TapeLoadError> {
        let dir = dir.as_ref();
        let list_error = |source| TapeLoadError::Dir {
            path: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<PathBuf> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(list_error)? {
            let path = entry.map_err(list_error)?.path();
            let is_tape = path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.ends_with(TAPE_SUFFIX));
            if is_tape && path.is_file() {
                files.push(path);
            }
        }
        files.sort();
        for file in &files {
            self.add_file(file)?;
        }
        Ok(files.len())
    }

    /// Adds a tape held in memory.
    pub fn add_entries(&mut self, name: impl Into<String>, entries: Vec<WireEntry>) {
        self.tapes.push(LoadedTape {
            name: name.into(),
            entries,
        });
    }

    /// The same library with a tape held in memory added.
    pub fn with_entries(mut self, name: impl Into<String>, entries: Vec<WireEntry>) -> Self {
        self.add_entries(name, entries);
        self
    }

    /// The tapes, in matching order.
    pub fn tapes(&self) -> &[LoadedTape] {
        &self.tapes
    }

    /// How many tapes.
    pub fn len(&self) -> usize {
        self.tapes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tapes.is_empty()
    }
}

/// What the server does after a client frame: send these, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// A recorded server frame, sent as it was recorded.
    Frame {
        /// Its recorded sequence number.
        seq: u64,
        /// The exact bytes.
        payload: Bytes,
        /// Whether it was a binary frame.
        binary: bool,
        /// Milliseconds after the entry before it, in the recording.
        delay_ms: u64,
    },
    /// The recorded end of the connection.
    Close {
        /// How it ended.
        mark: CloseMark,
        /// Milliseconds after the entry before it, in the recording.
        delay_ms: u64,
    },
}

impl Reply {
    /// Whether two replies send the same thing (timing aside).
    fn same_as(&self, other: &Reply) -> bool {
        match (self, other) {
            (
                Reply::Frame {
                    payload: a,
                    binary: x,
                    ..
                },
                Reply::Frame {
                    payload: b,
                    binary: y,
                    ..
                },
            ) => a == b && x == y,
            (Reply::Close { mark: a, .. }, Reply::Close { mark: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// One recorded client frame and what followed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// The recorded frame's sequence number.
    pub seq: u64,
    /// The recorded frame, prepared for comparison.
    pub expected: Value,
    /// The recorded frame as it was written, when it is a Live client frame reel reads: a
    /// client frame byte for byte the same matches it without being read (its prepared
    /// form could only be `expected`). `None` for a frame reel cannot read, which a client
    /// sending the same bytes still fails on.
    pub recorded: Option<Bytes>,
    /// What the server sent after it.
    pub replies: Vec<Reply>,
}

/// One recorded connection, as a script.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TapeConn {
    /// The tape's name.
    pub tape: Arc<str>,
    /// The connection's number in the tape (1-based).
    pub conn: u32,
    /// The script; never empty.
    pub steps: Vec<Step>,
}

impl TapeConn {
    /// Whether this connection sends the same thing as `other` after step `index`.
    pub(crate) fn replies_match(&self, other: &TapeConn, index: usize) -> bool {
        match (self.steps.get(index), other.steps.get(index)) {
            (Some(a), Some(b)) => {
                a.replies.len() == b.replies.len()
                    && a.replies.iter().zip(&b.replies).all(|(x, y)| x.same_as(y))
            }
            _ => false,
        }
    }
}

/// The recorded connection closest to a client's first frame, when none matches.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosestTape {
    /// The tape.
    pub tape: String,
    /// The connection in it (1-based).
    pub conn: u32,
    /// How the client's first frame differs from the recorded one.
    pub diffs: Vec<PathDiff>,
}

/// Which recorded connections a client's first frame selects.
#[derive(Debug)]
pub(crate) enum Selection {
    /// These match, in tape order.
    Matched(Vec<Arc<TapeConn>>),
    /// None matches; the closest, if there is any tape.
    NoMatch(Option<ClosestTape>),
}

/// Every recorded connection of a server, shared by its connections. Recordings made in
/// auto mode are added while the server runs.
#[derive(Debug)]
pub(crate) struct TapeIndex {
    conns: RwLock<Arc<Vec<Arc<TapeConn>>>>,
    matcher: FrameMatcher,
}

impl TapeIndex {
    /// Indexes `library`, comparing frames with `matcher`.
    pub(crate) fn build(
        library: &TapeLibrary,
        matcher: FrameMatcher,
    ) -> Result<Self, TapeLoadError> {
        let mut conns = Vec::new();
        for tape in library.tapes() {
            let scripts = scripts(tape, &matcher);
            if scripts.is_empty() {
                return Err(TapeLoadError::NoClientFrame {
                    name: tape.name.clone(),
                });
            }
            conns.extend(scripts.into_iter().map(Arc::new));
        }
        Ok(TapeIndex {
            conns: RwLock::new(Arc::new(conns)),
            matcher,
        })
    }

    /// The matcher frames are compared with.
    pub(crate) fn matcher(&self) -> &FrameMatcher {
        &self.matcher
    }

    /// How many recorded connections are indexed.
    pub(crate) fn len(&self) -> usize {
        self.snapshot().len()
    }

    fn snapshot(&self) -> Arc<Vec<Arc<TapeConn>>> {
        self.conns
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds a tape (a recording just made); it is matched after the ones already here.
    pub(crate) fn add(&self, tape: &LoadedTape) {
        let scripts = scripts(tape, &self.matcher);
        if scripts.is_empty() {
            return;
        }
        let mut guard = self.conns.write().unwrap_or_else(PoisonError::into_inner);
        let mut conns = Vec::clone(&guard);
        conns.extend(scripts.into_iter().map(Arc::new));
        *guard = Arc::new(conns);
    }

    /// Whether any tape in the index belongs to `test`.
    pub(crate) fn has_test(&self, test: &TestName) -> bool {
        self.snapshot().iter().any(|conn| test.owns(&conn.tape))
    }

    /// The recorded connections whose first client frame matches `opening` (prepared),
    /// among `test`'s tapes when the client named a test.
    pub(crate) fn select(&self, opening: &Value, test: Option<&TestName>) -> Selection {
        let conns = self.snapshot();
        let mut matched = Vec::new();
        let mut closest: Option<(usize, &Arc<TapeConn>, Vec<PathDiff>)> = None;
        let eligible = conns
            .iter()
            .filter(|conn| test.is_none_or(|test| test.owns(&conn.tape)));
        for conn in eligible {
            let Some(first) = conn.steps.first() else {
                continue;
            };
            let diffs = FrameMatcher::diff(&first.expected, opening);
            if diffs.is_empty() {
                matched.push(conn.clone());
            } else if matched.is_empty() && closest.as_ref().is_none_or(|(n, ..)| diffs.len() < *n)
            {
                closest = Some((diffs.len(), conn, diffs));
            }
        }
        if matched.is_empty() {
            Selection::NoMatch(closest.map(|(_, conn, diffs)| ClosestTape {
                tape: conn.tape.to_string(),
                conn: conn.conn,
                diffs,
            }))
        } else {
            Selection::Matched(matched)
        }
    }
}

/// The scripts of a tape's connections, in connection order; connections without a client
/// frame are left out.
fn scripts(tape: &LoadedTape, matcher: &FrameMatcher) -> Vec<TapeConn> {
    let name: Arc<str> = Arc::from(tape.name.as_str());
    let mut by_conn: BTreeMap<u32, Vec<&WireEntry>> = BTreeMap::new();
    for entry in &tape.entries {
        by_conn
            .entry(entry.conn.unwrap_or(1))
            .or_default()
            .push(entry);
    }
    by_conn
        .into_iter()
        .filter_map(|(conn, entries)| script(name.clone(), conn, &entries, matcher))
        .collect()
}

fn script(
    tape: Arc<str>,
    conn: u32,
    entries: &[&WireEntry],
    matcher: &FrameMatcher,
) -> Option<TapeConn> {
    let mut steps: Vec<Step> = Vec::new();
    // Server frames recorded before the first client frame go out after it.
    let mut leading: Vec<Reply> = Vec::new();
    let mut previous_ts: Option<u64> = None;
    for entry in entries {
        let delay_ms = previous_ts.map_or(0, |ts| entry.ts_ms.saturating_sub(ts));
        previous_ts = Some(entry.ts_ms);
        let reply = match (&entry.close, entry.dir) {
            (Some(mark), _) => Reply::Close {
                mark: mark.clone(),
                delay_ms,
            },
            (None, Direction::Out) => {
                let mut replies = std::mem::take(&mut leading);
                replies.shrink_to_fit();
                let (expected, readable) = matcher.prepare_recorded(&entry.payload);
                steps.push(Step {
                    seq: entry.seq,
                    expected,
                    recorded: readable.then(|| entry.payload.clone()),
                    replies,
                });
                continue;
            }
            (None, Direction::In) => Reply::Frame {
                seq: entry.seq,
                payload: entry.payload.clone(),
                binary: entry.binary,
                delay_ms,
            },
        };
        let closes = matches!(reply, Reply::Close { .. });
        match steps.last_mut() {
            Some(step) => step.replies.push(reply),
            None => leading.push(reply),
        }
        if closes {
            break;
        }
    }
    if steps.is_empty() {
        return None;
    }
    Some(TapeConn { tape, conn, steps })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::matching::Matching;

    fn entry(seq: u64, dir: Direction, ts: u64, payload: &str, conn: Option<u32>) -> WireEntry {
        WireEntry::frame(seq, dir, ts, payload.as_bytes().to_vec(), conn, false)
    }

    fn matcher() -> FrameMatcher {
        FrameMatcher::new(&Matching::Strict).unwrap()
    }

    #[test]
    fn connections_become_scripts_of_steps_and_replies() {
        let mark = CloseMark {
            code: Some(1000),
            reason: Some("go_away".into()),
            client: true,
        };
        let tape = LoadedTape {
            name: "t".into(),
            entries: vec![
                entry(1, Direction::Out, 100, r#"{"setup":{"model":"m"}}"#, None),
                entry(2, Direction::In, 130, r#"{"setupComplete":{}}"#, None),
                WireEntry::close_mark(3, 150, None, mark.clone()),
                entry(
                    4,
                    Direction::Out,
                    200,
                    r#"{"setup":{"model":"m","sessionResumption":{"handle":"h"}}}"#,
                    Some(2),
                ),
                entry(5, Direction::In, 260, r#"{"setupComplete":{}}"#, Some(2)),
            ],
        };
        let scripts = scripts(&tape, &matcher());
        assert_eq!(scripts.len(), 2);
        assert_eq!(scripts[0].conn, 1);
        assert_eq!(scripts[0].steps.len(), 1);
        assert_eq!(
            scripts[0].steps[0].expected,
            json!({"setup": {"model": "m"}})
        );
        assert_eq!(
            scripts[0].steps[0].replies,
            vec![
                Reply::Frame {
                    seq: 2,
                    payload: Bytes::from_static(br#"{"setupComplete":{}}"#),
                    binary: false,
                    delay_ms: 30,
                },
                Reply::Close { mark, delay_ms: 20 },
            ]
        );
        assert_eq!(scripts[1].conn, 2);
        assert_eq!(scripts[1].steps[0].seq, 4);
        assert!(scripts[0].replies_match(&scripts[0], 0));
        assert!(!scripts[0].replies_match(&scripts[1], 0));
    }

    #[test]
    fn a_client_frame_recorded_as_is_matches_without_being_read_only_if_reel_reads_it() {
        use crate::replay_session::recorded_as_is;
        let audio =
            r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAAA"}}}"#;
        let tape = |name: &str, second: &str| LoadedTape {
            name: name.into(),
            entries: vec![
                entry(1, Direction::Out, 100, r#"{"setup":{"model":"m"}}"#, None),
                entry(2, Direction::In, 130, r#"{"setupComplete":{}}"#, None),
                entry(3, Direction::Out, 150, second, None),
            ],
        };
        let readable = Arc::new(scripts(&tape("a", audio), &matcher()).remove(0));
        assert_eq!(
            readable.steps[1].recorded.as_deref(),
            Some(audio.as_bytes())
        );
        // The same bytes: a match, unread.
        assert!(recorded_as_is(
            std::slice::from_ref(&readable),
            1,
            audio.as_bytes()
        ));
        // Other bytes of the same frame (the keys in another order) are read and compared.
        let reordered =
            r#"{"realtimeInput":{"audio":{"data":"AAAA","mimeType":"audio/pcm;rate=16000"}}}"#;
        assert!(!recorded_as_is(
            std::slice::from_ref(&readable),
            1,
            reordered.as_bytes()
        ));
        // Every candidate must have recorded these bytes.
        let other = Arc::new(scripts(&tape("b", reordered), &matcher()).remove(0));
        assert!(!recorded_as_is(
            &[readable.clone(), other],
            1,
            audio.as_bytes()
        ));
        // A recorded frame reel cannot read is never matched unread: a client sending the
        // same bytes is still told its frame is not a Live client frame.
        let unreadable = Arc::new(scripts(&tape("c", r#"{"nonsense":1}"#), &matcher()).remove(0));
        assert_eq!(unreadable.steps[1].recorded, None);
        assert!(!recorded_as_is(&[unreadable], 1, br#"{"nonsense":1}"#));
        // Past the script's end, or with no candidate: no.
        assert!(!recorded_as_is(
            std::slice::from_ref(&readable),
            2,
            audio.as_bytes()
        ));
        assert!(!recorded_as_is(&[], 1, audio.as_bytes()));
    }

    #[test]
    fn a_setup_selects_its_connection_or_names_the_closest() {
        let library = TapeLibrary::new()
            .with_entries(
                "a",
                vec![entry(
                    1,
                    Direction::Out,
                    1,
                    r#"{"setup":{"model":"a"}}"#,
                    None,
                )],
            )
            .with_entries(
                "b",
                vec![entry(
                    1,
                    Direction::Out,
                    1,
                    r#"{"setup":{"model":"b","tools":[]}}"#,
                    None,
                )],
            );
        let index = TapeIndex::build(&library, matcher()).unwrap();
        match index.select(&json!({"setup": {"model": "b", "tools": []}}), None) {
            Selection::Matched(conns) => {
                assert_eq!(conns.len(), 1);
                assert_eq!(&*conns[0].tape, "b");
            }
            other => panic!("{other:?}"),
        }
        match index.select(&json!({"setup": {"model": "c"}}), None) {
            Selection::NoMatch(Some(closest)) => assert_eq!(
                closest,
                ClosestTape {
                    tape: "a".into(),
                    conn: 1,
                    diffs: vec![PathDiff {
                        path: "setup.model".into(),
                        expected: Some(json!("a")),
                        actual: Some(json!("c")),
                    }],
                }
            ),
            other => panic!("{other:?}"),
        }
        index.add(&LoadedTape {
            name: "c".into(),
            entries: vec![entry(
                1,
                Direction::Out,
                1,
                r#"{"setup":{"model":"c"}}"#,
                None,
            )],
        });
        assert_eq!(index.len(), 3);
        assert!(matches!(
            index.select(&json!({"setup": {"model": "c"}}), None),
            Selection::Matched(_)
        ));
    }

    #[test]
    fn a_tape_without_client_frames_is_refused() {
        let library = TapeLibrary::new().with_entries(
            "only-in",
            vec![entry(1, Direction::In, 1, r#"{"setupComplete":{}}"#, None)],
        );
        let error = TapeIndex::build(&library, matcher()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the tape only-in has no outbound (client) frame to match a client against"
        );
    }
}
