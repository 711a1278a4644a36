//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

// The example_* modules include the examples' own files, each of which declares the
// examples' shared support modules as the example binaries do: those files are compiled
// once per example here, on purpose.
#![allow(clippy::duplicate_mod)]

#[allow(dead_code)]
#[path = "../support/bundled_tape.rs"]
mod bundled_tape;
#[path = "../support/chromium.rs"]
mod chromium;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[allow(dead_code)]
#[path = "../support/doc_blocks.rs"]
mod doc_blocks;
#[allow(dead_code)]
#[path = "../support/guide_project.rs"]
mod guide_project;
#[path = "../support/js_sdk.rs"]
mod js_sdk;
#[allow(dead_code)]
#[path = "../support/markdown.rs"]
mod markdown;
#[path = "../support/moto.rs"]
mod moto;
#[path = "../support/python_sdk.rs"]
mod python_sdk;
#[path = "../support/scripted_call.rs"]
mod scripted_call;
#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../support/studio_calls.rs"]
mod studio_calls;
#[path = "../support/system_packages.rs"]
mod system_packages;

mod agent_tool_trace;
mod cli_bad_input;
mod cli_consistency;
mod cli_decode;
mod cli_diff;
mod cli_eval;
mod cli_export;
mod cli_export_cassette;
mod cli_flow;
mod cli_honest_reports;
mod cli_inputs_once;
mod cli_mutation_probe;
mod cli_replay;
mod cli_replay_farm;
mod cli_replay_resumed;
mod cli_replay_s3;
mod cli_salvage;
mod cli_schema;
mod cli_serve;
mod cli_serve_edges;
mod cli_serve_json;
mod cli_serve_signals;
mod cli_show;
mod cli_terminal_escapes;
mod cli_trace;
mod cli_trace_gaps;
mod cookbook;
mod crash_recording;
mod demo_run;
mod demo_tape;
mod doc_links;
mod example_call_screening;
mod example_debt_collection;
mod example_phases;
mod example_proxy;
mod example_replay_test;
mod example_weather;
mod fuzz_seeds;
mod guide;
mod guide_tape;
mod library_without_cli;
mod partial_frame_session;
mod sdk_interop;
mod sdk_test_helpers;
mod studio;
mod studio_access;
mod studio_audio_bounds;
mod studio_controls;
mod studio_conversation;
mod studio_flow;
mod studio_frames;
mod studio_http;
mod studio_latencies;
mod studio_live;
mod studio_transcript;
mod studio_xss;
