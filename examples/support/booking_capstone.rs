//! The table-booking voice agent of the `booking` capstone (the seed's `39_booking`):
//! Flow × Extract × Orchestration in one chain, and the caller's side of its call.
//!
//! - **Extract**: a deterministic record (`booking`: party size, time) filled from the
//!   caller's own words at each turn boundary — no model in the loop;
//! - **Flow**: collect → check → confirm → done. `collect` is done when both slots are
//!   captured, `check` when the availability sub-agent's result is in `check:result`,
//!   `confirm` when `book_table` ran; `book_table` is a `commit` tool (once, refused until
//!   the check resolved, confirmed by the [`ConfirmationProvider`](reel::tools) before it
//!   runs); each step's posture and ground line steer the model;
//! - **Orchestration**: `.on_enter("check", availability, AgentMode::Call)` runs the
//!   sub-agent the moment `check` becomes active. Its result is on the recording
//!   (`booking.resolved.jsonl`), so a replay writes it from there and calls nothing.

// Shared by the `booking` example and its tests; each uses part of it.
#![allow(dead_code)]

#[path = "turns.rs"]
mod turns;

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reel::actors::state::State;
use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::agents::{AgentError, AgentMode, FnTextAgent};
use reel::extract::{Extract, Recognizer};
use reel::flow::{Flow, FlowExplanation, Guard};
use reel::fluent::{GovernedHandle, Live, LiveBuilder};
use reel::protocol::SessionEvent;
use reel::tools::{ConfirmationRequest, SimpleTool, ToolConfirmation, ToolContext, ToolError};
use serde_json::{Value, json};
use turns::wait_for_turn;

/// What the caller says; the model answers each line with one turn.
pub const CALLER_LINES: [&str; 4] = [
    "Hi, I'd like to book a table.",
    "A table for 4 tomorrow at 7pm.",
    "Is it free?",
    "Yes, book it.",
];

/// The state keys a run reports at its end.
pub const REPORTED_KEYS: [&str; 6] = [
    "booking",
    "check:result",
    "booked",
    "flow:active",
    "flow:done",
    "derived:party_size",
];

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
    /// The state at the end, for [`REPORTED_KEYS`].
    pub state: BTreeMap<String, Value>,
}

/// The booking flow: the conversation's stages and the tools' order as one DAG.
pub fn booking_flow() -> Flow {
    Flow::new()
        .step("collect")
        .posture("Ask for the party size and the time of the booking.")
        .done(Guard::captured(["derived:party_size", "derived:time"]))
        .step("check")
        .after("collect")
        .posture("Tell the caller you are checking availability.")
        .done(Guard::resolved("check"))
        .step("confirm")
        .after("check")
        .posture("Read the availability back; book the table once the caller agrees.")
        .ground("Availability: {check:result}")
        .allow(["book_table"])
        .done(Guard::called_ok("book_table"))
        .step("done")
        .after("confirm")
        .terminal()
        .commit("book_table", Guard::resolved("check"))
        .require(["done"])
}

/// The extraction record: the party size and the time, from the caller's words.
pub fn booking_record() -> reel::extract::RecordExtractor {
    Extract::record("booking")
        .field(
            "party_size",
            Recognizer::integer_near(["for", "party", "of"]),
        )
        .field("time", Recognizer::datetime())
        .build()
}

/// The availability sub-agent: reads the captured slots from (its copy of) the state and
/// answers in one line (the hour it checked). `calls` counts its runs (a replay makes none).
pub fn availability_agent(calls: Arc<AtomicUsize>) -> FnTextAgent {
    FnTextAgent::new("availability", move |state: &State| {
        calls.fetch_add(1, Ordering::SeqCst);
        let guests = state
            .get::<Value>("derived:party_size")
            .ok_or_else(|| missing("the party size"))?;
        let time = state
            .get::<Value>("derived:time")
            .ok_or_else(|| missing("the time"))?;
        // The hour only: the day ("tomorrow") is resolved on session time, and the
        // example's live run against the bundled tape runs on today's clock.
        let hour = time["time"].as_str().ok_or_else(|| missing("the hour"))?;
        Ok(format!("a table for {guests} is free at {hour}"))
    })
}

/// The sub-agent's error when a slot it reads was not captured.
fn missing(what: &str) -> AgentError {
    AgentError::Failed {
        agent: "availability".into(),
        message: format!("{what} was not captured"),
    }
}

async fn book_table(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let booking = json!({
        "party_size": args["party_size"],
        "date": args["date"],
        "time": args["time"],
        "reference": "R-0412",
    });
    ctx.state.set("booked", &booking).map_err(|e| ctx.fail(e))?;
    Ok(json!({"booked": true, "reference": "R-0412"}))
}

/// The caller agrees to each commit the flow asks about (the example's confirmation: a
/// real application asks the caller, or a person).
async fn confirm(request: ConfirmationRequest) -> ToolConfirmation {
    println!("  [asked: {}: yes]", request.message);
    ToolConfirmation::Confirmed
}

/// The governed booking agent; `calls` counts the availability sub-agent's runs.
pub fn booking_agent(calls: Arc<AtomicUsize>) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction("You are Rosa, the host of Trattoria Reel. Be brief and warm.")
        .tool(SimpleTool::new(
            "book_table",
            "Books a table: party_size, date (YYYY-MM-DD) and time (HH:MM).",
            None,
            book_table,
        ))
        .confirmation_provider(Arc::new(confirm))
        .extract_record(booking_record())
        .govern(booking_flow())
        .on_enter("check", availability_agent(calls), AgentMode::Call)
}

/// The caller's side: says each line of [`CALLER_LINES`] and waits for the model's turn,
/// printing the refusals, the tools that ran and the steps as they complete. `events`
/// must have been subscribed before the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for line in CALLER_LINES {
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
    for key in REPORTED_KEYS {
        if let Some(value) = state.get::<Value>(key) {
            call.state.insert(key.to_owned(), value);
        }
    }
    Ok(call)
}

/// Prints the steps completed since the last turn (and the check's result with its own).
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
