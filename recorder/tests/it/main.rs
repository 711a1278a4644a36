//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../common/mod.rs"]
mod common;
#[path = "../llm_support/mod.rs"]
mod llm_support;

mod cassette;
mod journal;
mod jsonl;
mod llm_schema;
mod llm_tape;
mod nul_filled;
mod redact;
mod schema;
mod trace;
mod wire_file;
mod wire_read;
