//! The flow lane: the flow of a governed recording — each step active or done over time,
//! and the tool calls that were denied.
//!
//! What a governed session leaves beside its wire log `X.wire.jsonl` (decision 0053 and the
//! live wiring): its flow as `X.flow.json` (the serde JSON of `reel_flow::Flow`), and, in
//! the journal, the keys `flow:active` and `flow:done` (JSON arrays of step ids) written
//! whenever they change. A denied call is a tool call whose function response carries an
//! `error` member.
//!
//! With `X.flow.json`, the recording is scored against it (`reel_flow::score`, as
//! `reel flow check` does): the calls the flow refuses, with the sequence number of the
//! frame that carried each, every step's verdict at the end, completion. Without it (or
//! when it does not read or compile: the lane says why), the lane shows what the journal's
//! `flow:*` keys say, and the calls answered with an error. No lane at all for a recording
//! with neither a flow file nor a `flow:*` key.

use std::path::{Path, PathBuf};

use reel_flow::score::{journal_beside, score_recording};
use reel_flow::{Flow, Verdict};
use serde::Serialize;
use serde_json::Value;

use super::call::{StateChange, ToolBar};

/// The journal key of the active steps.
pub const FLOW_ACTIVE_KEY: &str = "flow:active";
/// The journal key of the steps done.
pub const FLOW_DONE_KEY: &str = "flow:done";

/// The flow of a governed recording, as the flow lane draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowLane {
    /// `flow` when `X.flow.json` was read and the recording scored against it; `journal`
    /// when the lane shows only what the journal's `flow:*` keys say.
    pub source: &'static str,
    /// Why `X.flow.json`, which exists, was not used (it does not read or compile, or the
    /// recording could not be scored); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The steps: in the flow's declaration order when scored, else in the order the
    /// journal first names them.
    pub steps: Vec<FlowStep>,
    /// The denied calls, in wire order.
    pub denied: Vec<DeniedCall>,
    /// Whether the flow was complete at the end (scored only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// The required steps never done (scored only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmet_requirements: Vec<String>,
}

/// One step over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowStep {
    /// The step's id (untrusted text: the page sets it as text).
    pub id: String,
    /// Where it stood at the end, by the score (scored only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// When it was active and when done, from the journal, in time order.
    pub spans: Vec<StepSpan>,
}

/// A time the step was active, or from when it was done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSpan {
    /// `active` or `done`.
    pub state: &'static str,
    /// When it started (ms since the recording's first entry).
    pub start_ms: u64,
    /// When it ended; `None` while it lasts to the end of the recording.
    pub end_ms: Option<u64>,
}

/// A tool call that was denied: the flow refuses it (scored), or its response carried an
/// `error` member, or both.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeniedCall {
    /// The sequence number of the `toolCall` frame that carried it.
    pub seq: u64,
    /// When the model called it; `None` when the wire log holds no such call (a score of a
    /// call the timeline does not show).
    pub t_ms: Option<u64>,
    /// The call id, when it had one.
    pub call_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// The flow's reason when it refuses the call, else the response's `error` text.
    pub reason: String,
    /// Whether the flow (scored) refuses the call.
    pub by_flow: bool,
    /// The `error` member of its function response, when it had one (the live session's
    /// denial as the model read it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The flow file beside a wire log: `X.flow.json` for `X.wire.jsonl` (or `X.jsonl`).
pub fn flow_file_beside(wire: &Path) -> Option<PathBuf> {
    let name = wire.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".wire.jsonl")
        .or_else(|| name.strip_suffix(".jsonl"))?;
    Some(wire.with_file_name(format!("{stem}.flow.json")))
}

/// The flow lane of the recording at `wire`, from its tool calls (`tools`, as the timeline
/// read them) and its journal's changes (`state`); `None` when the recording has neither a
/// flow file nor a `flow:*` key.
pub(crate) fn flow_lane(wire: &Path, tools: &[ToolBar], state: &[StateChange]) -> Option<FlowLane> {
    let flow_file = flow_file_beside(wire).filter(|path| path.exists());
    let journal_says = state
        .iter()
        .any(|change| change.key == FLOW_ACTIVE_KEY || change.key == FLOW_DONE_KEY);
    if flow_file.is_none() && !journal_says {
        return None;
    }
    let scored = flow_file.map(|path| scored(wire, &path));
    let (flow, score, problem) = match scored {
        Some(Ok((flow, score))) => (Some(flow), Some(score), None),
        Some(Err(problem)) => (None, None, Some(problem)),
        None => (None, None, None),
    };
    let mut ids: Vec<String> = flow
        .map(|flow| flow.steps.into_iter().map(|step| step.id).collect())
        .unwrap_or_default();
    for change in state
        .iter()
        .filter(|c| c.key == FLOW_ACTIVE_KEY || c.key == FLOW_DONE_KEY)
    {
        for id in step_ids(&change.new) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let steps = ids
        .into_iter()
        .map(|id| FlowStep {
            verdict: score.as_ref().and_then(|score| {
                score
                    .verdicts
                    .iter()
                    .find(|verdict| verdict.step == id)
                    .map(|verdict| verdict.verdict)
            }),
            spans: spans_of(&id, state),
            id,
        })
        .collect();
    let violations = score
        .as_ref()
        .map(|score| score.violations.as_slice())
        .unwrap_or_default();
    let mut denied: Vec<DeniedCall> = Vec::new();
    for violation in violations {
        let bar = tools.iter().find(|bar| {
            bar.call_seq == violation.seq
                && bar.name == violation.tool
                && violation.call_id.as_deref().is_none_or(|id| id == bar.id)
        });
        denied.push(DeniedCall {
            seq: violation.seq,
            t_ms: bar.map(|bar| bar.start_ms),
            call_id: violation.call_id.clone(),
            tool: violation.tool.clone(),
            reason: violation.reason.clone(),
            by_flow: true,
            error: bar.and_then(error_of),
        });
    }
    for bar in tools {
        let Some(error) = error_of(bar) else {
            continue;
        };
        let known = denied.iter().any(|call| {
            call.seq == bar.call_seq
                && call.tool == bar.name
                && call.call_id.as_deref().is_none_or(|id| id == bar.id)
        });
        if !known {
            denied.push(DeniedCall {
                seq: bar.call_seq,
                t_ms: Some(bar.start_ms),
                call_id: (!bar.id.is_empty()).then(|| bar.id.clone()),
                tool: bar.name.clone(),
                reason: error.clone(),
                by_flow: false,
                error: Some(error),
            });
        }
    }
    denied.sort_by_key(|call| (call.seq, call.t_ms));
    Some(FlowLane {
        source: if score.is_some() { "flow" } else { "journal" },
        problem,
        steps,
        denied,
        complete: score.as_ref().map(|score| score.complete),
        unmet_requirements: score
            .map(|score| score.unmet_requirements)
            .unwrap_or_default(),
    })
}

/// Reads and compiles the flow file at `path` and scores the recording against it; the
/// error says what went wrong, naming the file.
fn scored(wire: &Path, path: &Path) -> Result<(Flow, reel_flow::score::Score), String> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).map_err(|error| format!("{name}: {error}"))?;
    let flow = Flow::from_json(&text).map_err(|error| format!("{name}: {error}"))?;
    let compiled = flow.compile().map_err(|error| format!("{name}: {error}"))?;
    let journal = journal_beside(wire).filter(|journal| journal.exists());
    let score = score_recording(wire, journal.as_deref(), &compiled)
        .map_err(|error| format!("scoring against {name}: {error}"))?;
    Ok((flow, score))
}

/// The step ids a `flow:*` value names: a JSON array of strings, or a string holding one.
fn step_ids(value: &Value) -> Vec<String> {
    let parsed;
    let list = match value {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
            &parsed
        }
        other => other,
    };
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// When step `id` was active (between the `flow:active` writes that name it and the next
/// that does not) and from when it was done (the first `flow:done` write that names it).
fn spans_of(id: &str, state: &[StateChange]) -> Vec<StepSpan> {
    let mut spans: Vec<StepSpan> = Vec::new();
    let mut active_since: Option<u64> = None;
    let mut done_since: Option<u64> = None;
    for change in state {
        let names = || step_ids(&change.new).iter().any(|step| step == id);
        if change.key == FLOW_ACTIVE_KEY {
            match (active_since, names()) {
                (None, true) => active_since = Some(change.t_ms),
                (Some(start), false) => {
                    spans.push(StepSpan {
                        state: "active",
                        start_ms: start,
                        end_ms: Some(change.t_ms),
                    });
                    active_since = None;
                }
                _ => {}
            }
        } else if change.key == FLOW_DONE_KEY && done_since.is_none() && names() {
            done_since = Some(change.t_ms);
        }
    }
    if let Some(start) = active_since {
        spans.push(StepSpan {
            state: "active",
            start_ms: start,
            end_ms: None,
        });
    }
    if let Some(start) = done_since {
        spans.push(StepSpan {
            state: "done",
            start_ms: start,
            end_ms: None,
        });
    }
    spans.sort_by_key(|span| span.start_ms);
    spans
}

/// The `error` member of a call's function response, as text.
fn error_of(bar: &ToolBar) -> Option<String> {
    let error = bar.result.as_ref()?.get("error")?;
    Some(match error {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}
