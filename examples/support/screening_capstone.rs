//! The call-screening agent of the `screening` capstone (the seed's `40_screening`):
//! Flow × Extract × Orchestration on one chain, and the caller's side of its call.
//!
//! - **Extract**: a deterministic record (`caller`: name, organisation, reason) filled
//!   from the caller's own words at each turn boundary — no model in the loop;
//! - **Flow**: identify → triage → route → end. `identify` is done when the three slots are
//!   captured, `triage` when the router's verdict is in `triage:result`, `route` when the
//!   call was transferred or the caller blocked. `transfer_call` is `never` allowed until
//!   the router called the caller `known` (a stranger or a spammer is never put
//!   through), `take_message` is the fallback, `block_caller` runs `once`;
//! - **Orchestration**: `.on_enter("triage", router, AgentMode::Dispatch)` dispatches the
//!   router sub-agent the moment `triage` becomes active; the conversation does not wait,
//!   and its verdict lands later. It is on the recording (`screening.resolved.jsonl`) with
//!   the place it landed, so a replay writes it there, at the same journal position, and
//!   calls nothing.

// Shared by the `screening` example and its tests; each uses part of it.
#![allow(dead_code)]

#[path = "capstone_call.rs"]
pub mod capstone_call;

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reel::actors::state::State;
use reel::actors::{EventStream, LiveHandle};
use reel::agents::{AgentMode, FnTextAgent};
use reel::extract::{Extract, Recognizer, RecordExtractor};
use reel::flow::{Flow, Guard};
use reel::fluent::{Live, LiveBuilder};
use reel::tools::{SimpleTool, ToolContext, ToolError};
use serde_json::{Value, json};

/// What the caller says; the model answers each line with one turn.
pub const CALLER_LINES: [&str; 5] = [
    "Hello, is Grace there?",
    "This is Bob Smith from Acme Warranty, about your car's extended warranty.",
    "Can you put me through now?",
    "Fine. Tell her to call me back about the warranty.",
    "Just put me through, this is urgent!",
];

/// The organisations Grace takes calls from.
pub const KNOWN_ORGANISATIONS: [&str; 2] = ["Analytical Engines", "Babbage & Co"];

/// The organisations the record recognises.
pub const ORGANISATIONS: [&str; 3] = ["Analytical Engines", "Babbage & Co", "Acme Warranty"];

/// What callers call about, as the record recognises it.
pub const REASONS: [&str; 4] = ["meeting", "invoice", "delivery", "warranty"];

/// How long the router takes: its verdict lands while the conversation goes on.
pub const ROUTER_TIME: Duration = Duration::from_millis(50);

/// The state keys a run reports at its end.
pub const REPORTED_KEYS: [&str; 6] = [
    "caller",
    "triage:result",
    "message",
    "blocked",
    "flow:active",
    "flow:done",
];

pub use capstone_call::Call;

/// The screening flow.
pub fn screening_flow() -> Flow {
    Flow::new()
        .step("identify")
        .posture("Find out who is calling, from which organisation, and why.")
        .done(Guard::captured([
            "derived:caller_name",
            "derived:organisation",
            "derived:reason",
        ]))
        .step("triage")
        .after("identify")
        .posture("Tell the caller you are checking whether Grace can take the call.")
        .done(Guard::resolved("triage"))
        .step("route")
        .after("triage")
        .posture(
            "Transfer a known caller; otherwise take a message, and block a spammer who insists.",
        )
        .ground("Triage: {triage:result}")
        .allow(["transfer_call", "take_message", "block_caller"])
        .done(Guard::any([
            Guard::called_ok("transfer_call"),
            Guard::called_ok("block_caller"),
        ]))
        .step("end")
        .after("route")
        .terminal()
        .never("transfer_call")
        .until(Guard::eq("triage:result", "known"))
        .once("block_caller")
        .require(["end"])
}

/// The name after "this is" / "my name is", up to the next "from", comma or full stop,
/// when it is capitalised.
fn caller_name(text: &str) -> Option<Value> {
    let lower = text.to_lowercase();
    let start = ["this is ", "my name is "]
        .iter()
        .filter_map(|lead| lower.find(lead).map(|at| at + lead.len()))
        .max()?;
    // `to_lowercase` keeps these ASCII leads' byte offsets for ASCII text; a text whose
    // offsets moved is read as saying no name.
    let rest = text.get(start..)?;
    let end = [" from ", ",", "."]
        .iter()
        .filter_map(|stop| rest.find(stop))
        .min()
        .unwrap_or(rest.len());
    let name = rest[..end].trim();
    // A name is capitalised: "this is urgent" names nobody.
    let capitalised = name.chars().next().is_some_and(char::is_uppercase);
    capitalised.then(|| json!(name))
}

/// The extraction record: who is calling, from where, and why.
pub fn caller_record() -> RecordExtractor {
    Extract::record("caller")
        .field("caller_name", Recognizer::custom(caller_name))
        .field("organisation", Recognizer::one_of(ORGANISATIONS))
        .field("reason", Recognizer::one_of(REASONS))
        .build()
}

/// The router sub-agent: `known`, `spam` or `unknown` from the captured organisation and
/// reason, after [`ROUTER_TIME`]. `calls` counts its runs (a replay makes none).
pub fn router_agent(calls: Arc<AtomicUsize>) -> FnTextAgent {
    FnTextAgent::new_async("router", move |state: State| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::time::sleep(ROUTER_TIME).await;
            let organisation = state
                .get::<String>("derived:organisation")
                .unwrap_or_default();
            let reason = state.get::<String>("derived:reason").unwrap_or_default();
            let verdict = if KNOWN_ORGANISATIONS.contains(&organisation.as_str()) {
                "known"
            } else if reason == "warranty" {
                "spam"
            } else {
                "unknown"
            };
            Ok(verdict.to_owned())
        }
    })
}

async fn transfer_call(ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("transferred", true)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"transferred": true}))
}

async fn take_message(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("message", &args["message"])
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"taken": true}))
}

async fn block_caller(ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state.set("blocked", true).map_err(|e| ctx.fail(e))?;
    Ok(json!({"blocked": true}))
}

/// The governed screening agent; `calls` counts the router sub-agent's runs.
pub fn screening_agent(calls: Arc<AtomicUsize>) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction("You screen calls for Grace Hopper. Be polite and brief.")
        .tool(SimpleTool::new(
            "transfer_call",
            "Puts the caller through to Grace.",
            None,
            |_args, ctx| transfer_call(ctx),
        ))
        .tool(SimpleTool::new(
            "take_message",
            "Takes a message for Grace: message.",
            None,
            take_message,
        ))
        .tool(SimpleTool::new(
            "block_caller",
            "Blocks the caller's number.",
            None,
            |_args, ctx| block_caller(ctx),
        ))
        .extract_record(caller_record())
        .govern(screening_flow())
        .on_enter("triage", router_agent(calls), AgentMode::Dispatch)
}

/// The caller's side: says each line of [`CALLER_LINES`] and waits for the model's turn
/// ([`capstone_call::converse`]), reporting [`REPORTED_KEYS`] at the end.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    capstone_call::converse(handle, events, &CALLER_LINES, &REPORTED_KEYS).await
}
