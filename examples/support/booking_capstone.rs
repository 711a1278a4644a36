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

#[path = "capstone_call.rs"]
pub mod capstone_call;

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reel::actors::state::State;
use reel::actors::{EventStream, LiveHandle};
use reel::agents::{AgentError, AgentMode, FnTextAgent};
use reel::extract::{Extract, Recognizer};
use reel::flow::{Flow, Guard};
use reel::fluent::{Live, LiveBuilder};
use reel::tools::{ConfirmationRequest, SimpleTool, ToolConfirmation, ToolContext, ToolError};
use serde_json::{Value, json};

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

pub use capstone_call::Call;

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

/// The caller's side: says each line of [`CALLER_LINES`] and waits for the model's turn
/// ([`capstone_call::converse`]), reporting [`REPORTED_KEYS`] at the end.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    capstone_call::converse(handle, events, &CALLER_LINES, &REPORTED_KEYS).await
}
