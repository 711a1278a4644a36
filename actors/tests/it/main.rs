//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../conversation_support/mod.rs"]
mod conversation_support;
#[allow(dead_code)]
#[path = "../sim/mod.rs"]
mod sim;
#[path = "../speech/mod.rs"]
mod speech;
#[path = "../support/mod.rs"]
mod support;
#[path = "../../../tests/support/system_packages.rs"]
mod system_packages;
#[allow(dead_code)]
#[path = "../../../tools/tests/support/tool_calls.rs"]
mod tool_calls;
#[path = "../turns_support/mod.rs"]
mod turns_support;

mod client_audio;
mod client_vad_speech;
mod conversation_faults;
mod conversation_frames;
mod conversation_repair;
mod idle_tree;
mod interceptors;
mod journal_flush_thread;
mod lone_frame_wakes;
mod persistence;
mod reconnect_instruction;
mod session_keys;
mod session_lifecycle;
mod session_reactive;
mod session_recording;
mod session_release;
mod session_state;
mod session_tools;
mod session_tree;
mod simulation;
mod state_store;
mod task_children;
mod tool_limits;
mod tools;
mod transcript;
mod websocket_link;
