//! # reel-replayer
//!
//! Replays recorded sessions through the real session tree, with only the transport swapped
//! for a tape reader, and reports where a replay parts from its recording.
//!
//! - [`replay_session`]: the harness (gated start, `release`, `drained`, outbound frames,
//!   divergences).
//! - [`ReplayTransport`](replay_transport::ReplayTransport): the tape-reading transport.
//! - [`divergence`]: JSON-path diffs of expected against actual frames.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod divergence;
pub mod harness;
pub mod outbound;
pub mod pacing;
pub mod replay_transport;
pub mod tape;

pub use divergence::{Divergence, DivergenceKind, PathDiff};
pub use harness::{Replay, ReplayError, collect_events_until_idle, replay_session};
pub use outbound::CapturedFrame;
pub use pacing::Pacing;
pub use replay_transport::ReplayOptions;
pub use tape::{Tape, TapeItem};
