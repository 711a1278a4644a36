//! 26 — dispatch and join (Run): a support ticket comes in; `DispatchTextAgent` starts
//! three pieces of background work (a French translation, a sentiment label, a five-word
//! summary; at most two at once) and returns at once, so the pipeline answers the customer
//! while they run; `JoinTextAgent` then waits for all three, in dispatch order, and writes
//! each result to the state at `{task}:result`.
//!
//! ```text
//! cargo run --example 26_dispatch_join                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 26_dispatch_join -- --live
//! GEMINI_API_KEY=… cargo run --example 26_dispatch_join -- --live --record dispatch.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/26_dispatch_join.cassette.json`), offline; the script it was recorded
//! from is in `tests/it/cookbook/ex26_dispatch_join.rs`. Each task runs over its own copy
//! of the state as it was at dispatch, so its request is the same in every run whatever
//! the timing, and the cassette answers it by its content, in any order.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{
    DispatchTextAgent, FnTextAgent, JoinTextAgent, LlmTextAgent, SequentialTextAgent, SharedAgent,
    TaskRegistry, TextAgent,
};
use reel::llm::BaseLlm;
use tokio::sync::Semaphore;

/// The example's name: its cassette is `assets/cookbook/26_dispatch_join.cassette.json`.
pub const NAME: &str = "26_dispatch_join";
/// The ticket.
pub const TICKET: &str =
    "My order 5521 arrived broken and nobody answers the phone. I want a refund today.";
/// The background tasks: name and the request each sends (`{ticket}` is the ticket).
pub const TASKS: [(&str, &str); 3] = [
    ("translate", "Translate into French: {ticket}"),
    (
        "sentiment",
        "Label the sentiment as positive, neutral or negative: {ticket}",
    ),
    ("summary", "Summarise in five words: {ticket}"),
];
/// How many background tasks run at once.
pub const BUDGET: usize = 2;

/// One background task: its request built from the ticket, then the model.
fn task(name: &str, template: &'static str, model: &Arc<dyn BaseLlm>) -> SharedAgent {
    let ask: SharedAgent = Arc::new(FnTextAgent::new(
        format!("{name}_prompt"),
        move |state: &State| {
            let ticket = state.get::<String>("ticket").unwrap_or_default();
            Ok(template.replace("{ticket}", &ticket))
        },
    ));
    let answer: SharedAgent = Arc::new(LlmTextAgent::new(name, model.clone()).temperature(0.0));
    Arc::new(SequentialTextAgent::new(name, vec![ask, answer]))
}

/// The pipeline: dispatch the tasks, acknowledge the ticket (noting how many tasks were
/// still waiting to be joined), join.
pub fn pipeline(model: &Arc<dyn BaseLlm>, waiting: Arc<Mutex<Vec<usize>>>) -> SequentialTextAgent {
    let registry = TaskRegistry::new();
    let tasks = TASKS
        .iter()
        .map(|(name, template)| ((*name).to_owned(), task(name, template, model)))
        .collect();
    let dispatch: SharedAgent = Arc::new(DispatchTextAgent::new(
        "dispatch",
        tasks,
        registry.clone(),
        Arc::new(Semaphore::new(BUDGET)),
    ));
    let counted = registry.clone();
    let count: SharedAgent = Arc::new(FnTextAgent::new("count", move |state: &State| {
        // A poisoned list only means a panicking thread held it; the list is whole.
        waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(counted.len());
        Ok(state.get::<String>("ticket").unwrap_or_default())
    }));
    let acknowledge: SharedAgent = Arc::new(
        LlmTextAgent::new("acknowledge", model.clone())
            .instruction(
                "Write a one-sentence acknowledgement of the customer's ticket. Promise nothing.",
            )
            .temperature(0.3),
    );
    let keep_ack: SharedAgent = Arc::new(FnTextAgent::new_async(
        "keep_ack",
        |state: State| async move {
            let ack = state.get::<String>("input").unwrap_or_default();
            state
                .set("acknowledgement", &ack)
                .await
                .map_err(|error| reel::agents::AgentError::failed("keep_ack", error))?;
            Ok(ack)
        },
    ));
    let join: SharedAgent = Arc::new(JoinTextAgent::new("join", registry));
    SequentialTextAgent::new("ticket", vec![dispatch, count, acknowledge, keep_ack, join])
}

/// The example: the ticket handled, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let waiting = Arc::new(Mutex::new(Vec::new()));
    let pipeline = pipeline(&models.default_model()?, waiting.clone());
    let state = State::new();
    state.set("ticket", TICKET).await?;
    state.set("input", TICKET).await?;
    let joined = pipeline.run(&state).await?;

    let waiting = waiting
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    let mut out = format!("ticket: {TICKET}\n");
    out.push_str(&format!(
        "dispatch: {} tasks started in the background (at most {BUDGET} at once); the pipeline went on at once\n",
        TASKS.len()
    ));
    out.push_str(&format!(
        "acknowledge (foreground, {} tasks not yet joined): {}\n",
        waiting.first().copied().unwrap_or_default(),
        state.get::<String>("acknowledgement").unwrap_or_default()
    ));
    out.push_str("join, in dispatch order:\n");
    for (name, _) in TASKS {
        let key = format!("{name}:result");
        out.push_str(&format!(
            "  {key} = {}\n",
            state.get::<String>(&key).unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "the join's output, the results joined:\n{joined}\n"
    ));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
