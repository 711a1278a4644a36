//! The recorded journal against a replay's, entry by entry: every field of every mutation
//! (sequence, key, old and new values, origin, timestamp, delta), in order.
//!
//! A journal diff of final values ([`crate::journal_diff`]) says which keys ended
//! differently; this says whether the replay wrote the same history, and where it first
//! parted from it. The recorded journal is taken one entry at a time
//! ([`JournalMatcher::push`]), so a journal file of any length is compared as it is read.
//!
//! ```
//! use reel_recorder::journal::StateMutation;
//! use reel_replayer::journal_match::compare_journals;
//! use serde_json::json;
//!
//! let set = |sequence, key: &str, new, timestamp_ms| StateMutation {
//!     sequence, key: key.into(), old: json!(null), new, origin: "set".into(),
//!     timestamp_ms, delta: false,
//! };
//! let recorded = [set(1, "app:city", json!("London"), 1_000), set(2, "app:temp", json!(22), 1_040)];
//! let replayed = [set(1, "app:city", json!("London"), 1_000), set(2, "app:temp", json!(22), 1_041)];
//! let compared = compare_journals(&recorded, &replayed);
//! assert!(!compared.is_identical());
//! assert_eq!(
//!     compared.first_difference.unwrap().to_string(),
//!     "entry 2 differs in timestamp_ms: recorded app:temp = 22 (set at 1040), replay app:temp = 22 (set at 1041)"
//! );
//! ```

use std::fmt;
use std::sync::{Mutex, PoisonError};

use reel_recorder::RecordError;
use reel_recorder::journal::{JournalSink, StateMutation};
use serde::Serialize;

/// How a replay's journal compares with the recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JournalMatch {
    /// Mutations in the recorded journal.
    pub recorded: usize,
    /// Mutations in the replay's journal.
    pub replayed: usize,
    /// The first entry that differs, if any.
    pub first_difference: Option<EntryMismatch>,
}

impl JournalMatch {
    /// Whether the replay wrote the recorded journal again, entry by entry.
    pub fn is_identical(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// The first entry where two journals part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryMismatch {
    /// Its position in the journals, from 1.
    pub entry: usize,
    /// The recorded entry there (`None`: the recording ends before it).
    pub recorded: Option<StateMutation>,
    /// The replay's entry there (`None`: the replay ends before it).
    pub replayed: Option<StateMutation>,
    /// The fields that differ, in the journal's column order; empty when one side has no
    /// entry there.
    pub fields: Vec<&'static str>,
}

/// `entry N differs in F: recorded K = V (origin at T), replay K = V (origin at T)`, or
/// `entry N: recorded …, missing on replay`, or `entry N: extra on replay: …`.
impl fmt::Display for EntryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entry = self.entry;
        match (&self.recorded, &self.replayed) {
            (Some(recorded), Some(replayed)) => write!(
                f,
                "entry {entry} differs in {}: recorded {}, replay {}",
                self.fields.join(", "),
                Short(recorded),
                Short(replayed)
            ),
            (Some(recorded), None) => {
                write!(
                    f,
                    "entry {entry}: recorded {}, missing on replay",
                    Short(recorded)
                )
            }
            (None, Some(replayed)) => {
                write!(f, "entry {entry}: extra on replay: {}", Short(replayed))
            }
            (None, None) => write!(f, "entry {entry}: missing on both sides"),
        }
    }
}

/// One mutation on one line: `key = new (origin at timestamp)`, a delta commit marked
/// (`…, delta)`).
struct Short<'a>(&'a StateMutation);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        let delta = if m.delta { ", delta" } else { "" };
        write!(
            f,
            "{} = {} ({} at {}{delta})",
            m.key, m.new, m.origin, m.timestamp_ms
        )
    }
}

/// The fields of two mutations that differ, in column order.
fn differing_fields(a: &StateMutation, b: &StateMutation) -> Vec<&'static str> {
    let checks = [
        ("sequence", a.sequence != b.sequence),
        ("key", a.key != b.key),
        ("old", a.old != b.old),
        ("new", a.new != b.new),
        ("origin", a.origin != b.origin),
        ("timestamp_ms", a.timestamp_ms != b.timestamp_ms),
        ("delta", a.delta != b.delta),
    ];
    checks
        .into_iter()
        .filter_map(|(name, differs)| differs.then_some(name))
        .collect()
}

/// Compares recorded entries, pushed one at a time in journal order, with a replay's
/// journal.
#[derive(Debug)]
pub struct JournalMatcher<'a> {
    replayed: &'a [StateMutation],
    recorded: usize,
    first_difference: Option<EntryMismatch>,
}

impl<'a> JournalMatcher<'a> {
    /// A comparison with the replay's journal `replayed`, no recorded entry seen yet.
    pub fn new(replayed: &'a [StateMutation]) -> Self {
        JournalMatcher {
            replayed,
            recorded: 0,
            first_difference: None,
        }
    }

    /// The next recorded entry.
    pub fn push(&mut self, recorded: &StateMutation) {
        self.recorded += 1;
        if self.first_difference.is_some() {
            return;
        }
        let replayed = self.replayed.get(self.recorded - 1);
        let fields = match replayed {
            Some(replayed) => differing_fields(recorded, replayed),
            None => Vec::new(),
        };
        if replayed.is_none() || !fields.is_empty() {
            self.first_difference = Some(EntryMismatch {
                entry: self.recorded,
                recorded: Some(recorded.clone()),
                replayed: replayed.cloned(),
                fields,
            });
        }
    }

    /// The comparison, once every recorded entry has been pushed: a replay that wrote
    /// more entries than recorded differs at the first extra one.
    pub fn finish(self) -> JournalMatch {
        let first_difference = self.first_difference.or_else(|| {
            self.replayed.get(self.recorded).map(|extra| EntryMismatch {
                entry: self.recorded + 1,
                recorded: None,
                replayed: Some(extra.clone()),
                fields: Vec::new(),
            })
        });
        JournalMatch {
            recorded: self.recorded,
            replayed: self.replayed.len(),
            first_difference,
        }
    }
}

/// Compares two journals held in memory, entry by entry.
pub fn compare_journals(recorded: &[StateMutation], replayed: &[StateMutation]) -> JournalMatch {
    let mut matcher = JournalMatcher::new(replayed);
    for mutation in recorded {
        matcher.push(mutation);
    }
    matcher.finish()
}

/// A journal sink that compares a replay's journal with the recorded one while the replay
/// writes it, reading the recorded journal one entry ahead of the replay: neither journal
/// is held in memory, so a session of any length is compared in bounded memory. The same
/// comparison as [`compare_journals`]. It reads its file on the state's write path
/// ([`JournalSink::does_io`] is `false`, so the entries reach it in order and at once): an
/// offline replay has no live latency to protect.
pub struct StreamingJournalMatch {
    state: Mutex<Streaming>,
}

type RecordedEntries = Box<dyn Iterator<Item = Result<StateMutation, RecordError>> + Send>;

struct Streaming {
    recorded_entries: RecordedEntries,
    recorded: usize,
    replayed: usize,
    first_difference: Option<EntryMismatch>,
    error: Option<RecordError>,
}

impl fmt::Debug for StreamingJournalMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingJournalMatch")
            .finish_non_exhaustive()
    }
}

impl StreamingJournalMatch {
    /// A comparison with the recorded journal `recorded` (read as the replay writes).
    pub fn new<I>(recorded: I) -> Self
    where
        I: IntoIterator<Item = Result<StateMutation, RecordError>>,
        I::IntoIter: Send + 'static,
    {
        StreamingJournalMatch {
            state: Mutex::new(Streaming {
                recorded_entries: Box::new(recorded.into_iter()),
                recorded: 0,
                replayed: 0,
                first_difference: None,
                error: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Streaming> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The comparison, once the replay has written its last entry: the rest of the recorded
    /// journal is read (a recording with more entries differs at the first the replay did
    /// not write). Fails with the recorded journal's first bad entry.
    pub fn finish(&self) -> Result<JournalMatch, RecordError> {
        let mut state = self.lock();
        if let Some(error) = state.error.take() {
            return Err(error);
        }
        while let Some(next) = state.recorded_entries.next() {
            let recorded = next?;
            state.recorded += 1;
            if state.first_difference.is_none() {
                state.first_difference = Some(EntryMismatch {
                    entry: state.recorded,
                    recorded: Some(recorded),
                    replayed: None,
                    fields: Vec::new(),
                });
            }
        }
        Ok(JournalMatch {
            recorded: state.recorded,
            replayed: state.replayed,
            first_difference: state.first_difference.clone(),
        })
    }
}

impl JournalSink for StreamingJournalMatch {
    fn record(&self, replayed: &StateMutation) {
        let mut state = self.lock();
        state.replayed += 1;
        if state.first_difference.is_some() || state.error.is_some() {
            return;
        }
        match state.recorded_entries.next() {
            Some(Ok(recorded)) => {
                state.recorded += 1;
                let fields = differing_fields(&recorded, replayed);
                if !fields.is_empty() {
                    state.first_difference = Some(EntryMismatch {
                        entry: state.recorded,
                        recorded: Some(recorded),
                        replayed: Some(replayed.clone()),
                        fields,
                    });
                }
            }
            Some(Err(error)) => state.error = Some(error),
            None => {
                state.first_difference = Some(EntryMismatch {
                    entry: state.replayed,
                    recorded: None,
                    replayed: Some(replayed.clone()),
                    fields: Vec::new(),
                });
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A plain set of `key` to `new`, the `sequence`th mutation, at `timestamp_ms`.
    pub(crate) fn set(sequence: u64, key: &str, new: Value, timestamp_ms: u64) -> StateMutation {
        StateMutation {
            sequence,
            key: key.into(),
            old: Value::Null,
            new,
            origin: "set".into(),
            timestamp_ms,
            delta: false,
        }
    }

    #[test]
    fn equal_journals_are_identical() {
        let journal = [set(1, "a", json!(1), 10), set(2, "b", json!(2), 20)];
        assert_eq!(
            compare_journals(&journal, &journal),
            JournalMatch {
                recorded: 2,
                replayed: 2,
                first_difference: None
            }
        );
    }

    #[test]
    fn the_first_differing_entry_names_every_field_that_differs() {
        let recorded = [
            set(1, "a", json!(1), 10),
            set(2, "b", json!(2), 20),
            set(3, "c", json!(3), 30),
        ];
        let mut changed = set(2, "b", json!(5), 21);
        changed.delta = true;
        let replayed = [
            set(1, "a", json!(1), 10),
            changed,
            set(3, "c", json!(9), 30),
        ];
        let compared = compare_journals(&recorded, &replayed);
        let first = compared.first_difference.unwrap();
        assert_eq!(
            (first.entry, first.fields.clone()),
            (2, vec!["new", "timestamp_ms", "delta"])
        );
        assert_eq!(
            first.to_string(),
            "entry 2 differs in new, timestamp_ms, delta: recorded b = 2 (set at 20), \
             replay b = 5 (set at 21, delta)"
        );
    }

    #[test]
    fn a_shorter_or_longer_replay_differs_where_one_side_ends() {
        let recorded = [set(1, "a", json!(1), 10), set(2, "b", json!("x"), 20)];
        let short = compare_journals(&recorded, &recorded[..1]);
        assert_eq!((short.recorded, short.replayed), (2, 1));
        assert_eq!(
            short.first_difference.unwrap().to_string(),
            r#"entry 2: recorded b = "x" (set at 20), missing on replay"#
        );
        let long = compare_journals(&recorded[..1], &recorded);
        assert_eq!(
            long.first_difference.unwrap().to_string(),
            r#"entry 2: extra on replay: b = "x" (set at 20)"#
        );
    }

    #[test]
    fn streaming_compares_as_compare_journals_does() {
        let a = set(1, "app:city", json!("London"), 1_000);
        let b = set(2, "app:temp", json!(22), 1_040);
        let b_late = set(2, "app:temp", json!(22), 1_041);
        let c = set(3, "app:done", json!(true), 1_080);
        let cases: [(Vec<StateMutation>, Vec<StateMutation>); 5] = [
            (vec![a.clone(), b.clone()], vec![a.clone(), b.clone()]),
            (vec![a.clone(), b.clone()], vec![a.clone(), b_late.clone()]),
            (vec![a.clone(), b.clone(), c.clone()], vec![a.clone()]),
            (vec![a.clone()], vec![a.clone(), b.clone(), c.clone()]),
            (vec![], vec![]),
        ];
        for (recorded, replayed) in cases {
            let expected = compare_journals(&recorded, &replayed);
            let streaming = StreamingJournalMatch::new(recorded.into_iter().map(Ok));
            for mutation in &replayed {
                streaming.record(mutation);
            }
            assert_eq!(streaming.finish().unwrap(), expected);
        }
    }
}
