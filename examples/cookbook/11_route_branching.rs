//! 11 — route branching (Walk): deterministic, state-driven routing with no model. A
//! classifier (`FnTextAgent`) reads each support ticket and writes `urgent`; a
//! `RouteTextAgent` then picks a desk by the first `RouteRule` whose predicate holds —
//! `S::is_true("urgent")`, `S::eq("tier", "vip")`, `S::eq("language", "pt")` — else the
//! general queue. The same state always takes the same branch, so a replay needs nothing
//! recorded: the bundled cassette is empty, and a run makes no model call at all.
//!
//! ```text
//! cargo run --example 11_route_branching                     # offline (no model is asked)
//! GEMINI_API_KEY=… cargo run --example 11_route_branching -- --live
//! GEMINI_API_KEY=… cargo run --example 11_route_branching -- --live --record route.cassette.json
//! ```
//!
//! `--live` changes nothing here (no agent asks a model); the flags are the cookbook's
//! common ones. `tests/it/cookbook/ex11_route_branching.rs` checks that the run made no
//! model call (the recorded cassette is empty).

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
use reel::compose::{S, StatePredicate};

/// The example's name: its cassette is `assets/cookbook/11_route_branching.cassette.json`.
pub const NAME: &str = "11_route_branching";

/// One support ticket: its text and what the CRM knows of the customer.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    /// What the customer wrote.
    pub text: &'static str,
    /// `vip` or `standard`.
    pub tier: &'static str,
    /// The customer's language.
    pub language: &'static str,
}

/// The tickets the example routes, in order.
pub const TICKETS: [Ticket; 4] = [
    Ticket {
        text: "The checkout page is down for everyone",
        tier: "standard",
        language: "en",
    },
    Ticket {
        text: "Please add two seats to our contract",
        tier: "vip",
        language: "en",
    },
    Ticket {
        text: "Como altero a minha fatura?",
        tier: "standard",
        language: "pt",
    },
    Ticket {
        text: "Where do I find last year's invoices?",
        tier: "standard",
        language: "en",
    },
];

/// Words that make a ticket urgent.
const URGENT_WORDS: [&str; 3] = ["down", "outage", "cannot log in"];

/// A desk: an agent answering with its name and the ticket.
fn desk(name: &'static str) -> SharedAgent {
    Arc::new(FnTextAgent::new(name, move |state: &State| {
        let ticket = state.get::<String>("input").unwrap_or_default();
        Ok(format!("{name} takes \"{ticket}\""))
    }))
}

fn rule(predicate: StatePredicate, agent: SharedAgent) -> RouteRule {
    RouteRule::new(move |state: &State| predicate.check_state(state), agent)
}

/// `classify >> route`: the classifier writes `urgent`, the route picks the desk.
pub fn triage() -> SequentialTextAgent {
    let classify: SharedAgent = Arc::new(FnTextAgent::new_async(
        "classify",
        |state: State| async move {
            let text = state.get::<String>("input").unwrap_or_default();
            let lower = text.to_lowercase();
            let urgent = URGENT_WORDS.iter().any(|word| lower.contains(word));
            state
                .set("urgent", urgent)
                .await
                .map_err(|error| AgentError::failed("classify", error))?;
            Ok(text)
        },
    ));
    let route = RouteTextAgent::new(
        "route",
        vec![
            rule(S::is_true("urgent"), desk("on_call_engineer")),
            rule(S::eq("tier", "vip"), desk("vip_desk")),
            rule(S::eq("language", "pt"), desk("portuguese_desk")),
        ],
        desk("general_queue"),
    );
    SequentialTextAgent::new("triage", vec![classify, Arc::new(route)])
}

/// The example: every ticket through `classify >> route`, with the state it was routed on.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    // No agent here asks a model: routing reads the state only.
    drop(models);
    let triage = triage();
    let mut out = String::from(
        "rules, first match wins: S::is_true(urgent) | S::eq(tier, vip) | S::eq(language, pt) | default\n",
    );
    for ticket in TICKETS {
        let state = State::new();
        state.set("input", ticket.text).await?;
        state.set("tier", ticket.tier).await?;
        state.set("language", ticket.language).await?;
        let routed = triage.run(&state).await?;
        let urgent = state.get::<bool>("urgent").unwrap_or_default();
        out.push_str(&format!(
            "tier={} language={} urgent={urgent}\n  -> {routed}\n",
            ticket.tier, ticket.language
        ));
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
