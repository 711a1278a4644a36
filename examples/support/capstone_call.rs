//! The caller's side of a capstone's call (`booking`, `screening`): says its lines one
//! turn at a time, prints the refusals, the tools that ran and the flow's steps as they
//! complete, and reports what the call showed.

// Shared by the capstone examples and their tests; each uses part of it.
#![allow(dead_code)]

#[path = "turns.rs"]
mod turns;

use std::collections::BTreeMap;
use std::error::Error;

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::flow::FlowExplanation;
use reel::fluent::GovernedHandle;
use reel::protocol::SessionEvent;
use serde_json::Value;
use turns::wait_for_turn;

/// What the call showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Call {
    /// The model's answers, in order.
    pub answers: Vec<String>,
    /// The calls the flow refused: the call id and the answer the model got.
    pub refused: Vec<(String, String)>,
    /// The flow's steps as each completed, in order (from `flow:done`).
    pub completed: Vec<String>,
    /// The flow at the end, as `handle.why_blocked()` explains it.
    pub explanation: Option<FlowExplanation>,
    /// The state at the end, for the keys the capstone reports.
    pub state: BTreeMap<String, Value>,
}

/// The caller's side: says each of `lines` and waits for the model's turn, printing the
/// refusals, the tools that ran and the steps as they complete; at the end, the flow's
/// explanation and the state's `reported` keys. `events` must have been subscribed before
/// the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
    lines: &[&str],
    reported: &[&str],
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for &line in lines {
        println!("caller: {line}");
        handle.send_text(line)?;
        let mut answer = String::new();
        let finished = wait_for_turn(events, |lane, event| {
            if lane != Lane::Control {
                return;
            }
            match event {
                LiveEvent::Session(SessionEvent::TextComplete(text)) => answer = text.clone(),
                LiveEvent::ToolFinished {
                    call_id,
                    name,
                    response,
                    ok: false,
                } => {
                    let error = response["error"].as_str().unwrap_or_default().to_owned();
                    println!("  [{name} ({call_id}) refused: {error}]");
                    call.refused.push((call_id.clone(), error));
                }
                LiveEvent::ToolFinished { name, ok: true, .. } => println!("  [{name} ran]"),
                _ => {}
            }
        })
        .await?;
        if !finished {
            return Err("the session ended before the model finished its turn".into());
        }
        println!("agent: {answer}");
        call.answers.push(answer);
        report_progress(handle, &mut call);
    }
    call.explanation = handle.why_blocked();
    let state = handle.state();
    for &key in reported {
        if let Some(value) = state.get::<Value>(key) {
            call.state.insert(key.to_owned(), value);
        }
    }
    Ok(call)
}

/// Prints the steps completed since the last turn (and a step's result with it).
fn report_progress(handle: &LiveHandle, call: &mut Call) {
    let state = handle.state();
    let done: Vec<String> = state.get("flow:done").unwrap_or_default();
    for step in done.iter().skip(call.completed.len()) {
        match state.get::<Value>(&format!("{step}:result")) {
            Some(result) => println!("  [completed {step}: {result}]"),
            None => println!("  [completed {step}]"),
        }
    }
    call.completed = done;
}
