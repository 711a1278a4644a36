//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../llm_support/mod.rs"]
mod llm_support;

mod llm_cassette;
mod llm_gemini;
mod llm_tapes;
mod llm_tool_calls;
mod llm_trace;
