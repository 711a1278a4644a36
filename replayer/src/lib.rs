//! # reel-replayer
//!
//! Replays recorded sessions through the real session tree, with only the transport swapped
//! for a tape reader, and reports where a replay parts from its recording.
//!
//! - [`replay_session`]: the harness (gated start, `release`, `drained`, outbound frames,
//!   divergences).
//! - [`ReplayTransport`](replay_transport::ReplayTransport): the tape-reading transport.
//! - [`Divergence`]: where a replayed frame differs from the recorded one, with JSON-path
//!   diffs ([`PathDiff`]) of expected against actual.
//! - [`journal_diff`] and [`journal_match`]: the recorded journal against a replay's, by
//!   final values and entry by entry; [`verdict`]: CLEAN or DRIFT, the one definition.
//!   [`last_replay`]: that verdict kept beside the log (`X.replay.json`) for `reel studio`.
//! - [`export`]: a wire log as an agent trace and as OpenTelemetry (OTLP/JSON)
//!   spans.
//!
//! The tape server (`reel serve`) is a crate of its own, `reel-tape-server`.
//!
//! The names at the crate root are the API; the modules that only define them
//! (`divergence`, `harness`, `outbound`, `pacing`, `recorded_confirmations`,
//! `recorded_tool`) are private (decision 0043):
//!
//! ```compile_fail
//! use reel_replayer::harness::replay_session; // private: `reel_replayer::replay_session`
//! ```

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod divergence;
pub mod export;
mod harness;
pub mod journal_diff;
pub mod journal_match;
pub mod last_replay;
pub mod log_diff;
pub mod log_stats;
pub mod offline;
mod outbound;
mod pacing;
mod recorded_confirmations;
mod recorded_tool;
pub mod recorded_tools;
pub mod replay_transport;
pub mod summary;
pub mod tape;
pub mod tape_scan;
pub mod timeline;
pub mod verdict;

pub use divergence::{Divergence, DivergenceKind, PathDiff};
pub use harness::{Replay, ReplayError, collect_events_until_idle, replay_session};
pub use outbound::CapturedFrame;
pub use pacing::Pacing;
pub use recorded_confirmations::RecordedConfirmations;
pub use recorded_tool::RecordedTool;
pub use replay_transport::ReplayOptions;
pub use tape::{ReadAhead, Tape, TapeItem};
pub use tape_scan::TapeScan;
pub use verdict::{Drift, Verdict};
