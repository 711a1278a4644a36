//! # reel-actors
//!
//! A Live session as a supervised tree: a ractor supervisor and transport, the inbox-driven
//! children on plain tasks the supervisor holds (decision 0079):
//!
//! ```text
//! SessionSupervisor            one per session; owns its children's refs, restarts them
//! ├── Transport                bytes in/out: WebSocket | test script | (replay) tape
//! ├── Router                   decodes inbound frames into events, routes them to the lanes
//! ├── FastLane                 audio, text deltas, transcripts, VAD: sync callbacks
//! ├── ControlLane              tool calls, turn complete, phases, async callbacks,
//! │                            the state reactor (watchers, computed values,
//! │                            temporal patterns: reel-reactive), transcript,
//! │                            extractors, snapshots
//! ├── Telemetry                token usage → on_usage (only with that callback; otherwise
//! │                            the router counts what telemetry counts)
//! ├── StateStore               persistent map, prefix scopes, mutation journal + sink
//! └── Recorder                 wire log writer: buffered; flushed when its queue
//!                              empties, every 50 ms while busy, and on stop
//! ```
//!
//! Start one with [`LiveSessionBuilder`]; drive it with the [`LiveHandle`] it returns.

// Library code never unwraps: a bad frame or a failed tool is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub(crate) mod bell;
pub mod callback_guard;
pub mod callbacks;
pub mod child;
mod child_spec;
pub(crate) mod control_lane;
pub mod conversation;
pub mod disk;
pub(crate) mod disk_threads;
pub mod events;
pub mod extract;
pub(crate) mod fast_lane;
pub mod fault;
pub(crate) mod go_away;
pub mod govern;
pub mod handle;
pub mod inbox;
pub(crate) mod lane_reports;
pub mod mailbox;
mod panic_message;
pub mod peers;
pub mod persistence;
pub mod phases;
pub mod playback;
pub mod reactor;
pub mod recorder;
pub(crate) mod recorder_ticks;
pub mod router;
pub mod session;
pub mod slot;
pub mod state;
pub(crate) mod supervisor;
pub mod telemetry;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tools;
pub mod transcript;
pub mod transport;
pub mod writer;

/// Client audio: the jitter buffer and voice activity detection (the `reel-audio` crate).
pub use reel_audio as audio;
/// Out-of-band model calls (the `reel-llm` crate).
pub use reel_llm as llm;
/// The session clock (it lives in `reel-recorder`, which stamps every recorded frame).
pub use reel_recorder::clock;

pub use child::Child;
pub use events::{EventEnvelope, EventStream, Lane, LiveEvent};
pub use handle::{BufferStats, LiveHandle};
pub use session::{LiveSessionBuilder, SessionOptions, SessionStartError};
pub use supervisor::{RestartPolicy, SessionEnd};
