//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../replay_support/mod.rs"]
mod replay_support;

mod app_instruction_reconnect;
mod conversation_replay;
mod decodes_a_session;
mod determinism;
mod extraction_replay;
mod interceptors_replay;
mod offline_one_pass;
mod pacing;
mod reactive_replay;
mod runtime_prompts;
mod tape_reader_seam;
mod trace_export;
mod unprovoked_frames;
