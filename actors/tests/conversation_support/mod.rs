//! Shared by the conversation-control tests: a three-phase call-screening machine that uses
//! every piece (defaults, modifiers, needs, navigation, a guard, an enter prompt, repair),
//! the frames it sends, and a script that drives a session through it.

#![allow(dead_code)] // each test file uses its own subset

use std::time::Duration;

use reel_actors::conversation::{PhaseDefaults, RepairConfig};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ServerConn;
use serde_json::{Value, json};

/// The session's own instruction (the setup's under context injection).
pub const PERSONA: &str = "You screen calls for Alex.";

/// greeting → identify (guarded on `caller_name`, with an enter prompt) → close; defaults
/// append `caller_name` and an empathy line when `app:upset`, and carry navigation.
pub fn screening(repair: Option<RepairConfig>) -> PhaseMachine {
    let mut builder = PhaseMachine::builder("greeting")
        .defaults(
            PhaseDefaults::default()
                .with_state(&["caller_name"])
                .when(|s| s.contains("app:upset"), "Use extra empathy.")
                .navigation(),
        )
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller.")
                .needs(&["caller_name"])
                .transition_with(
                    "identify",
                    |s| s.contains("app:ready"),
                    "when the caller is ready",
                )
                .transition("close", |s| s.contains("app:hangup")),
        )
        .phase(
            Phase::new("identify")
                .instruction("Ask for the organization.")
                .guard(|s| s.contains("caller_name"))
                .needs(&["caller_name", "caller_org"])
                .with_state(&["caller_org"])
                .enter_prompt("I'll now ask for the organization.")
                .transition_with(
                    "close",
                    |s| s.contains("caller_org"),
                    "when the organization is known",
                ),
        )
        .phase(Phase::new("close").instruction("Say goodbye.").terminal());
    if let Some(repair) = repair {
        builder = builder.repair(repair);
    }
    builder.build().unwrap()
}

/// A `clientContent` frame of model turns.
pub fn context(turns: &[&str], prompt: bool) -> Value {
    let turns: Vec<Value> = turns
        .iter()
        .map(|text| json!({"role": "model", "parts": [{"text": text}]}))
        .collect();
    json!({"clientContent": {"turns": turns, "turnComplete": prompt}})
}

/// A system instruction update.
pub fn instruction(text: &str) -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": text}]}}})
}

/// The user's text, as `send_text` sends it.
pub fn user_text(text: &str) -> Value {
    json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": text}]}], "turnComplete": true}})
}

pub fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

/// The navigation block of `greeting` before anything is known.
pub const NAV_GREETING: &str = "[Navigation]\nCurrent phase: greeting -- Greet the caller.\nStill needed: caller_name\nPossible next:\n  -> identify: when the caller is ready\n  -> close";

/// The navigation block of `identify` entered at turn 0, the organization still missing.
pub const NAV_IDENTIFY: &str = "[Navigation]\nCurrent phase: identify -- Ask for the organization.\nPrevious: greeting (turn 0)\nStill needed: caller_org\nPossible next:\n  -> close: when the organization is known";

/// The frames the session has sent by now (under paused time, the wait ends only once
/// nothing in the tree can make progress: every frame sent has arrived).
pub async fn sent_by_now(conn: &mut ServerConn) -> Vec<Value> {
    let mut frames = Vec::new();
    while let Ok(Some(frame)) = tokio::time::timeout(Duration::from_secs(5), conn.recv()).await {
        frames.push(frame.json().unwrap());
    }
    frames
}

/// The navigation block of `close`, entered at turn `turn` from `identify`.
pub fn nav_close(turn: u64) -> String {
    format!("[Navigation]\nCurrent phase: close -- Say goodbye.\nPrevious: identify (turn {turn})")
}
