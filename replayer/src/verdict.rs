//! CLEAN or DRIFT: the one definition of a replay that reproduced its recording, used by
//! `reel replay`, `reel demo` and `ReplayOutcome::is_clean` alike.
//!
//! A replay is CLEAN when nothing it was checked against parted from the recording:
//!
//! - every runtime frame it sent (setup, tool responses, instruction updates) matched the
//!   recorded one — no [`Divergence`];
//! - given the recorded journal, it wrote that journal again entry by entry — every field
//!   of every mutation, timestamps included ([`JournalMatch`]) — and ended with the same
//!   final value of every key ([`JournalDiff`]);
//! - given a cassette, its out-of-band model calls matched the recorded ones;
//! - given recorded resolutions (`X.resolved.jsonl`), its resolvers read the recorded
//!   inputs and made the recorded calls, no more, no fewer.
//!
//! Each check a caller has is added to the [`Verdict`]; what it does not have (no journal,
//! no cassette) is not held against the replay, and the verdict says so.
//!
//! ```
//! use reel_replayer::journal_match::compare_journals;
//! use reel_replayer::verdict::Verdict;
//!
//! let verdict = Verdict::new(&[]).journal(&compare_journals(&[], &[]));
//! assert!(verdict.is_clean());
//! assert_eq!(verdict.to_string(), "CLEAN — the replay reproduced the session exactly.");
//!
//! let drifted = Verdict::new(&[]).model_calls(2);
//! assert!(!drifted.is_clean());
//! assert_eq!(
//!     drifted.to_string(),
//!     "DRIFT — the replay parted from the recording: 2 out-of-band model calls."
//! );
//! ```

use std::fmt;

use serde::Serialize;

use crate::divergence::Divergence;
use crate::journal_diff::JournalDiff;
use crate::journal_match::JournalMatch;

/// One way a replay parted from its recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Drift {
    /// Runtime frames sent differently, not sent, or sent in excess.
    Outbound {
        /// How many divergences.
        divergences: usize,
    },
    /// The replay did not write the recorded journal again, entry by entry.
    Journal {
        /// The first entry that differs, from 1.
        from_entry: usize,
        /// Mutations in the recorded journal.
        recorded: usize,
        /// Mutations in the replay's journal.
        replayed: usize,
    },
    /// Keys whose final value differs from the recorded journal's.
    FinalState {
        /// How many keys.
        keys: usize,
    },
    /// Out-of-band model calls that parted from the cassette.
    ModelCalls {
        /// How many calls.
        calls: usize,
    },
    /// Resolutions (outside results: fetches, sub-agents) that parted from the recorded
    /// ones: other inputs, a call not recorded, a recorded call not made.
    Resolutions {
        /// How many.
        count: usize,
        /// The resolvers they belong to, each once, in order of first drift.
        resolvers: Vec<String>,
    },
}

/// `1 outbound divergence`, `the journal from entry 41 on`, `2 keys' final values`,
/// `1 out-of-band model call`.
impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Outbound { divergences: 1 } => write!(f, "1 outbound divergence"),
            Drift::Outbound { divergences } => write!(f, "{divergences} outbound divergences"),
            Drift::Journal { from_entry, .. } => {
                write!(f, "the journal from entry {from_entry} on")
            }
            Drift::FinalState { keys: 1 } => write!(f, "1 key's final value"),
            Drift::FinalState { keys } => write!(f, "{keys} keys' final values"),
            Drift::ModelCalls { calls: 1 } => write!(f, "1 out-of-band model call"),
            Drift::ModelCalls { calls } => write!(f, "{calls} out-of-band model calls"),
            Drift::Resolutions { count, resolvers } => write!(
                f,
                "{count} resolution{} of {}",
                if *count == 1 { "" } else { "s" },
                resolvers
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Whether a replay reproduced its recording, and if not, every way it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Whether nothing drifted.
    clean: bool,
    /// Mutations compared entry by entry; `None` when no recorded journal was given.
    journal_entries: Option<usize>,
    /// What drifted, in the order the checks were added.
    drift: Vec<Drift>,
}

impl Verdict {
    /// The verdict on a replay's runtime frames: clean when `divergences` is empty.
    pub fn new(divergences: &[Divergence]) -> Self {
        let mut verdict = Verdict {
            clean: true,
            journal_entries: None,
            drift: Vec::new(),
        };
        if !divergences.is_empty() {
            verdict.push(Drift::Outbound {
                divergences: divergences.len(),
            });
        }
        verdict
    }

    /// Adds the entry-by-entry comparison of the recorded journal with the replay's.
    pub fn journal(mut self, compared: &JournalMatch) -> Self {
        self.journal_entries = Some(compared.recorded);
        if let Some(first) = &compared.first_difference {
            self.push(Drift::Journal {
                from_entry: first.entry,
                recorded: compared.recorded,
                replayed: compared.replayed,
            });
        }
        self
    }

    /// Adds the recorded journal's final values against the replay's final state.
    pub fn final_state(mut self, diff: &JournalDiff) -> Self {
        if !diff.is_clean() {
            self.push(Drift::FinalState {
                keys: diff.diverged.len(),
            });
        }
        self
    }

    /// Adds how many out-of-band model calls parted from the cassette.
    pub fn model_calls(mut self, drifted: usize) -> Self {
        if drifted > 0 {
            self.push(Drift::ModelCalls { calls: drifted });
        }
        self
    }

    /// Adds the resolutions that parted from the recorded ones, one resolver name per
    /// drift (a name may come several times).
    pub fn resolvers(mut self, drifted: &[String]) -> Self {
        if !drifted.is_empty() {
            let mut resolvers: Vec<String> = Vec::new();
            for name in drifted {
                if !resolvers.contains(name) {
                    resolvers.push(name.clone());
                }
            }
            self.push(Drift::Resolutions {
                count: drifted.len(),
                resolvers,
            });
        }
        self
    }

    fn push(&mut self, drift: Drift) {
        self.clean = false;
        self.drift.push(drift);
    }

    /// CLEAN: nothing drifted.
    pub fn is_clean(&self) -> bool {
        self.clean
    }

    /// Every way the replay drifted, in the order the checks were added.
    pub fn drift(&self) -> &[Drift] {
        &self.drift
    }

    /// How many journal entries were compared; `None` when no recorded journal was given.
    pub fn journal_entries(&self) -> Option<usize> {
        self.journal_entries
    }
}

/// `CLEAN — the replay reproduced the session exactly.` (with a journal compared),
/// `CLEAN — every runtime frame as recorded; no journal given to compare.`, or
/// `DRIFT — the replay parted from the recording: 1 outbound divergence, the journal from
/// entry 41 on.`
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.clean {
            return match self.journal_entries {
                Some(_) => write!(f, "CLEAN — the replay reproduced the session exactly."),
                None => write!(
                    f,
                    "CLEAN — every runtime frame as recorded; no journal given to compare."
                ),
            };
        }
        write!(f, "DRIFT — the replay parted from the recording: ")?;
        for (index, drift) in self.drift.iter().enumerate() {
            if index > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{drift}")?;
        }
        write!(f, ".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divergence::DivergenceKind;
    use crate::journal_diff::JournalFinal;
    use crate::journal_match::compare_journals;
    use crate::journal_match::tests::set;
    use serde_json::json;

    #[test]
    fn without_a_journal_only_the_frames_count_and_the_verdict_says_so() {
        let verdict = Verdict::new(&[]);
        assert!(verdict.is_clean());
        assert_eq!(verdict.journal_entries(), None);
        assert_eq!(
            verdict.to_string(),
            "CLEAN — every runtime frame as recorded; no journal given to compare."
        );
        assert_eq!(
            serde_json::to_value(&verdict).unwrap(),
            json!({"clean": true, "journal_entries": null, "drift": []})
        );
    }

    #[test]
    fn resolutions_that_drifted_are_named_by_resolver() {
        let names = ["availability", "check", "availability"].map(String::from);
        let verdict = Verdict::new(&[]).resolvers(&names).resolvers(&[]);
        assert_eq!(
            verdict.to_string(),
            "DRIFT — the replay parted from the recording: 3 resolutions of `availability`, `check`."
        );
        assert_eq!(
            serde_json::to_value(verdict.drift()).unwrap(),
            json!([{"kind": "resolutions", "count": 3, "resolvers": ["availability", "check"]}])
        );
        assert!(Verdict::new(&[]).resolvers(&[]).is_clean());
    }

    #[test]
    fn every_kind_of_drift_is_counted_in_order() {
        let missing = Divergence {
            seq: 7,
            kind: DivergenceKind::Missing,
            expected: Some(json!({"toolResponse": {}})),
            actual: None,
        };
        let recorded = [set(1, "a", json!(1), 10), set(2, "b", json!(2), 20)];
        let replayed = [set(1, "a", json!(1), 10), set(2, "b", json!(3), 20)];
        let final_diff = JournalFinal::from_mutations(recorded.clone())
            .diff([("a", &json!(1)), ("b", &json!(3))]);
        let verdict = Verdict::new(&[missing.clone(), missing])
            .journal(&compare_journals(&recorded, &replayed))
            .final_state(&final_diff)
            .model_calls(1);
        assert!(!verdict.is_clean());
        assert_eq!(
            verdict.drift(),
            [
                Drift::Outbound { divergences: 2 },
                Drift::Journal {
                    from_entry: 2,
                    recorded: 2,
                    replayed: 2
                },
                Drift::FinalState { keys: 1 },
                Drift::ModelCalls { calls: 1 },
            ]
        );
        assert_eq!(
            verdict.to_string(),
            "DRIFT — the replay parted from the recording: 2 outbound divergences, the journal \
             from entry 2 on, 1 key's final value, 1 out-of-band model call."
        );
        assert_eq!(
            serde_json::to_value(&verdict).unwrap()["drift"][1],
            json!({"kind": "journal", "from_entry": 2, "recorded": 2, "replayed": 2})
        );
    }
}
