//! The collections agent of the `debt_collection` example (ported from the seed's
//! debt-collection app), written with `Live::builder()`, and the caller's side of its call.
//!
//! Five phases — disclosure → verify_identity → inform_debt → negotiate → close — steered
//! by context injection with deferred delivery (the seed's best practice for voice apps):
//! the persona is the session's instruction, set once; each phase's instruction, the
//! defaults' state and empathy modifiers and the `[Navigation]` block go to the model as
//! context turns, in one frame per turn boundary, held until the caller next speaks unless
//! the model must answer at once (an enter prompt, a first repair nudge).

// Shared by the `debt_collection` example and its tests; each uses part of it.
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

/// What the caller says, and how many model turns follow each line before the caller
/// speaks again (a turn whose boundary prompts the model is followed by its answer).
pub const CALLER_TURNS: [(&str, usize); 5] = [
    ("Hello?", 2),
    ("This is Ada Lovelace, born December 10th, 1815.", 2),
    ("This is ridiculous, I'm so angry!", 2),
    ("Fine, yes, I owe it.", 1),
    ("Can I pay over 5 months?", 2),
];

/// The balance owed, in dollars.
pub const BALANCE_USD: u32 = 1_250;

/// The state keys every phase shows the model (`with_state` on the defaults).
pub const DEBT_STATE_KEYS: &[&str] = &["caller_name", "emotional_state"];

/// The facts `record_fact` may write.
pub const FACTS: &[&str] = &["disclosure_given", "emotional_state", "debt_acknowledged"];

/// What the call showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Call {
    /// The model's answers, in order.
    pub answers: Vec<String>,
    /// The phases, in order.
    pub phases: Vec<String>,
    /// The state at the end, for the keys the application owns.
    pub state: BTreeMap<String, Value>,
    /// The navigation block at the end (`session:navigation_context`).
    pub navigation: Option<String>,
}

fn risk_is_elevated(state: &reel::actors::state::State) -> bool {
    state.get::<String>("emotional_state").as_deref() == Some("angry")
}

async fn record_fact(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let key = args["key"].as_str().unwrap_or_default().to_owned();
    if !FACTS.contains(&key.as_str()) {
        return Err(ctx.fail(format!(
            "`{key}` is not a fact to record; use one of {FACTS:?}"
        )));
    }
    ctx.state
        .set(&key, &args["value"])
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"recorded": key}))
}

async fn verify_identity(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let name = args["name"].as_str().unwrap_or_default().to_owned();
    let verified = args["date_of_birth"].as_str() == Some("1815-12-10");
    ctx.state
        .set("caller_name", &name)
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("identity_verified", verified)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"name": name, "verified": verified}))
}

async fn calculate_payment_plan(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let months = args["months"].as_u64().unwrap_or(1).clamp(1, 12) as u32;
    let plan = format!("{months} x ${}", BALANCE_USD / months);
    ctx.state
        .set("payment_plan", &plan)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"payment_plan": plan}))
}

/// The collections agent.
pub fn debt_collector() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction(
            "You are Sam, a courteous collections agent for Reel Recovery. Follow the FDCPA: \
             never threaten, never mislead.",
        )
        .steering_mode(SteeringMode::ContextInjection)
        .context_delivery(ContextDelivery::Deferred)
        .phase_defaults(|d| {
            d.with_state(DEBT_STATE_KEYS)
                .when(
                    risk_is_elevated,
                    "IMPORTANT: Use extra empathy. Never threaten.",
                )
                .navigation()
        })
        .repair(RepairConfig::new(2, 4).escalate_to("close"))
        .tool(SimpleTool::new(
            "record_fact",
            "Records a fact of the call: disclosure_given, emotional_state or debt_acknowledged.",
            None,
            record_fact,
        ))
        .tool(SimpleTool::new(
            "verify_identity",
            "Verifies the caller by full name and date of birth (YYYY-MM-DD).",
            None,
            verify_identity,
        ))
        .tool(SimpleTool::new(
            "calculate_payment_plan",
            "Splits the balance into monthly payments.",
            None,
            calculate_payment_plan,
        ))
        // ── phases ──────────────────────────────────────────────────────────────────
        .phase("disclosure", |p| {
            p.instruction(
                "Say this is an attempt to collect a debt and that any information obtained \
                 will be used for that purpose; then record disclosure_given.",
            )
            .tools(["record_fact"])
            .needs(&["disclosure_given"])
            .transition_with(
                "verify_identity",
                |s| s.get::<bool>("disclosure_given") == Some(true),
                "once the disclosure is given",
            )
        })
        .phase("verify_identity", |p| {
            p.instruction("Verify the caller's identity: full name and date of birth.")
                .guard(|s| s.get::<bool>("disclosure_given") == Some(true))
                .tools(["verify_identity", "record_fact"])
                .needs(&["caller_name", "identity_verified"])
                .enter_prompt("I'll now verify who I'm speaking with.")
                .transition_with(
                    "inform_debt",
                    |s| s.get::<bool>("identity_verified") == Some(true),
                    "once the identity is verified",
                )
        })
        .phase("inform_debt", |p| {
            p.instruction(
                "Tell the caller the balance owed to Acme Bank and ask them to acknowledge it.",
            )
            .tools(["record_fact"])
            .needs(&["debt_acknowledged"])
            .with_context(|_| format!("Balance: ${BALANCE_USD} owed to Acme Bank."))
            .enter_prompt_fn(|state, _turns| {
                let name = state.get::<String>("caller_name").unwrap_or_default();
                format!("Thank you, {name}. I'll explain the account now.")
            })
            .transition_with(
                "negotiate",
                |s| s.get::<bool>("debt_acknowledged") == Some(true),
                "once the debt is acknowledged",
            )
        })
        .phase("negotiate", |p| {
            p.instruction("Offer a payment plan the caller can afford.")
                .tools(["calculate_payment_plan", "record_fact"])
                .needs(&["payment_plan"])
                .transition_with(
                    "close",
                    |s| s.contains("payment_plan"),
                    "once a plan is agreed",
                )
        })
        .phase("close", |p| {
            p.instruction("Confirm the plan and end the call politely.")
                .with_state(&["payment_plan"])
                .tools(Vec::<String>::new())
                .enter_prompt_fn(|state, _turns| {
                    if state.contains("payment_plan") {
                        "Wrapping up the call.".to_owned()
                    } else {
                        "I'll close the call respectfully.".to_owned()
                    }
                })
                .terminal()
        })
        .initial_phase("disclosure")
}

/// The caller's side: after the greeting (sent by the chain's `.greeting`), each line of
/// [`CALLER_TURNS`] once the model has finished the turns before it. `events` must have
/// been subscribed before the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for (index, (line, turns)) in CALLER_TURNS.iter().enumerate() {
        if index > 0 {
            println!("caller: {line}");
            handle.send_text(*line)?;
        }
        for _ in 0..*turns {
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
            println!("agent: {answer}");
            call.answers.push(answer);
        }
    }
    let state = handle.state();
    for key in [
        "caller_name",
        "debt_acknowledged",
        "disclosure_given",
        "emotional_state",
        "identity_verified",
        "payment_plan",
    ] {
        if let Some(value) = state.get::<Value>(key) {
            call.state.insert(key.to_owned(), value);
        }
    }
    call.navigation = state.get::<String>("session:navigation_context");
    Ok(call)
}
