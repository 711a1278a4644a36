//! `reel diff A B`: the first place two recordings part, with the frames before it.
//!
//! ```text
//! DIFFERENT — first divergence at frame 9 (A seq 9, B seq 9): payload
//!   before it:
//!     A seq 7, B seq 7  ←  toolCall  get_weather({"city":"Paris"})
//!     A seq 8, B seq 8  →  toolResponse  get_weather → {"city":"Paris","temp_c":21}
//!   A seq 9  ←  serverContent.text  "It is 21 degrees in Paris."
//!   B seq 9  ←  serverContent.text  "It is 25 degrees in Paris."
//!   differences:
//!     serverContent.modelTurn.parts[0].text: A "It is 21 degrees in Paris.", B "It is 25 degrees in Paris."
//! ```
//!
//! Two agent traces (`*.trace.json`, both) are compared turn by turn instead
//! ([`super::trace_diff`]).
//!
//! Frames are aligned in order and compared by direction and payload (as JSON); close
//! markers are compared where they fall (see [`reel_replayer::log_diff`]). Exit codes: 0 the
//! same, 1 different, 2 bad input.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;
use reel_recorder::wire_log::{CloseMark, Direction};
use reel_replayer::log_diff::{
    Difference, FirstDifference, LogComparison, Side, compare_logs, show_value,
};
use reel_replayer::timeline::{describe, shorten};
use serde::Serialize;
use serde_json::Value;

use super::input::{WireInput, one_stdin};
use super::progress::Progress;
use super::{CliError, plural, print_stdout, print_text};

/// Frames of context shown before the difference.
const CONTEXT: usize = 2;
/// Longest value shown in a difference line, in characters.
const WIDTH: usize = 120;

/// Arguments of `reel diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first wire log (`-`: standard input, for one of the two), or agent trace
    /// (`*.trace.json`, compared turn by turn with another trace).
    a: String,
    /// The second wire log (`-`: standard input, for one of the two), or agent trace.
    b: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// A damaged log (a NUL-filled tail after a power loss, a corrupt line): read the
    /// entries before its first bad line instead of failing.
    #[arg(long)]
    salvage: bool,
}

/// Compares the logs; exit 1 when they differ.
pub fn run(args: DiffArgs) -> Result<ExitCode, CliError> {
    if super::trace_diff::both_traces(&args.a, &args.b) {
        return super::trace_diff::run(&args.a, &args.b, args.json);
    }
    one_stdin([args.a.as_str(), args.b.as_str()])?;
    let progress = Progress::start("comparing");
    let a = WireInput::open(&args.a)?
        .salvaging(args.salvage)
        .counting(progress.counter());
    let b = WireInput::open(&args.b)?.salvaging(args.salvage);
    let comparison = compare_logs(a, b, CONTEXT)?;
    progress.finish();
    let same = matches!(comparison, LogComparison::Same { .. });
    if args.json {
        let json = serde_json::to_string_pretty(&to_json(&comparison)?)?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_text(&render(&comparison))?;
    }
    Ok(if same {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn arrow(dir: Direction) -> &'static str {
    match dir {
        Direction::Out => "→",
        Direction::In => "←",
    }
}

/// `←  toolCall  get_weather({"city":"Paris"})`
fn frame_line(side: &Side) -> String {
    let view = describe(&side.entry);
    format!("{}  {}  {}", arrow(side.dir), view.kind, view.summary)
        .trim_end()
        .to_owned()
}

fn seq(side: Option<&Side>) -> String {
    side.map_or_else(|| "ends".to_owned(), |s| format!("seq {}", s.seq))
}

fn marks(marks: &[CloseMark]) -> String {
    if marks.is_empty() {
        return "(none)".to_owned();
    }
    marks
        .iter()
        .map(|m| {
            let code = m
                .code
                .map_or_else(|| "no code".to_owned(), |c| format!("code {c}"));
            let reason = m
                .reason
                .as_deref()
                .map(|r| format!(" {r:?}"))
                .unwrap_or_default();
            let by = if m.client { "client" } else { "server" };
            format!("{code}{reason}, closed by the {by}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The comparison as text.
fn render(comparison: &LogComparison) -> String {
    let first = match comparison {
        LogComparison::Same {
            frames,
            close_markers,
        } => {
            return format!(
                "SAME — {}, {}: direction and payload match frame by frame\n",
                plural(*frames, "frame", "frames"),
                plural(*close_markers, "close marker", "close markers")
            );
        }
        LogComparison::Differs(first) => first,
    };
    let mut out = String::new();
    let what = match &first.difference {
        Difference::Direction { .. } => "direction".to_owned(),
        Difference::Payload { .. } => "payload".to_owned(),
        Difference::MissingInA => format!(
            "A ends after {}",
            plural(first.position as u64 - 1, "frame", "frames")
        ),
        Difference::MissingInB => format!(
            "B ends after {}",
            plural(first.position as u64 - 1, "frame", "frames")
        ),
        Difference::CloseMarkers { .. } => "close markers".to_owned(),
    };
    let at = if matches!(first.difference, Difference::CloseMarkers { .. }) {
        "before frame"
    } else {
        "at frame"
    };
    let _ = writeln!(
        out,
        "DIFFERENT — first divergence {at} {} (A {}, B {}): {what}",
        first.position,
        seq(first.a.as_ref()),
        seq(first.b.as_ref())
    );
    if !first.context.is_empty() {
        out.push_str("  before it:\n");
        for (a, b) in &first.context {
            let _ = writeln!(
                out,
                "    A seq {}, B seq {}  {}",
                a.seq,
                b.seq,
                frame_line(a)
            );
        }
    }
    if let Difference::CloseMarkers { a, b } = &first.difference {
        let _ = writeln!(out, "  A: {}", marks(a));
        let _ = writeln!(out, "  B: {}", marks(b));
        return out;
    }
    for (name, side) in [("A", &first.a), ("B", &first.b)] {
        match side {
            Some(side) => {
                let _ = writeln!(out, "  {name} seq {}  {}", side.seq, frame_line(side));
            }
            None => {
                let _ = writeln!(out, "  {name} (no more frames)");
            }
        }
    }
    if let Difference::Direction { diffs } | Difference::Payload { diffs } = &first.difference
        && !diffs.is_empty()
    {
        out.push_str("  differences:\n");
        for diff in diffs {
            let _ = writeln!(
                out,
                "    {}: A {}, B {}",
                diff.path,
                shorten(&show_value(&diff.expected), WIDTH),
                shorten(&show_value(&diff.actual), WIDTH)
            );
        }
    }
    out
}

#[derive(Serialize)]
struct SideJson {
    seq: u64,
    dir: Direction,
    ts_ms: u64,
    kind: String,
    summary: String,
}

impl SideJson {
    fn of(side: &Side) -> Self {
        let view = describe(&side.entry);
        SideJson {
            seq: side.seq,
            dir: side.dir,
            ts_ms: side.ts_ms,
            kind: view.kind,
            summary: view.summary,
        }
    }
}

#[derive(Serialize)]
struct FirstDifferenceJson {
    result: &'static str,
    position: u64,
    a: Option<SideJson>,
    b: Option<SideJson>,
    difference: DifferenceJson,
    context: Vec<ContextJson>,
}

/// [`Difference`] with A's and B's values named `a` and `b`.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum DifferenceJson {
    Direction {
        diffs: Vec<PathJson>,
    },
    Payload {
        diffs: Vec<PathJson>,
    },
    MissingInA,
    MissingInB,
    CloseMarkers {
        a: Vec<CloseMark>,
        b: Vec<CloseMark>,
    },
}

/// One JSON path's values in A and B (a side's key is absent where the path is).
#[derive(Serialize)]
struct PathJson {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    a: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b: Option<Value>,
}

impl DifferenceJson {
    fn of(difference: &Difference) -> Self {
        let paths = |diffs: &[reel_replayer::PathDiff]| {
            diffs
                .iter()
                .map(|d| PathJson {
                    path: d.path.clone(),
                    a: d.expected.clone(),
                    b: d.actual.clone(),
                })
                .collect()
        };
        match difference {
            Difference::Direction { diffs } => DifferenceJson::Direction {
                diffs: paths(diffs),
            },
            Difference::Payload { diffs } => DifferenceJson::Payload {
                diffs: paths(diffs),
            },
            Difference::MissingInA => DifferenceJson::MissingInA,
            Difference::MissingInB => DifferenceJson::MissingInB,
            Difference::CloseMarkers { a, b } => DifferenceJson::CloseMarkers {
                a: a.clone(),
                b: b.clone(),
            },
        }
    }
}

#[derive(Serialize)]
struct ContextJson {
    a: SideJson,
    b: SideJson,
}

/// The comparison as one JSON document.
fn to_json(comparison: &LogComparison) -> Result<Value, CliError> {
    let first: &FirstDifference = match comparison {
        LogComparison::Same { .. } => return Ok(serde_json::to_value(comparison)?),
        LogComparison::Differs(first) => first,
    };
    let json = FirstDifferenceJson {
        result: "differs",
        position: first.position,
        a: first.a.as_ref().map(SideJson::of),
        b: first.b.as_ref().map(SideJson::of),
        difference: DifferenceJson::of(&first.difference),
        context: first
            .context
            .iter()
            .map(|(a, b)| ContextJson {
                a: SideJson::of(a),
                b: SideJson::of(b),
            })
            .collect(),
    };
    Ok(serde_json::to_value(json)?)
}
