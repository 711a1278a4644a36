//! `reel diff A.trace.json B.trace.json`: the first turn where two agent traces part, with
//! the turns before it — seed 001's "trace diff for debugging".
//!
//! ```text
//! DIFFERENT — first divergence at turn 2 of 3: what was asked, answered or called
//!   before it:
//!     turn 1  "Hello!" → "Hi! I'm your weather assistant. Which city would you like the weather for?"
//!   differences:
//!     response.toolCalls[0].arguments.city: A "London", B "Paris"
//!     response.text: A "It's 14°C and cloudy in London right now.", B "It's 21°C in Paris."
//! ```
//!
//! Turns are aligned by index and compared on what was asked, answered and called: the
//! request (prompt, transcript, inputs without audio lengths, instruction, model, agent,
//! body) and the response (text, transcript, tool calls with their arguments and results,
//! finish reason, interruption, error). Timing (timestamps, durations, time to first token,
//! audio lengths), token counts, streamed chunks and call ids are not compared: they differ
//! between any two runs. Exit codes: 0 the same, 1 different, 2 bad input.

use std::fmt::Write as _;
use std::process::ExitCode;

use reel_protocol::json::{PathDiff, json_diff};
use reel_recorder::compressed::without_compression_suffix;
use reel_recorder::trace::{AgentTrace, TraceError};
use reel_replayer::log_diff::show_value;
use reel_replayer::timeline::shorten;
use serde_json::{Value, json};

use super::{CliError, plural, print_stdout, print_text};

/// Turns of context shown before the difference.
const CONTEXT: usize = 2;
/// Longest value shown in a difference line, in characters.
const WIDTH: usize = 120;

/// Whether `a` and `b` are both traces (`*.trace.json`): then `reel diff` compares turns.
/// A compressed trace (`X.trace.json.gz`, `.zst`) counts as one.
pub fn both_traces(a: &str, b: &str) -> bool {
    let trace = |path: &str| without_compression_suffix(path).ends_with(".trace.json");
    trace(a) && trace(b)
}

fn read(path: &str) -> Result<AgentTrace, CliError> {
    super::trace::read_any_trace(path).map_err(|error| match error {
        TraceError::Io { source, .. } => CliError::Read {
            path: path.to_owned(),
            source,
        },
        other => CliError::Read {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
        },
    })
}

/// What is compared of each turn (see the module docs).
fn compared(trace: &AgentTrace) -> Vec<Value> {
    trace
        .turns()
        .into_iter()
        .map(|turn| {
            let mut request = serde_json::to_value(turn.request).unwrap_or(Value::Null);
            strip(&mut request, &["index", "timestamp"]);
            if let Some(inputs) = request.get_mut("inputs").and_then(Value::as_array_mut) {
                for input in inputs {
                    strip(input, &["audioMs", "frames"]);
                }
            }
            let mut response = turn.response.map_or(Value::Null, |r| {
                serde_json::to_value(r).unwrap_or(Value::Null)
            });
            strip(
                &mut response,
                &[
                    "index",
                    "timestamp",
                    "durationMs",
                    "timeToFirstTokenMs",
                    "tokenUsage",
                    "audioMs",
                    "chunks",
                ],
            );
            if let Some(calls) = response.get_mut("toolCalls").and_then(Value::as_array_mut) {
                for call in calls {
                    strip(call, &["id", "timestamp", "durationMs"]);
                }
            }
            json!({"request": request, "response": response})
        })
        .collect()
}

fn strip(value: &mut Value, keys: &[&str]) {
    if let Some(map) = value.as_object_mut() {
        for key in keys {
            map.remove(*key);
        }
    }
}

/// `"Hello!" → "Hi!"`: a turn in one line.
fn turn_line(turn: &Value) -> String {
    let text = |v: &Value, keys: [&str; 2]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(Value::as_str))
            .map_or_else(|| "—".to_owned(), |s| format!("{s:?}"))
    };
    format!(
        "{} → {}",
        shorten(&text(&turn["request"], ["prompt", "transcript"]), 60),
        shorten(&text(&turn["response"], ["text", "transcript"]), 60)
    )
}

/// Compares the traces at `a` and `b`; exit 1 when they differ.
pub fn run(a: &str, b: &str, as_json: bool) -> Result<ExitCode, CliError> {
    let (turns_a, turns_b) = (compared(&read(a)?), compared(&read(b)?));
    let first = (0..turns_a.len().max(turns_b.len())).find_map(|i| {
        match (turns_a.get(i), turns_b.get(i)) {
            (Some(x), Some(y)) => {
                let diffs = json_diff(x, y);
                (!diffs.is_empty()).then_some((i, diffs))
            }
            _ => Some((i, Vec::new())),
        }
    });
    if as_json {
        let json = json!({
            "a": a,
            "b": b,
            "same": first.is_none(),
            "turns_a": turns_a.len(),
            "turns_b": turns_b.len(),
            "turn": first.as_ref().map(|(i, _)| i + 1),
            "differences": first.as_ref().map(|(_, diffs)| diffs.iter().map(|d| json!({
                "path": d.path, "a": d.expected, "b": d.actual,
            })).collect::<Vec<_>>()),
        });
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&json)?))?;
    } else {
        print_text(&render(&turns_a, &turns_b, first.as_ref()))?;
    }
    Ok(if first.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn render(a: &[Value], b: &[Value], first: Option<&(usize, Vec<PathDiff>)>) -> String {
    let Some((index, diffs)) = first else {
        return format!(
            "SAME — {}: the same requests, answers and tool calls (timing and tokens not compared)\n",
            plural(a.len() as u64, "turn", "turns")
        );
    };
    let mut out = String::new();
    let what = match (a.get(*index), b.get(*index)) {
        (None, _) => format!("A ends after {}", plural(*index as u64, "turn", "turns")),
        (_, None) => format!("B ends after {}", plural(*index as u64, "turn", "turns")),
        _ => "what was asked, answered or called".to_owned(),
    };
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "DIFFERENT — first divergence at turn {} of {}: {what}",
        index + 1,
        a.len().max(b.len())
    );
    let from = index.saturating_sub(CONTEXT);
    if *index > 0 {
        out.push_str("  before it:\n");
        for (i, turn) in a.iter().enumerate().take(*index).skip(from) {
            let _ = writeln!(out, "    turn {}  {}", i + 1, turn_line(turn));
        }
    }
    for (name, turns) in [("A", a), ("B", b)] {
        match turns.get(*index) {
            Some(turn) => {
                let _ = writeln!(out, "  {name} turn {}  {}", index + 1, turn_line(turn));
            }
            None => {
                let _ = writeln!(out, "  {name} (no more turns)");
            }
        }
    }
    if !diffs.is_empty() {
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
