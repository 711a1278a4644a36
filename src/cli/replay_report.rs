//! The report of `reel replay`, as text and as one JSON document.
//!
//! ```text
//!   reel replay — user-123.wire.jsonl
//!
//!   Wire log:  7 frames (4 inbound, 3 outbound), 12.3s recorded
//!   Mode:      offline — the real session tree on the recorded frames; tool calls get
//!              their recorded responses; no model and no tool code run
//!   Outbound:  2 runtime frames sent again, all byte-identical to the recording
//!
//!   Turn-by-turn:
//!     turn  1  [connected×1, text×1, text_complete×1, turn_complete×1]
//!              “Hello! Ask me about the weather.”
//!     …
//!
//!   Final state (5 keys):
//!     session:phase = "Disconnected"
//!     …
//!
//!   Journal diff — user-123.journal.jsonl (27 mutations, 5 keys):
//!     DRIFT — 1 key(s) diverged:
//!       - app:last_city: recorded "London", missing on replay
//!
//!   Journal:   differs from the recording from entry 12 (27 recorded, 26 replayed):
//!              entry 12: recorded app:last_city = "London" (set at 1718000000970), missing on replay
//!
//!   DRIFT — the replay parted from the recording: the journal from entry 12 on, 1 key's final value.
//! ```
//!
//! The last line is the [`Verdict`]: the one definition of CLEAN, which `reel demo` and
//! `ReplayOutcome::is_clean` share.

use std::fmt;

use reel_replayer::journal_diff::{JournalDiff, JournalFinal, KeyDiff};
use reel_replayer::journal_match::{EntryMismatch, JournalMatch};
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::OfflineReplay;
use reel_replayer::summary::TurnSummary;
use reel_replayer::timeline::shorten;
use reel_replayer::{Divergence, Verdict};
use serde::Serialize;
use serde_json::Value;

use super::{CliError, plural};

/// What runs in an offline replay, said honestly.
const MODE: [&str; 2] = [
    "offline — the real session tree on the recorded frames; tool calls get",
    "their recorded responses; no model, no tool or application code runs",
];
const MODE_JSON: &str = "offline: the real session tree on the recorded frames; tool calls get their recorded responses; no model, no tool or application code runs";

/// Longest text or value shown on one line, in characters.
const WIDTH: usize = 200;
/// Where the values of the header's labels start.
const INDENT: &str = "             ";

/// The journal a replay is checked against: the file, each key's final value in it, and
/// the replay's journal compared with it entry by entry.
pub struct RecordedJournal<'a> {
    /// The journal file.
    pub path: &'a str,
    /// Each key's final value.
    pub finals: JournalFinal,
    /// The replay's journal against it, entry by entry.
    pub matched: JournalMatch,
}

/// The recorded journal's part of the report.
struct JournalPart<'a> {
    path: &'a str,
    diff: JournalDiff,
    matched: JournalMatch,
}

/// Everything `reel replay` reports.
pub struct ReplayReport<'a> {
    log: &'a str,
    stats: &'a LogStats,
    replay: &'a OfflineReplay,
    journal: Option<JournalPart<'a>>,
    verdict: Verdict,
    mode: [&'a str; 2],
}

impl<'a> ReplayReport<'a> {
    /// The report of `replay`, of the log at `log`, checked against `journal`.
    pub fn new(
        log: &'a str,
        stats: &'a LogStats,
        replay: &'a OfflineReplay,
        journal: Option<RecordedJournal<'a>>,
    ) -> Self {
        let journal = journal.map(|recorded| JournalPart {
            path: recorded.path,
            diff: recorded.finals.diff(replay.state.iter()),
            matched: recorded.matched,
        });
        let mut verdict = Verdict::new(&replay.divergences);
        if let Some(part) = &journal {
            verdict = verdict.journal(&part.matched).final_state(&part.diff);
        }
        ReplayReport {
            log,
            stats,
            replay,
            journal,
            verdict,
            mode: MODE,
        }
    }

    /// The same report for a replay that ran something else than the recording alone (the
    /// demo runs the application's own tools and phases): two lines saying what ran.
    pub fn with_mode(mut self, mode: [&'a str; 2]) -> Self {
        self.mode = mode;
        self
    }

    /// CLEAN or DRIFT: outbound divergences, the journal entry by entry, final values.
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    fn identical(&self) -> usize {
        self.replay
            .runtime_frames
            .iter()
            .filter(|f| f.identical)
            .count()
    }

    /// The report as one JSON document.
    pub fn to_json(&self) -> Result<Value, CliError> {
        let report = JsonReport {
            file: self.log,
            wire_log: WireLogJson {
                stats: self.stats,
                duration_ms: self.stats.duration_ms(),
            },
            mode: MODE_JSON,
            outbound: OutboundJson {
                runtime_frames: self.replay.runtime_frames.len(),
                identical: self.identical(),
                taken_from_recording: &self.replay.taken_from_recording,
                divergences: &self.replay.divergences,
            },
            turns: &self.replay.summary.turns,
            final_state: self.replay.state.to_json(),
            journal: self.journal.as_ref().map(|part| JournalJson {
                file: part.path,
                mutations: part.diff.mutations,
                keys: part.diff.keys,
                clean: part.diff.is_clean(),
                diverged: &part.diff.diverged,
                identical: part.matched.is_identical(),
                replayed: part.matched.replayed,
                first_difference: part.matched.first_difference.as_ref(),
            }),
            verdict: &self.verdict,
            drift: !self.verdict.is_clean(),
        };
        Ok(serde_json::to_value(report)?)
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    file: &'a str,
    wire_log: WireLogJson<'a>,
    mode: &'static str,
    outbound: OutboundJson<'a>,
    turns: &'a [TurnSummary],
    final_state: Value,
    journal: Option<JournalJson<'a>>,
    verdict: &'a Verdict,
    drift: bool,
}

#[derive(Serialize)]
struct WireLogJson<'a> {
    #[serde(flatten)]
    stats: &'a LogStats,
    duration_ms: u64,
}

#[derive(Serialize)]
struct OutboundJson<'a> {
    runtime_frames: usize,
    identical: usize,
    /// Recorded frames only application code produces, taken from the recording (seqs).
    taken_from_recording: &'a [u64],
    divergences: &'a [Divergence],
}

#[derive(Serialize)]
struct JournalJson<'a> {
    file: &'a str,
    mutations: u64,
    keys: usize,
    clean: bool,
    diverged: &'a [KeyDiff],
    /// Whether the replay wrote the journal again, entry by entry.
    identical: bool,
    /// Mutations the replay wrote.
    replayed: usize,
    first_difference: Option<&'a EntryMismatch>,
}

impl fmt::Display for ReplayReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  reel replay — {}", self.log)?;
        writeln!(f)?;
        self.header(f)?;
        writeln!(f)?;
        writeln!(f, "  Turn-by-turn:")?;
        for turn in &self.replay.summary.turns {
            turn_lines(f, turn)?;
        }
        writeln!(f)?;
        let state = &self.replay.state;
        writeln!(
            f,
            "  Final state ({}):",
            plural(state.len() as u64, "key", "keys")
        )?;
        for (key, value) in state.iter() {
            writeln!(f, "    {key} = {}", shorten(&value.to_string(), WIDTH))?;
        }
        if let Some(part) = &self.journal {
            writeln!(f)?;
            journal_lines(f, part.path, &part.diff)?;
            writeln!(f)?;
            entry_lines(f, &part.matched)?;
        }
        writeln!(f)?;
        writeln!(f, "  {}", self.verdict)
    }
}

impl ReplayReport<'_> {
    fn header(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stats = self.stats;
        let mut wire = format!(
            "{} ({} inbound, {} outbound), {:.1}s recorded",
            plural(stats.frames, "frame", "frames"),
            stats.inbound,
            stats.outbound,
            stats.duration_ms() as f64 / 1000.0
        );
        if stats.reconnects > 0 {
            wire.push_str(&format!(
                ", {}",
                plural(stats.reconnects, "reconnect", "reconnects")
            ));
        }
        writeln!(f, "  Wire log:  {wire}")?;
        writeln!(f, "  Mode:      {}", self.mode[0])?;
        writeln!(f, "{INDENT}{}", self.mode[1])?;
        let sent = plural(
            self.replay.runtime_frames.len() as u64,
            "runtime frame",
            "runtime frames",
        );
        let divergences = &self.replay.divergences;
        let taken = self.replay.taken_from_recording.len();
        let taken_note = if taken == 0 {
            String::new()
        } else {
            format!(
                "\n{INDENT}{} from application code taken from the recording (none runs here)",
                plural(taken as u64, "frame", "frames")
            )
        };
        if divergences.is_empty() {
            let identical = self.identical();
            if identical == self.replay.runtime_frames.len() {
                return writeln!(
                    f,
                    "  Outbound:  {sent} sent again, all byte-identical to the recording{taken_note}"
                );
            }
            // A recording another client made: the same JSON, laid out its own way.
            return writeln!(
                f,
                "  Outbound:  {sent} sent again, all equal to the recording as JSON \
                 ({identical} byte-identical){taken_note}"
            );
        }
        writeln!(
            f,
            "  Outbound:  {sent} sent again, {} byte-identical; {}:{taken_note}",
            self.identical(),
            plural(divergences.len() as u64, "divergence", "divergences")
        )?;
        for divergence in divergences {
            // Which frame it is: the message key of the recorded (or replayed) frame.
            let kind = [&divergence.expected, &divergence.actual]
                .into_iter()
                .flatten()
                .find_map(|frame| frame.as_object()?.keys().next().cloned())
                .map(|kind| format!(" ({kind})"))
                .unwrap_or_default();
            for (index, line) in divergence.to_string().lines().enumerate() {
                let (mark, kind) = if index == 0 {
                    ("- ", kind.as_str())
                } else {
                    ("  ", "")
                };
                writeln!(f, "{INDENT}{mark}{}{kind}", shorten(line, WIDTH))?;
            }
        }
        Ok(())
    }
}

fn turn_lines(f: &mut fmt::Formatter<'_>, turn: &TurnSummary) -> fmt::Result {
    let counts = turn.counts();
    if !turn.complete && turn.is_lifecycle_only() {
        return writeln!(f, "    after    [{counts}]");
    }
    let unfinished = if turn.complete {
        ""
    } else {
        " (no turn_complete)"
    };
    writeln!(f, "    turn {:>2}  [{counts}]{unfinished}", turn.number)?;
    if let Some(user) = &turn.user {
        let user = shorten(&user.replace('\n', "\\n"), WIDTH - 5);
        writeln!(f, "{INDENT}you: “{user}”")?;
    }
    if let Some(text) = &turn.text {
        let text = shorten(&text.replace('\n', "\\n"), WIDTH);
        writeln!(f, "{INDENT}“{text}”")?;
    }
    for call in &turn.tool_calls {
        writeln!(f, "{INDENT}tool: {}", shorten(&call.to_string(), WIDTH))?;
    }
    Ok(())
}

/// `Journal:   identical to the recording, entry by entry (N mutations)`, or where the
/// replay's journal first parts from the recording's.
fn entry_lines(f: &mut fmt::Formatter<'_>, matched: &JournalMatch) -> fmt::Result {
    let Some(first) = &matched.first_difference else {
        return writeln!(
            f,
            "  Journal:   identical to the recording, entry by entry ({})",
            plural(matched.recorded as u64, "mutation", "mutations")
        );
    };
    writeln!(
        f,
        "  Journal:   differs from the recording from entry {} ({} recorded, {} replayed):",
        first.entry, matched.recorded, matched.replayed
    )?;
    writeln!(f, "{INDENT}{}", shorten(&first.to_string(), WIDTH))
}

fn journal_lines(f: &mut fmt::Formatter<'_>, path: &str, diff: &JournalDiff) -> fmt::Result {
    writeln!(
        f,
        "  Journal diff — {path} ({}, {}):",
        plural(diff.mutations, "mutation", "mutations"),
        plural(diff.keys as u64, "key", "keys")
    )?;
    if diff.is_clean() {
        return writeln!(f, "    CLEAN — every key's final value matches");
    }
    writeln!(
        f,
        "    DRIFT — {} diverged:",
        plural(diff.diverged.len() as u64, "key", "keys")
    )?;
    for key in &diff.diverged {
        writeln!(f, "      - {}", shorten(&key.to_string(), WIDTH))?;
    }
    Ok(())
}
