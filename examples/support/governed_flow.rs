//! The governed collections agent of the `governed_flow` example (the seed's
//! `37_governed_flow`), written with `Live::builder().govern(flow)`, and the caller's side
//! of its call.
//!
//! The flow is the whole script: verify → negotiate → take_payment → close. Tools are
//! gated by it (`lookup_account` only while verifying, `record_promise` only while
//! negotiating, `charge_card` only while taking the payment, `never` before the promise is
//! confirmed and `once`); the active step's posture and ground line follow the persona as
//! the system instruction at each turn boundary (`SteeringMode::InstructionUpdate`).

// Shared by the `governed_flow` example and its tests; each uses part of it.
#![allow(dead_code)]

#[path = "turns.rs"]
mod turns;

use std::collections::BTreeMap;
use std::error::Error;

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::flow::{Flow, FlowExplanation, Guard};
use reel::fluent::{GovernedHandle, Live, LiveBuilder};
use reel::protocol::SessionEvent;
use reel::tools::{SimpleTool, ToolContext, ToolError};
use serde_json::{Value, json};
use turns::wait_for_turn;

/// What the caller says; the model answers each line with one turn.
pub const CALLER_LINES: [&str; 5] = [
    "Hello?",
    "This is Ada Lovelace, born December 10th, 1815.",
    "I can pay $250 on Friday.",
    "Yes, please charge my card now.",
    "Charge it again, just to be sure.",
];

/// The balance owed, in dollars.
pub const BALANCE_USD: u32 = 1_250;

/// What the call showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Call {
    /// The model's answers, in order.
    pub answers: Vec<String>,
    /// The calls the flow refused: the call id and the answer the model got.
    pub refused: Vec<(String, String)>,
    /// The flow at the end, as `handle.why_blocked()` explains it.
    pub explanation: Option<FlowExplanation>,
    /// The state at the end, for the keys the application owns.
    pub state: BTreeMap<String, Value>,
}

/// The debt-collection flow: one DAG for the conversation's stages and the tools' order.
pub fn debt_flow() -> Flow {
    Flow::new()
        .step("verify")
        .posture("Verify the caller's identity before anything else.")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .step("negotiate")
        .after("verify")
        .posture("Negotiate an affordable payment; record the promise to pay.")
        .ground("Balance due: ${balance}")
        .allow(["record_promise"])
        .done(Guard::captured(["ptp_amount", "ptp_date"]))
        .step("take_payment")
        .after("negotiate")
        .posture("Take the payment the caller promised.")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("take_payment")
        .terminal()
        .never("charge_card")
        .until(Guard::is_true("ptp_confirmed"))
        .once("charge_card")
        .require(["close"])
}

async fn lookup_account(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let verified = args["date_of_birth"].as_str() == Some("1815-12-10");
    ctx.state
        .set("identity_verified", verified)
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("balance", BALANCE_USD)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"verified": verified, "balance": BALANCE_USD}))
}

async fn record_promise(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("ptp_amount", &args["amount"])
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("ptp_date", &args["date"])
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("ptp_confirmed", true)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"recorded": true}))
}

async fn charge_card(ctx: ToolContext) -> Result<Value, ToolError> {
    let amount = ctx.state.get::<Value>("ptp_amount").unwrap_or(Value::Null);
    ctx.state.set("charged", &amount).map_err(|e| ctx.fail(e))?;
    Ok(json!({"charged": amount}))
}

/// The governed collections agent.
pub fn governed_collector() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction(
            "You are Sam, a courteous collections agent for Reel Recovery. Never threaten, \
             never mislead.",
        )
        .tool(SimpleTool::new(
            "lookup_account",
            "Looks the caller's account up and verifies their identity.",
            None,
            lookup_account,
        ))
        .tool(SimpleTool::new(
            "record_promise",
            "Records the caller's promise to pay: amount and date.",
            None,
            record_promise,
        ))
        .tool(SimpleTool::new(
            "charge_card",
            "Charges the caller's card the promised amount.",
            None,
            |_args, ctx| charge_card(ctx),
        ))
        .govern(debt_flow())
}

/// The caller's side: says each line of [`CALLER_LINES`] and waits for the model's turn.
/// `events` must have been subscribed before the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for line in CALLER_LINES {
        println!("caller: {line}");
        handle.send_text(line)?;
        let mut answer = String::new();
        let finished = wait_for_turn(events, |lane, event| match (lane, event) {
            (Lane::Control, LiveEvent::Session(SessionEvent::TextComplete(text))) => {
                answer = text.clone();
            }
            (
                Lane::Control,
                LiveEvent::ToolFinished {
                    call_id,
                    name,
                    response,
                    ok: false,
                },
            ) => {
                let error = response["error"].as_str().unwrap_or_default().to_owned();
                println!("  [{name} ({call_id}) refused: {error}]");
                call.refused.push((call_id.clone(), error));
            }
            (Lane::Control, LiveEvent::ToolFinished { name, ok: true, .. }) => {
                println!("  [{name} ran]");
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
    call.explanation = handle.why_blocked();
    let state = handle.state();
    for key in [
        "charged",
        "identity_verified",
        "ptp_amount",
        "ptp_date",
        "flow:active",
        "flow:done",
    ] {
        if let Some(value) = state.get::<Value>(key) {
            call.state.insert(key.to_owned(), value);
        }
    }
    Ok(call)
}
