//! 23 — deep research (Run): one question researched over several sources, then merged. A
//! researcher with Google Search (`T::google_search`, a tool the Gemini API runs itself)
//! is mapped over the sources (`MapOverTextAgent`: one call per source, in order), each
//! answer grounded in what the search found and citing it; a synthesis agent merges the
//! findings into one brief, keeping the citations and saying where the sources differ.
//!
//! ```text
//! cargo run --example 23_deep_research                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 23_deep_research -- --live
//! GEMINI_API_KEY=… cargo run --example 23_deep_research -- --live --record research.cassette.json
//! ```
//!
//! **How reel records a built-in tool.** The search runs at Google, inside the model call:
//! reel sees a request declaring `{"googleSearch": {}}` and an answer whose text is
//! grounded in the results. The cassette keeps exactly that, the request with its tool
//! declaration and the answer's text, so a replay searches nothing and answers the same.
//! The answer's grounding metadata (the search queries, the source chunks) is not kept:
//! reel's REST client reads an answer's text, function calls, finish reason and usage
//! only. By default every call is answered from the bundled cassette
//! (`assets/cookbook/23_deep_research.cassette.json`), offline; the script it was recorded
//! from is in `tests/it/cookbook/ex23_deep_research.rs`.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{FnTextAgent, MapOverTextAgent, SequentialTextAgent, SharedAgent, TextAgent};
use reel::compose::{AgentBuilder, P};
use reel::llm::BaseLlm;

/// The example's name: its cassette is `assets/cookbook/23_deep_research.cassette.json`.
pub const NAME: &str = "23_deep_research";
/// The question.
pub const QUESTION: &str = "How do teams test LLM agents without calling the model in CI?";
/// The sources, each researched on its own.
pub const SOURCES: [&str; 3] = [
    "engineering blogs",
    "open-source test tooling documentation",
    "research papers on agent evaluation",
];

/// The researcher: Google Search on, answers citing what it found.
pub fn researcher() -> AgentBuilder {
    AgentBuilder::new("researcher")
        .instruction(
            P::role("a research assistant")
                + P::task("Search the web for the question, restricted to the source named, and answer in two sentences")
                + P::format("cite each claim as [n] with the page's address at the end"),
        )
        .google_search()
        .temperature(0.2)
}

/// The request for one source: the question and where to look.
fn ask(source: &str) -> String {
    format!("Question: {QUESTION}\nSource: {source}")
}

/// The pipeline: each source researched, then the findings merged.
pub fn research(model: &Arc<dyn BaseLlm>) -> SequentialTextAgent {
    let per_source: SharedAgent = Arc::new(SequentialTextAgent::new(
        "research_one",
        vec![
            Arc::new(FnTextAgent::new("ask", |state: &State| {
                Ok(ask(&state.get::<String>("item").unwrap_or_default()))
            })),
            researcher().build_shared(model.clone()),
        ],
    ));
    let sources: SharedAgent = Arc::new(MapOverTextAgent::new("sources", per_source, "sources"));
    let synthesis = AgentBuilder::new("synthesis")
        .instruction(
            P::role("a research editor")
                + P::task("Merge the findings into a brief of three bullet points")
                + P::guidelines(&["keep every citation", "say where the sources differ"]),
        )
        .temperature(0.2)
        .build_shared(model.clone());
    SequentialTextAgent::new("deep_research", vec![sources, synthesis])
}

/// The example: the question researched and merged, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let model = models.default_model()?;
    let state = State::new();
    state.set("sources", SOURCES).await?;
    state.set("input", QUESTION).await?;
    let brief = research(&model).run(&state).await?;

    let mut out = format!("question: {QUESTION}\n");
    let probe = State::new();
    probe.set("input", ask(SOURCES[0])).await?;
    let request = researcher().build(model).request(&probe)?;
    out.push_str(&format!(
        "each researcher call declares: tools = {} (run by the API; recorded as part of the request)\n\n",
        serde_json::to_string(&request.tools)?
    ));
    let findings = state.get::<Vec<String>>("results").unwrap_or_default();
    for (source, finding) in SOURCES.iter().zip(findings) {
        out.push_str(&format!("== {source} ==\n{finding}\n"));
    }
    out.push_str(&format!("\n== synthesis ==\n{brief}\n"));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
