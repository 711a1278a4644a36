//! 19 — agent as a tool (Walk): a travel assistant (an `LlmTextAgent` with tools) whose
//! model calls a packing expert (another text agent, wrapped as a `TextAgentTool`) as a
//! function; the expert's answer goes back to the model as the tool's result, and the
//! assistant's model writes the final answer from it.
//!
//! ```text
//! cargo run --example 19_agent_tool                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 19_agent_tool -- --live
//! GEMINI_API_KEY=… cargo run --example 19_agent_tool -- --live --record agent-tool.cassette.json
//! ```
//!
//! The cassette holds all three model calls: the assistant's first (the tools it offered,
//! the call it made), the expert's, and the assistant's second (with the tool's response in
//! its conversation). Offline the expert runs again as the tool, its model answered from
//! the cassette, and the assistant's second request holds the same response, so it is
//! answered too. The bundled cassette was recorded with a scripted model standing in for
//! Gemini (`tests/it/cookbook/ex19_agent_tool.rs`).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{INPUT_KEY, LlmTextAgent, OUTPUT_KEY, TextAgent, TextAgentTool};
use reel::tools::ToolDispatcher;

/// The example's name: its cassette is `assets/cookbook/19_agent_tool.cassette.json`.
pub const NAME: &str = "19_agent_tool";
/// What the traveller asks.
pub const QUESTION: &str = "I'm going to Reykjavik for four days in March. What should I pack?";
/// The tool's name, as the assistant's model calls it.
pub const TOOL: &str = "packing_expert";
const TOOL_DESCRIPTION: &str =
    "Ask the packing expert for a packing list. Say where, when and for how long.";

const EXPERT: &str =
    "You are a packing expert. Answer with a short packing list, one line per item.";
const ASSISTANT: &str = "You are a travel assistant. For anything about what to pack, ask the \
packing_expert tool, then answer the traveller in two or three friendly sentences.";

/// The example: the assistant answers [`QUESTION`], calling the expert as a tool.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let model = models.default_model()?;
    // The expert runs over a state of its own: the tool writes the model's request to its
    // `input`, and the expert writes its answer to its `output`.
    let expert_state = State::new();
    let expert = LlmTextAgent::new("expert", Arc::clone(&model))
        .instruction(EXPERT)
        .temperature(0.0);
    let mut tools = ToolDispatcher::new();
    tools.register(TextAgentTool::new(
        TOOL,
        TOOL_DESCRIPTION,
        Arc::new(expert),
        expert_state.clone(),
    ))?;
    let assistant = LlmTextAgent::new("assistant", model)
        .instruction(ASSISTANT)
        .temperature(0.3)
        .tools(tools)
        .max_tool_rounds(2);

    let state = State::new();
    state.set(INPUT_KEY, QUESTION).await?;
    let answer = assistant.run(&state).await?;

    let asked = expert_state.get::<String>(INPUT_KEY);
    let expert_answer = expert_state.get::<String>(OUTPUT_KEY);
    let mut out = format!("traveller        | {QUESTION}\n");
    out.push_str(&format!("assistant offers | {TOOL}: {TOOL_DESCRIPTION}\n"));
    match (asked, expert_answer) {
        (Some(asked), Some(expert_answer)) => {
            out.push_str(&format!("assistant calls  | {TOOL}(request: {asked:?})\n"));
            for line in expert_answer.lines() {
                out.push_str(&format!("expert answers   | {line}\n"));
            }
            out.push_str(
                "                   (the expert's answer is the tool's result: {\"result\": …})\n",
            );
        }
        _ => out.push_str("assistant calls  | nothing: it answered without the expert\n"),
    }
    out.push_str(&format!("assistant answers| {answer}\n"));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
