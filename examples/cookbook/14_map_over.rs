//! 14 — map over (Walk): one agent over every item of a list. `MapOverTextAgent` with
//! `.concurrency(3)` (the seed's `map_over(agent, 3)`) classifies five product reviews,
//! three at a time, each on its own copy of the state; the labels come back in list order
//! (whatever order the calls finish in) under `results`, and an `FnTextAgent` aggregates
//! them into a tally. `classify_all >> tally` is one `SequentialTextAgent`.
//!
//! ```text
//! cargo run --example 14_map_over                            # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 14_map_over -- --live
//! GEMINI_API_KEY=… cargo run --example 14_map_over -- --live --record map.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/14_map_over.cassette.json`), offline. The calls run at once, so they
//! may come in any order; the cassette answers each by its request (its review), so the
//! replay gives every review the label it was recorded with. The bundled cassette was
//! recorded with a scripted model standing in for Gemini
//! (`tests/it/cookbook/ex14_map_over.rs` holds the script).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{
    AgentError, FnTextAgent, MapOverTextAgent, SequentialTextAgent, SharedAgent, TextAgent,
};
use reel::compose::{AgentBuilder, P};
use reel::llm::BaseLlm;

/// The example's name: its cassette is `assets/cookbook/14_map_over.cassette.json`.
pub const NAME: &str = "14_map_over";
/// How many reviews are classified at once.
pub const CONCURRENCY: usize = 3;
/// The labels the classifier may answer.
pub const LABELS: [&str; 3] = ["positive", "negative", "mixed"];
/// The reviews, in order.
pub const REVIEWS: [&str; 5] = [
    "Battery lasts all week and it charges fast.",
    "Stopped pairing with my phone after two days.",
    "Great sound, but the case scratches easily.",
    "Setup took one minute. Love it.",
    "Support never answered my emails.",
];

/// `map_over(review -> input >> classifier, 3) >> tally`.
pub fn pipeline(model: Arc<dyn BaseLlm>) -> SequentialTextAgent {
    let to_input: SharedAgent = Arc::new(FnTextAgent::new("to_input", |state: &State| {
        Ok(state.get::<String>("review").unwrap_or_default())
    }));
    let classifier = AgentBuilder::new("classifier")
        .instruction(
            P::task("Classify the product review's sentiment")
                + P::format("One word: positive, negative or mixed"),
        )
        .temperature(0.0)
        .build_shared(model);
    let each: SharedAgent = Arc::new(SequentialTextAgent::new(
        "classify_one",
        vec![to_input, classifier],
    ));
    let classify_all: SharedAgent = Arc::new(
        MapOverTextAgent::new("classify_all", each, "reviews")
            .item_key("review")
            .output_key("labels")
            .concurrency(CONCURRENCY),
    );
    let tally: SharedAgent = Arc::new(FnTextAgent::new("tally", |state: &State| {
        let labels = state
            .get::<Vec<String>>("labels")
            .ok_or_else(|| AgentError::failed("tally", "`labels` is not a list of texts"))?;
        let counts: Vec<String> = LABELS
            .iter()
            .map(|label| {
                let n = labels.iter().filter(|l| l.trim() == *label).count();
                format!("{n} {label}")
            })
            .collect();
        Ok(counts.join(", "))
    }));
    SequentialTextAgent::new("reviews", vec![classify_all, tally])
}

/// The example: classify every review, then tally.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let state = State::new();
    state.set("reviews", REVIEWS).await?;
    let tally = pipeline(models.default_model()?).run(&state).await?;
    let labels = state.get::<Vec<String>>("labels").unwrap_or_default();
    let mut out = format!(
        "map_over: {} reviews, {CONCURRENCY} at a time, labels in list order\n",
        REVIEWS.len()
    );
    for (review, label) in REVIEWS.iter().zip(&labels) {
        out.push_str(&format!("  {:<9} {review}\n", label.trim()));
    }
    out.push_str(&format!("tally: {tally}\n"));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
