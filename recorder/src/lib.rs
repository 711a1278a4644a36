//! # reel-recorder
//!
//! reel's file formats and their writers and readers: the state-mutation journal (seed 000's
//! JSONL entries), and with record & replay the wire log, traces and tapes. Readers stream
//! with bounded memory, accept a torn last line with a warning, and reject corruption
//! elsewhere with the file and line.
//!
//! - [`jsonl`]: the streaming JSON Lines reader every recording is read with, and the
//!   buffered writer;
//! - [`journal`]: the state-mutation journal: [`journal::StateMutation`], the
//!   [`journal::JournalSink`] trait and its file and memory sinks, [`journal::read_journal`];
//! - [`error`]: [`RecordError`], naming the file and line of every failure.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod error;
pub mod journal;
pub mod jsonl;
pub mod wire_log;

pub use error::RecordError;
