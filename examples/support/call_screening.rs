//! The screening assistant of the `call_screening` example (ported from the seed's
//! call-screening app), written with `Live::builder()`, and the caller's side of its call.
//!
//! Four phases — greeting → determine_purpose → transfer → farewell (or take_message) —
//! steered by context injection delivered at once: the persona is the session's
//! instruction; each phase's instruction, the caller's details and the `[Navigation]` block
//! are context turns, one frame per turn boundary, and every phase entry asks the model to
//! speak (`prompt_on_enter` on the defaults), the first one at connect, so the assistant
//! answers the phone.

// Shared by the `call_screening` example and its tests; each uses part of it.
#![allow(dead_code)]

#[path = "turns.rs"]
mod turns;

use std::collections::BTreeMap;
use std::error::Error;

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::fluent::{ContextDelivery, Live, LiveBuilder, RepairConfig, SteeringMode};
use reel::protocol::SessionEvent;
use reel::tools::{SimpleTool, ToolContext, ToolError};
use serde_json::{Value, json};
use turns::wait_for_turn;

/// What the caller says, and how many model turns follow each line (the first, empty, is
/// the assistant answering the phone).
pub const CALLER_TURNS: [(&str, usize); 3] = [
    ("", 1),
    ("Hi, I'm Jane Smith from Marketing.", 2),
    ("I need to discuss the Q3 budget with Alex.", 2),
];

/// Who Alex knows.
pub const CONTACTS: &[&str] = &["Jane Smith"];

/// What the call showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Call {
    /// The model's answers, in order.
    pub answers: Vec<String>,
    /// The phases, in order.
    pub phases: Vec<String>,
    /// The state at the end, for the keys the application owns.
    pub state: BTreeMap<String, Value>,
}

async fn check_contact_list(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let name = args["name"].as_str().unwrap_or_default().to_owned();
    let org = args["organization"].as_str().unwrap_or_default().to_owned();
    let known = CONTACTS.contains(&name.as_str());
    ctx.state
        .set("caller_name", &name)
        .map_err(|e| ctx.fail(e))?;
    ctx.state.set("caller_org", &org).map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("is_known_contact", known)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"known": known}))
}

async fn record_purpose(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let purpose = args["purpose"].as_str().unwrap_or_default().to_owned();
    ctx.state
        .set("call_purpose", &purpose)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"recorded": true}))
}

async fn transfer_call(ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("call_transferred", true)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"transferred_to": "Alex Rivera"}))
}

/// The screening assistant.
pub fn screener() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction("You screen calls for Alex Rivera. Be brief and friendly.")
        .steering_mode(SteeringMode::ContextInjection)
        .context_delivery(ContextDelivery::Immediate)
        .phase_defaults(|d| {
            d.with_state(&["caller_name", "caller_org"])
                .navigation()
                .prompt_on_enter(true)
        })
        .repair(RepairConfig::new(2, 4).escalate_to("take_message"))
        .tool(SimpleTool::new(
            "check_contact_list",
            "Looks the caller up in Alex's contacts and notes their name and organization.",
            None,
            check_contact_list,
        ))
        .tool(SimpleTool::new(
            "record_purpose",
            "Notes why the caller is calling.",
            None,
            record_purpose,
        ))
        .tool(SimpleTool::new(
            "transfer_call",
            "Transfers the call to Alex.",
            None,
            |_args, ctx| transfer_call(ctx),
        ))
        // ── phases ──────────────────────────────────────────────────────────────────
        .phase("greeting", |p| {
            p.instruction("Answer on behalf of Alex Rivera and ask who is calling.")
                .tools(["check_contact_list"])
                .needs(&["caller_name", "caller_org"])
                .transition_with(
                    "determine_purpose",
                    |s| s.contains("caller_name"),
                    "when the caller gives their name",
                )
        })
        .phase("determine_purpose", |p| {
            p.instruction("Ask why they are calling and note it.")
                .guard(|s| s.contains("caller_name"))
                .tools(["record_purpose"])
                .needs(&["call_purpose"])
                .enter_prompt_fn(|state, _turns| {
                    let name = state.get::<String>("caller_name").unwrap_or_default();
                    format!("I'll ask {name} what the call is about.")
                })
                .transition_with(
                    "transfer",
                    |s| {
                        s.get::<bool>("is_known_contact") == Some(true)
                            && s.contains("call_purpose")
                    },
                    "a known contact with a purpose",
                )
                .transition_with(
                    "take_message",
                    |s| s.contains("call_purpose"),
                    "anyone else",
                )
        })
        .phase("transfer", |p| {
            p.instruction("Tell the caller you are connecting them, then transfer the call.")
                .tools(["transfer_call"])
                .enter_prompt("I'll connect the caller to Alex now.")
                .transition_with(
                    "farewell",
                    |s| s.get::<bool>("call_transferred") == Some(true),
                    "once transferred",
                )
        })
        .phase("take_message", |p| {
            p.instruction("Take a message for Alex.")
                .transition("farewell", |s| s.contains("message"))
        })
        .phase("farewell", |p| {
            p.instruction("Say goodbye.")
                .tools(Vec::<String>::new())
                .prompt_on_enter(false)
                .terminal()
        })
        .initial_phase("greeting")
}

/// The caller's side: waits for the model's turns after each line of [`CALLER_TURNS`],
/// saying the line first (the first is empty: the assistant speaks first). `events` must
/// have been subscribed before the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for (line, turns) in CALLER_TURNS {
        if !line.is_empty() {
            println!("caller: {line}");
            handle.send_text(line)?;
        }
        for _ in 0..turns {
            let mut answer = String::new();
            let finished = wait_for_turn(events, |lane, event| match (lane, event) {
                (Lane::Control, LiveEvent::Session(SessionEvent::TextComplete(text))) => {
                    answer = text.clone();
                }
                (Lane::Control, LiveEvent::PhaseTransition { to, .. }) => {
                    println!("  [phase → {to}]");
                    call.phases.push(to.clone());
                }
                _ => {}
            })
            .await?;
            if !finished {
                return Err("the session ended before the model finished its turn".into());
            }
            println!("assistant: {answer}");
            call.answers.push(answer);
        }
    }
    let state = handle.state();
    for key in [
        "call_purpose",
        "call_transferred",
        "caller_name",
        "caller_org",
        "is_known_contact",
    ] {
        if let Some(value) = state.get::<Value>(key) {
            call.state.insert(key.to_owned(), value);
        }
    }
    Ok(call)
}
