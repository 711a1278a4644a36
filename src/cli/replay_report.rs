//! The report of `reel replay`, as text (seed 000's shape) and as one JSON document.
//!
//! ```text
//!   reel replay — user-123.wire.jsonl
//!
//!   Wire log:  7 entries (4 inbound, 3 outbound), 12.3s recorded
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
//! ```

use std::fmt;

use reel_replayer::Divergence;
use reel_replayer::journal_diff::{JournalDiff, JournalFinal, KeyDiff};
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::OfflineReplay;
use reel_replayer::summary::TurnSummary;
use reel_replayer::timeline::shorten;
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

/// Everything `reel replay` reports.
pub struct ReplayReport<'a> {
    log: &'a str,
    stats: &'a LogStats,
    replay: &'a OfflineReplay,
    journal: Option<(&'a str, JournalDiff)>,
    mode: [&'a str; 2],
}

impl<'a> ReplayReport<'a> {
    /// The report of `replay`, of the log at `log`, with the diff against `journal`.
    pub fn new(
        log: &'a str,
        stats: &'a LogStats,
        replay: &'a OfflineReplay,
        journal: Option<(&'a str, JournalFinal)>,
    ) -> Self {
        let journal = journal.map(|(path, recorded)| (path, recorded.diff(replay.state.iter())));
        ReplayReport {
            log,
            stats,
            replay,
            journal,
            mode: MODE,
        }
    }

    /// The same report for a replay that ran something else than the recording alone (the
    /// demo runs the application's own tools and phases): two lines saying what ran.
    pub fn with_mode(mut self, mode: [&'a str; 2]) -> Self {
        self.mode = mode;
        self
    }

    /// Whether the journal drifted.
    pub fn drifted(&self) -> bool {
        self.journal
            .as_ref()
            .is_some_and(|(_, diff)| !diff.is_clean())
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
            journal: self.journal.as_ref().map(|(path, diff)| JournalJson {
                file: path,
                mutations: diff.mutations,
                keys: diff.keys,
                clean: diff.is_clean(),
                diverged: &diff.diverged,
            }),
            drift: self.drifted(),
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
        if let Some((path, diff)) = &self.journal {
            writeln!(f)?;
            journal_lines(f, path, diff)?;
        }
        Ok(())
    }
}

impl ReplayReport<'_> {
    fn header(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stats = self.stats;
        let mut wire = format!(
            "{} ({} inbound, {} outbound), {:.1}s recorded",
            plural(stats.frames, "entry", "entries"),
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
    writeln!(f, "    DRIFT — {} key(s) diverged:", diff.diverged.len())?;
    for key in &diff.diverged {
        writeln!(f, "      - {}", shorten(&key.to_string(), WIDTH))?;
    }
    Ok(())
}
