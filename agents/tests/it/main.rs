//! reel-agents' integration tests: one binary, one module per file.

#[path = "../support/scripted_llm.rs"]
mod scripted_llm;

mod approval;
mod combinators;
mod decisions;
mod live_bridges;
mod map_over;
mod replay;
mod resolvers;
mod tool_loop;
