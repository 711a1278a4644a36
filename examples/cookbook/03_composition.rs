//! 03 — composition (Crawl): the operator algebra on one support agent. `S::` transforms
//! reshape the state before the agent runs (`>>`), `P::` sections compose its instruction
//! (`+`, rendered with state values by `P::with_state`), `T::` tools join with `|` (one of
//! them `T::cached`: the model asks it twice, it runs once), and `G::` guards join with `|`
//! and check the output: the first answer promises a refund, the guard rejects it, and the
//! agent's run fails with the guard's violation (and `output` is not written); asked
//! again, the answer passes.
//!
//! ```text
//! cargo run --example 03_composition                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 03_composition -- --live
//! GEMINI_API_KEY=… cargo run --example 03_composition -- --live --record composition.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/03_composition.cassette.json`), offline; the tools run again in a
//! replay. The bundled cassette was recorded with a scripted model standing in for Gemini
//! (`tests/it/cookbook/ex03_composition.rs` holds the script).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::TextAgent;
use reel::compose::{AgentBuilder, G, P, Prompt, S, StateTransform, T, Tools};
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/03_composition.cassette.json`.
pub const NAME: &str = "03_composition";
/// The customer's question.
pub const QUESTION: &str = "Can I get my money back for last month?";

/// `S::`: drop the internal id, merge the name into `customer`, rename `issue` to
/// `topic`, default the tone.
pub fn reshape() -> StateTransform {
    S::drop(&["internal_id"])
        >> S::merge(&["first_name", "last_name"], "customer")
        >> S::rename(&[("issue", "topic")])
        >> S::defaults(json!({"tone": "friendly"}))
}

/// `P::`: the instruction, section by section, with state values appended as it runs.
pub fn instruction() -> Prompt {
    P::role("a support agent for Acme Cloud")
        + P::task("Answer the customer's question")
        + P::constraint("Never promise a refund; quote the plan's terms")
        + P::format("Two sentences at most")
        + P::example(
            "Can I change plans?",
            "Yes, Ana: switch under Billing, it applies next month.",
        )
        + P::guidelines(&["Greet the customer by first name", "Name their plan"])
        + P::with_state(&["customer", "plan", "topic", "tone"])
}

/// `T::`: the plan's terms (cached: a second call with the same arguments is answered
/// from memory, `runs` counts the real runs) and the account's status (under a limit).
pub fn tools(runs: &Arc<AtomicUsize>) -> Tools {
    let runs = runs.clone();
    let terms = T::simple(
        "plan_terms",
        "The refund terms of a plan.",
        move |args: Value| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(json!({
                    "plan": args["plan"],
                    "terms": "unused days of the current month are credited, not refunded"
                }))
            }
        },
    );
    let status = T::simple(
        "account_status",
        "Whether the customer's account is in good standing.",
        |_args: Value| async { Ok(json!({"standing": "good", "months": 14})) },
    );
    T::cached(terms) | T::timeout(status, Duration::from_secs(5))
}

/// The state's keys, sorted, less the conversation's `input` and `output`.
fn sorted(state: &State) -> String {
    let keys: BTreeMap<String, Value> = match state.snapshot().to_json() {
        Value::Object(map) => map
            .into_iter()
            .filter(|(key, _)| key != "input" && key != "output")
            .collect(),
        _ => BTreeMap::new(),
    };
    // A map of JSON values always serializes.
    serde_json::to_string(&keys).unwrap_or_default()
}

/// The example: reshape the state, show the instruction, run the agent twice (the first
/// answer rejected by a guard), and print what happened.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let runs = Arc::new(AtomicUsize::new(0));
    let support = AgentBuilder::new("support")
        .instruction(instruction())
        .temperature(0.3)
        .tools(tools(&runs))
        .guard(G::max_length(240) | G::not_contains(&["refund guaranteed"]))
        .build(models.default_model()?);
    let state = State::new();
    state.set("input", QUESTION).await?;
    state.set("first_name", "Ana").await?;
    state.set("last_name", "Silva").await?;
    state.set("plan", "pro").await?;
    state.set("issue", "billing").await?;
    state.set("internal_id", "x-991").await?;

    let mut out = String::new();
    out.push_str(&format!("state before: {}\n", sorted(&state)));
    let transform = reshape();
    out.push_str(&format!("S:: {}\n", transform.label()));
    let pipeline = (transform >> support.clone()).compile(models.default_model()?);
    let first = pipeline.run(&state).await;
    out.push_str(&format!("state after:  {}\n", sorted(&state)));
    out.push_str("P:: instruction, as sent:\n");
    for line in support.config().instruction.render(&state).lines() {
        if !line.is_empty() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&format!(
        "T:: {} (plan_terms cached)\n",
        support.tools().names().join(" | ")
    ));
    out.push_str(&format!("G:: {:?}\n", support.config().guards));
    match first {
        Ok(answer) => out.push_str(&format!("first answer passed: {answer}\n")),
        Err(error) => out.push_str(&format!("first answer rejected: {error}\n")),
    }
    out.push_str(&format!(
        "`output` after the rejection: {}\n",
        state
            .get::<String>("output")
            .unwrap_or_else(|| "not set (a rejected answer is not written)".to_owned())
    ));
    out.push_str(&format!(
        "plan_terms ran {} time(s) (T::cached answers a repeated call from memory)\n",
        runs.load(Ordering::SeqCst)
    ));
    let second = support.run(&state).await?;
    out.push_str(&format!("asked again, passed: {second}\n"));
    out.push_str(&format!(
        "`output` now: {}\n",
        state.get::<String>("output").unwrap_or_default()
    ));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
