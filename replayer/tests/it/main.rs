//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../replay_support/mod.rs"]
mod replay_support;
#[path = "../server_support/mod.rs"]
mod server_support;

mod determinism;
mod extraction_replay;
mod interceptors_replay;
mod offline_one_pass;
mod pacing;
mod reactive_replay;
mod runtime_prompts;
mod server_concurrency;
mod server_matching;
mod server_paths;
mod server_record;
mod server_replay;
mod server_rest;
mod server_test_fixture;
mod server_tls;
mod trace_export;
mod unprovoked_frames;

// tests/server_secrets.rs is a binary of its own: it captures tracing output with a
// thread-scoped subscriber, whose per-callsite interest other tests logging on other threads
// of the same process can race (seen under scripts/flake-hunt).
