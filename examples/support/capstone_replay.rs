//! What the capstones (`booking`, `screening`) share beyond the replayed-call runner: the
//! bundled resolutions file read as a replaying log, and the story of an offline replay —
//! the refusals it answered again, each `{step}:result` it wrote from the recording and
//! the steps as they completed, in journal order.

// Shared by the capstone examples and their tests; each uses part of it.
#![allow(dead_code)]

use std::error::Error;

use reel::actors::{Lane, LiveEvent};
use reel::agents::{Resolution, Resolutions};
use reel::fluent::ReplayOutcome;
use serde_json::Value;

/// A bundled `X.resolved.jsonl` (`text`, read from `path`) as a log replaying it: one
/// resolution per line, blank lines skipped; a bad line is an error naming it.
pub fn replaying(text: &str, path: &str) -> Result<Resolutions, Box<dyn Error>> {
    let mut recorded = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let resolution: Resolution = serde_json::from_str(line)
            .map_err(|e| format!("{path}:{}: not a resolution: {e}", index + 1))?;
        recorded.push(resolution);
    }
    Ok(Resolutions::replay(recorded))
}

/// The story of a replay, one line each: the refused calls (`refused <tool> (<id>):
/// <answer>`), then, in journal order, each `{step}:result` written (`<key> = <value>`)
/// and each step as `flow:done` gained it (`completed <id>`).
pub fn story(outcome: &ReplayOutcome) -> Vec<String> {
    let mut lines = Vec::new();
    for envelope in &outcome.events {
        if let (
            Lane::Control,
            LiveEvent::ToolFinished {
                call_id,
                name,
                response,
                ok: false,
            },
        ) = (envelope.lane, &envelope.event)
        {
            let error = response["error"].as_str().unwrap_or_default();
            lines.push(format!("refused {name} ({call_id}): {error}"));
        }
    }
    let mut done = 0;
    for mutation in &outcome.journal {
        if mutation.key == "flow:done" {
            let steps = mutation
                .new
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            for step in steps.iter().skip(done) {
                lines.push(format!("completed {}", step.as_str().unwrap_or_default()));
            }
            done = steps.len();
        } else if mutation.key.ends_with(":result") && !mutation.key.starts_with("state_meta:") {
            lines.push(format!("{} = {}", mutation.key, shown(&mutation.new)));
        }
    }
    lines
}

/// A value as the story shows it: a string as is, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The sequence of `flow:done` values a journal holds, in order.
pub fn flow_done_sequence(journal: &[reel::recorder::journal::StateMutation]) -> Vec<Value> {
    journal
        .iter()
        .filter(|m| m.key == "flow:done")
        .map(|m| m.new.clone())
        .collect()
}
