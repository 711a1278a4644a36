//! A run's trace: everything a run saw, as text, one thing a line, with nothing in it that
//! differs between two runs of the same plan unless the runs themselves did — virtual
//! times as offsets from the run's start, no task ids, thread ids, wall-clock values or
//! addresses (the tree's own reports keep those out at the source: a restart reason says
//! what failed, not which tokio task ran it).
//!
//! Every seed runs twice (`sim::seed`); the two traces must be byte-identical, and
//! [`first_difference`] names the first line that is not.

use std::fmt::{Debug, Write};

use tokio::time::Instant;

use super::run::Outcome;

/// The trace of `outcome`, a run that started at `started` (virtual time).
pub fn of(outcome: &Outcome) -> String {
    let mut out = String::new();
    let started = outcome.started;
    let at = |instant: &Instant| instant.saturating_duration_since(started);
    let m = &outcome.model;
    line(&mut out, "model sent", &m.sent);
    line(&mut out, "model tool responses", &m.tool_responses);
    let listen: Vec<_> = m.listen_sent.iter().map(|(id, i)| (id, at(i))).collect();
    line(&mut out, "model listen calls sent at", &listen);
    for setup in &m.setups {
        line(&mut out, "model setup", setup);
    }
    line(&mut out, "model goAways", &m.go_aways);
    line(&mut out, "model drops", &m.drops);
    line(&mut out, "model finished", &m.finished);
    for note in &m.notes {
        line(&mut out, "model note", note);
    }
    let o = &outcome.observed;
    line(&mut out, "on_text", &o.text);
    line(&mut out, "on_text panicked", &o.text_panicked);
    line(&mut out, "on_audio", &o.audio);
    line(&mut out, "on_usage", &o.usage);
    line(&mut out, "on_usage panicked", &o.usage_panicked);
    line(&mut out, "on_turn_complete calls", &o.turns);
    line(&mut out, "on_turn_complete panicked", &o.turn_panicked);
    line(&mut out, "modify panicked", &o.modify_panicked);
    line(&mut out, "on_tool_call", &o.tool_callback);
    line(&mut out, "on_tool_call panicked", &o.tool_callback_panicked);
    line(&mut out, "tool runs", &o.tool_runs);
    line(&mut out, "tool runs ok", &o.tool_ok);
    line(&mut out, "tool gate refused", &o.refused);
    for listen in &o.listen {
        line(&mut out, "listen heard", listen);
    }
    let caller: Vec<_> = o.caller.iter().map(|(i, n)| (at(i), n)).collect();
    line(&mut out, "caller chunks sent at", &caller);
    for error in &o.write_errors {
        line(&mut out, "state write error", error);
    }
    for struck in &o.struck {
        line(&mut out, "fault hook struck", struck);
    }
    for event in &outcome.events {
        let _ = writeln!(
            out,
            "event {:?} #{} {:?}",
            event.lane, event.seq, event.event
        );
    }
    line(&mut out, "end", &outcome.end);
    line(&mut out, "hang", &outcome.hang);
    line(&mut out, "start error", &outcome.start_error);
    line(&mut out, "stalled backlog", &outcome.stalled_backlog);
    line(&mut out, "stalled read", &outcome.stalled_read);
    line(&mut out, "id reclaimed", &outcome.id_reclaimed);
    for mutation in &outcome.journal {
        line(&mut out, "journal", mutation);
    }
    line(
        &mut out,
        "journal file errors",
        &outcome.journal_file_errors,
    );
    line(&mut out, "journal file refused", &outcome.journal_refused);
    let _ = writeln!(
        out,
        "journal file: {} bytes, FNV-1a {:016x}",
        outcome.journal_file.len(),
        fnv1a(&outcome.journal_file)
    );
    line(&mut out, "wire stored", &outcome.wire_stored);
    line(&mut out, "wire failed", &outcome.wire_failed);
    line(&mut out, "recorder panicked", &outcome.recorder_panicked);
    line(&mut out, "telemetry", &outcome.telemetry);
    line(&mut out, "took", &outcome.took);
    out
}

/// FNV-1a, 64 bits: a file's bytes in one trace line.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn line(out: &mut String, name: &str, value: &impl Debug) {
    let _ = writeln!(out, "{name}: {value:?}");
}

/// Where two traces first differ: the line number (1-based) and each trace's line there
/// (`<the trace ended>` past its end), each cut to a readable length around the first
/// differing character. `None` if they are identical.
pub fn first_difference(first: &str, second: &str) -> Option<(usize, String, String)> {
    if first == second {
        return None;
    }
    let (mut a, mut b) = (first.lines(), second.lines());
    let mut number = 0;
    loop {
        number += 1;
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                let column = match (x, y) {
                    (Some(x), Some(y)) => x
                        .char_indices()
                        .zip(y.chars())
                        .find(|((_, p), q)| p != q)
                        .map_or(x.len().min(y.len()), |((i, _), _)| i),
                    _ => 0,
                };
                return Some((number, excerpt(x, column), excerpt(y, column)));
            }
        }
    }
}

/// How many characters of a long line are shown before and after the first difference.
const CONTEXT: usize = 80;

fn excerpt(line: Option<&str>, column: usize) -> String {
    let Some(line) = line else {
        return "<the trace ended>".to_owned();
    };
    if line.len() <= 2 * CONTEXT {
        return line.to_owned();
    }
    let floor = |mut i: usize| {
        i = i.min(line.len());
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let (from, to) = (
        floor(column.saturating_sub(CONTEXT)),
        floor(column + CONTEXT),
    );
    let head = if from > 0 { "…" } else { "" };
    let tail = if to < line.len() { "…" } else { "" };
    format!("{head}{}{tail}", &line[from..to])
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn the_first_differing_line_is_named_with_both_versions() {
        assert_eq!(first_difference("a\nb\nc\n", "a\nb\nc\n"), None);
        assert_eq!(
            first_difference("a\nb 1\nc\n", "a\nb 2\nc\n"),
            Some((2, "b 1".to_owned(), "b 2".to_owned()))
        );
        assert_eq!(
            first_difference("a\n", "a\nb\n"),
            Some((2, "<the trace ended>".to_owned(), "b".to_owned()))
        );
        let long = |c: char| format!("{}{c}{}", "x".repeat(200), "y".repeat(200));
        let (line, first, second) = first_difference(&long('1'), &long('2')).unwrap();
        assert_eq!(line, 1);
        assert_eq!(first, format!("…{}1{}…", "x".repeat(80), "y".repeat(79)));
        assert_eq!(second, format!("…{}2{}…", "x".repeat(80), "y".repeat(79)));
    }
}
