//! Conformance scoring: a recorded session (wire log and journal) run through a flow's
//! [`Monitor`] offline, in observe mode.
//!
//! The tool calls and their responses come from the wire log (`toolCall` frames in,
//! `toolResponse` frames out, `toolCallCancellation`); the state from the journal. The two
//! are merged on the session time both carry, in each one's own order:
//!
//! - before a frame stamped `t`, every journal entry stamped at or before `t` is applied,
//!   except a tool's writes (`delta: true`) stamped at `t` itself: a call's own writes are
//!   committed when it returns, so they are applied before the `toolResponse` that
//!   answers it (stamped at or after them), never before the `toolCall` that asked for it;
//! - the journal's order is kept: an entry not yet due holds back the ones after it.
//!
//! A call is judged against the state and the marking at its frame; a response without an
//! `error` member (and, for a background tool, without `status` `error` or `cancelled`)
//! is a call that returned without error (`called_ok`); a background tool's first
//! acknowledgement (`willContinue: true`) is not a return.

use std::path::{Path, PathBuf};

use reel_recorder::RecordError;
use reel_recorder::journal::{StateMutation, open_journal};
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_recorder::wire_read::WireLogReader;
use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use crate::compile::CompiledFlow;
use crate::monitor::{Mode, Monitor};
use crate::report::{Verdict, Violation};

/// A recording that could not be scored.
#[derive(Debug, Error)]
pub enum ScoreError {
    /// The wire log or the journal could not be read.
    #[error(transparent)]
    Recording(#[from] RecordError),
}

/// One step's verdict at the end of the recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepVerdict {
    /// The step.
    pub step: String,
    /// Where it stands.
    pub verdict: Verdict,
}

/// A recorded session scored against a flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Score {
    /// The tool calls the recording holds.
    pub tool_calls: u64,
    /// The journal entries applied.
    pub journal_entries: u64,
    /// The calls the flow refuses, with the sequence number of the frame that carried each.
    pub violations: Vec<Violation>,
    /// Every step's verdict at the end, in declaration order.
    pub verdicts: Vec<StepVerdict>,
    /// The required steps never done.
    pub unmet_requirements: Vec<String>,
    /// Whether the flow was complete at the end.
    pub complete: bool,
}

impl Score {
    /// Whether every call was admissible.
    pub fn conforms(&self) -> bool {
        self.violations.is_empty()
    }
}

/// The journal recorded beside a wire log: `X.journal.jsonl` for `X.wire.jsonl`.
pub fn journal_beside(wire: &Path) -> Option<PathBuf> {
    let name = wire.file_name()?.to_str()?;
    let stem = name.strip_suffix(".wire.jsonl")?;
    let journal = wire.with_file_name(format!("{stem}.journal.jsonl"));
    journal.is_file().then_some(journal)
}

/// The flow a governed session recorded beside its wire log: `X.flow.json` for
/// `X.wire.jsonl` (`X.jsonl` works too), whether or not it is there.
///
/// ```
/// use std::path::Path;
/// use reel_flow::score::flow_beside;
///
/// assert_eq!(flow_beside(Path::new("calls/c1.wire.jsonl")), Path::new("calls/c1.flow.json"));
/// assert_eq!(flow_beside(Path::new("c2.jsonl")), Path::new("c2.flow.json"));
/// ```
pub fn flow_beside(wire: &Path) -> PathBuf {
    let name = wire
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".wire.jsonl")
        .or_else(|| name.strip_suffix(".jsonl"))
        .unwrap_or(name);
    wire.with_file_name(format!("{stem}.flow.json"))
}

/// Scores the wire log at `wire` and, when given, the journal at `journal` against `flow`.
pub fn score_recording(
    wire: &Path,
    journal: Option<&Path>,
    flow: &CompiledFlow,
) -> Result<Score, ScoreError> {
    let entries = WireLogReader::open(wire)?.collect::<Result<Vec<_>, _>>()?;
    let mutations = match journal {
        Some(path) => open_journal(path)?.collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    Ok(score_entries(&entries, &mutations, flow))
}

/// Scores recorded entries, already read, against `flow`.
pub fn score_entries(
    entries: &[WireEntry],
    journal: &[StateMutation],
    flow: &CompiledFlow,
) -> Score {
    let mut monitor = Monitor::new(flow.clone(), Mode::Observe);
    let mut next = 0;
    let mut tool_calls = 0;
    for entry in entries.iter().filter(|e| !e.is_close_marker()) {
        let Ok(frame) = serde_json::from_slice::<Value>(&entry.payload) else {
            continue;
        };
        let response = entry.dir == Direction::Out && frame.get("toolResponse").is_some();
        while let Some(mutation) = journal.get(next) {
            let due = mutation.timestamp_ms < entry.ts_ms
                || (mutation.timestamp_ms == entry.ts_ms && (!mutation.delta || response));
            if !due {
                break;
            }
            monitor.apply(mutation);
            next += 1;
        }
        match entry.dir {
            Direction::In => {
                for call in list(&frame, "toolCall", "functionCalls") {
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let id = call.get("id").and_then(Value::as_str);
                    tool_calls += 1;
                    // Observing: a refused call is recorded as a violation and still runs.
                    let _ = monitor.call(entry.seq, id, name);
                }
                let cancelled = frame
                    .pointer("/toolCallCancellation/ids")
                    .and_then(Value::as_array);
                for id in cancelled.into_iter().flatten().filter_map(Value::as_str) {
                    monitor.returned(id, false);
                }
            }
            Direction::Out => {
                for answer in list(&frame, "toolResponse", "functionResponses") {
                    apply_response(&mut monitor, answer);
                }
            }
        }
    }
    for mutation in &journal[next..] {
        monitor.apply(mutation);
    }
    Score {
        tool_calls,
        journal_entries: journal.len() as u64,
        violations: monitor.violations().to_vec(),
        verdicts: monitor
            .verdicts()
            .into_iter()
            .map(|(step, verdict)| StepVerdict { step, verdict })
            .collect(),
        unmet_requirements: monitor.unmet_requirements(),
        complete: monitor.is_complete(),
    }
}

fn list<'a>(frame: &'a Value, message: &str, field: &str) -> impl Iterator<Item = &'a Value> {
    frame
        .get(message)
        .and_then(|m| m.get(field))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// What a function response says of its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    /// The tool returned without error (`called_ok`).
    Ok,
    /// The tool failed, was cancelled, or never ran: a `once` it spent is released.
    Failed,
    /// The tool may have run, but its result was lost: reel's runtime answers a call whose
    /// result a failed control lane dropped with an error ending in [`LOST_RESULT`]. Not
    /// `called_ok`, and a `once` it spent stays spent (it may have charged the card).
    Lost,
}

/// The end of the error text reel's runtime answers a call with when the control lane
/// failed while handling the call's result (`ToolError::RuntimeFailed`).
pub const LOST_RESULT: &str = "the control lane failed while handling its result";

/// What one function response (an entry of a `toolResponse` frame's `functionResponses`,
/// as it is on the wire) says of its call: its id and how it returned. `None` for a
/// background tool's first acknowledgement (`willContinue: true`: the call has not
/// returned) and for a response without an id. The live wiring (`reel-fluent`'s
/// `govern`/`observe`) judges the responses it sends with this function too, so a session
/// and the scoring of its recording agree.
///
/// ```
/// use reel_flow::score::{Returned, response_outcome};
/// use serde_json::json;
///
/// let ok = json!({"id": "c1", "name": "charge_card", "response": {"charged": true}});
/// assert_eq!(response_outcome(&ok), Some(("c1", Returned::Ok)));
/// let failed = json!({"id": "c2", "name": "charge_card", "response": {"error": "declined"}});
/// assert_eq!(response_outcome(&failed), Some(("c2", Returned::Failed)));
/// let lost = json!({"id": "c3", "response": {"error":
///     "tool `charge_card` could not be answered: the control lane failed while handling its result"}});
/// assert_eq!(response_outcome(&lost), Some(("c3", Returned::Lost)));
/// let ack = json!({"id": "c4", "response": {"status": "running"}, "willContinue": true});
/// assert_eq!(response_outcome(&ack), None);
/// ```
pub fn response_outcome(answer: &Value) -> Option<(&str, Returned)> {
    if answer.get("willContinue") == Some(&Value::Bool(true)) {
        return None;
    }
    let id = answer.get("id").and_then(Value::as_str)?;
    let response = answer.get("response");
    let lost = response
        .and_then(|r| r.get("error"))
        .and_then(Value::as_str)
        .is_some_and(|error| error.ends_with(LOST_RESULT));
    let returned = if lost {
        Returned::Lost
    } else if returned_ok(response) {
        Returned::Ok
    } else {
        Returned::Failed
    };
    Some((id, returned))
}

/// Feeds `monitor` what one response says of its call.
pub fn apply_response(monitor: &mut Monitor, answer: &Value) {
    match response_outcome(answer) {
        Some((id, Returned::Ok)) => monitor.returned(id, true),
        Some((id, Returned::Failed)) => monitor.returned(id, false),
        Some((id, Returned::Lost)) => monitor.lost(id),
        None => {}
    }
}

/// Whether a function response says the tool returned without error.
fn returned_ok(response: Option<&Value>) -> bool {
    let Some(response) = response else {
        return true;
    };
    let status = response.get("status").and_then(Value::as_str);
    response.get("error").is_none() && !matches!(status, Some("error" | "cancelled"))
}
