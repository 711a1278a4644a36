//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[allow(dead_code)]
#[path = "../support/mod.rs"]
mod support;

mod commands;
mod decode_errors;
mod decoder_never_panics;
mod endpoints;
mod events;
mod frames_roundtrip;
mod partial_frames;
mod phase;
mod sdk_fixtures;
mod setup_golden;
mod stream_frames;
mod tool_call_frames;
