//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../mcp_support/mod.rs"]
mod mcp_support;
#[allow(dead_code)]
#[path = "../postgres_server/mod.rs"]
mod postgres_server;
#[path = "../support/mod.rs"]
mod support;
#[path = "../../../tests/support/system_packages.rs"]
mod system_packages;

mod callbacks;
mod client_audio;
mod connect;
mod conversation_control;
mod extraction;
mod governed;
mod guarded_tools;
mod input_streaming_tools;
mod interceptors;
mod llm_cassette;
mod llm_replay;
mod mcp_http;
mod mcp_stdio;
mod orchestration;
mod persistence;
mod reactive;
mod reactive_validation;
mod record_extraction;
mod record_orchestration;
mod replay_verdict;
mod resume_replay;
mod session;
mod session_options;
mod session_services;
mod setup_golden;
mod streaming_tools;
mod subscribe_early;
mod validation;
