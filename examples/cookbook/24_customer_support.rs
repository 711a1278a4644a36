//! 24 — customer support (Run): four turns of a support conversation. Each turn a
//! classifier labels the message (`intent|mood`), an escalation state machine moves on
//! that label (`self_service` → `priority` on an angry message → `human` on another, and
//! `human` stays), and a `RouteTextAgent` picks who answers: a person's hand-over once the
//! conversation is escalated to `human`, else the billing or the technical agent by intent,
//! else a general one (`M::audit` records which one answered). The routes are `S::eq` predicates on the state, so the same state
//! takes the same route in a replay; the agents see the escalation level in their
//! instruction (`P::with_state`).
//!
//! ```text
//! cargo run --example 24_customer_support                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 24_customer_support -- --live
//! GEMINI_API_KEY=… cargo run --example 24_customer_support -- --live --record support.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/24_customer_support.cassette.json`), offline; the script it was
//! recorded from is in `tests/it/cookbook/ex24_customer_support.rs`.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{
    AgentError, FnTextAgent, RouteRule, RouteTextAgent, SequentialTextAgent, SharedAgent, TextAgent,
};
use reel::compose::{AgentBuilder, AuditLog, M, P, S, StatePredicate};
use reel::llm::BaseLlm;

/// The example's name: its cassette is `assets/cookbook/24_customer_support.cassette.json`.
pub const NAME: &str = "24_customer_support";
/// What the customer says, turn by turn.
pub const MESSAGES: [&str; 4] = [
    "Hi, I was charged twice for my March invoice.",
    "Also the app crashes whenever I open the invoices page.",
    "I am still charged twice and nobody has fixed it!",
    "This is ridiculous. I want to talk to a person now.",
];

/// The escalation state machine: the next level from `level` on a message in `mood`.
pub fn escalate(level: &str, mood: &str) -> &'static str {
    match (level, mood) {
        ("human", _) | ("priority", "angry") => "human",
        ("priority", _) | ("self_service", "angry") => "priority",
        _ => "self_service",
    }
}

fn failed(agent: &'static str) -> impl Fn(reel::actors::state::StateError) -> AgentError {
    move |error| AgentError::failed(agent, error)
}

/// The classifier's label split into `intent` and `mood`, the escalation moved on, the
/// transcript kept; passes the customer's message on to the route.
fn track() -> SharedAgent {
    Arc::new(FnTextAgent::new_async("track", |state: State| async move {
        let label = state.get::<String>("input").unwrap_or_default();
        let (intent, mood) = label
            .trim()
            .split_once('|')
            .unwrap_or((label.trim(), "calm"));
        let level = state
            .get::<String>("escalation")
            .unwrap_or_else(|| "self_service".to_owned());
        let next = escalate(&level, mood);
        let message = state.get::<String>("message").unwrap_or_default();
        let mut transcript = state.get::<Vec<String>>("transcript").unwrap_or_default();
        transcript.push(format!("customer: {message}"));
        state.set("intent", intent).await.map_err(failed("track"))?;
        state.set("mood", mood).await.map_err(failed("track"))?;
        state
            .set("escalation", next)
            .await
            .map_err(failed("track"))?;
        state
            .set("transcript", &transcript)
            .await
            .map_err(failed("track"))?;
        Ok(message)
    }))
}

/// The reply appended to the transcript; passes it on.
fn keep_reply() -> SharedAgent {
    Arc::new(FnTextAgent::new_async(
        "keep_reply",
        |state: State| async move {
            let reply = state.get::<String>("input").unwrap_or_default();
            let mut transcript = state.get::<Vec<String>>("transcript").unwrap_or_default();
            transcript.push(format!("support: {reply}"));
            state
                .set("transcript", &transcript)
                .await
                .map_err(failed("keep_reply"))?;
            Ok(reply)
        },
    ))
}

fn responder(name: &str, role: &str, model: &Arc<dyn BaseLlm>, audit: &AuditLog) -> SharedAgent {
    AgentBuilder::new(name)
        .middleware(M::audit(audit))
        .instruction(
            P::role(role)
                + P::task("Answer the customer's message in one or two sentences")
                + P::constraint("at escalation priority, apologise first and give a date")
                + P::with_state(&["escalation"]),
        )
        .temperature(0.3)
        .build_shared(model.clone())
}

fn when(predicate: StatePredicate, agent: SharedAgent) -> RouteRule {
    RouteRule::new(move |state: &State| predicate.check_state(state), agent)
}

/// One turn: classify, move the escalation on, route, keep the reply. `audit` records
/// which agent answered.
pub fn turn(model: &Arc<dyn BaseLlm>, audit: &AuditLog) -> SequentialTextAgent {
    let classifier = AgentBuilder::new("classifier")
        .instruction(
            P::task("Label the customer's message as intent|mood")
                + P::constraint("intent is billing, technical or other; mood is calm or angry")
                + P::example("My card was charged twice!", "billing|angry"),
        )
        .temperature(0.0)
        .build_shared(model.clone());
    let transcript: SharedAgent = Arc::new(FnTextAgent::new("transcript", |state: &State| {
        let lines = state.get::<Vec<String>>("transcript").unwrap_or_default();
        Ok(lines.join("\n"))
    }));
    let handoff_writer = AgentBuilder::new("handoff")
        .instruction(P::task(
            "Summarise the conversation for the person taking it over, in one sentence",
        ))
        .temperature(0.0)
        .middleware(M::audit(audit))
        .build_shared(model.clone());
    let handoff: SharedAgent = Arc::new(SequentialTextAgent::new(
        "handoff",
        vec![transcript, handoff_writer],
    ));
    let route = RouteTextAgent::new(
        "route",
        vec![
            when(S::eq("escalation", "human"), handoff),
            when(
                S::eq("intent", "billing"),
                responder("billing", "a billing support agent", model, audit),
            ),
            when(
                S::eq("intent", "technical"),
                responder("technical", "a technical support agent", model, audit),
            ),
        ],
        responder("general", "a support agent", model, audit),
    );
    SequentialTextAgent::new(
        "turn",
        vec![classifier, track(), Arc::new(route), keep_reply()],
    )
}

/// The example: the conversation, turn by turn, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let audit = AuditLog::new();
    let turn = turn(&models.default_model()?, &audit);
    let state = State::new();
    let mut out = String::new();
    let mut path = vec!["self_service".to_owned()];
    for (number, message) in MESSAGES.iter().enumerate() {
        state.set("message", message).await?;
        state.set("input", message).await?;
        let before = state
            .get::<String>("escalation")
            .unwrap_or_else(|| "self_service".to_owned());
        let reply = turn.run(&state).await?;
        let after = state.get::<String>("escalation").unwrap_or_default();
        let get = |key: &str| state.get::<String>(key).unwrap_or_default();
        out.push_str(&format!("turn {}\n  customer   | {message}\n", number + 1));
        out.push_str(&format!(
            "  classifier | {}|{}\n",
            get("intent"),
            get("mood")
        ));
        out.push_str(&format!("  escalation | {before} -> {after}\n"));
        let answered = audit
            .entries()
            .last()
            .map(|entry| entry.agent.clone())
            .unwrap_or_default();
        out.push_str(&format!("  route      | {answered}\n"));
        out.push_str(&format!("  reply      | {reply}\n"));
        path.push(after);
    }
    path.dedup();
    out.push_str(&format!("escalation path: {}\n", path.join(" -> ")));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
