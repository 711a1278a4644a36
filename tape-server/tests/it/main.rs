//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! module they share is declared here once.

#[path = "../server_support/mod.rs"]
mod server_support;

mod server_concurrency;
mod server_matching;
mod server_paths;
mod server_record;
mod server_replay;
mod server_reports;
mod server_rest;
mod server_test_fixture;
mod server_tls;

// tests/server_secrets.rs is a binary of its own: it captures tracing output with a
// thread-scoped subscriber, whose per-callsite interest other tests logging on other threads
// of the same process can race (seen under scripts/flake-hunt).
