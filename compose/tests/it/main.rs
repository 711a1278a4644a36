//! reel-compose's integration tests: one binary, one module per file.

#[path = "../support/scripted.rs"]
mod scripted;

mod artifact_store;
mod builder;
mod context;
mod contracts;
mod cost_and_rate_limit;
mod end_to_end;
mod harness;
mod middleware;
mod namespaces;
mod operators;
mod patterns;
mod processors;
