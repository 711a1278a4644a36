//! # reel-recorder
//!
//! reel's file formats and their writers and readers: the wire log and the state-mutation
//! journal, their redaction and their JSON Schemas. Readers
//! stream with bounded memory, accept a torn last line with a warning, and reject
//! corruption elsewhere with the file and line. Writers are buffered and infallible by
//! contract: a failure is logged and counted, never returned into the session.
//!
//! - [`wire_log`]: one [`WireEntry`] per frame (or connection end), the [`WireRecorder`]
//!   trait the transport records through, and [`MemoryWireRecorder`] for tests;
//! - [`wire_file`]: [`FileWireRecorder`], the wire log as a file, with its [`Durability`];
//! - [`wire_line`]: a wire-log line written by hand, byte-identical to serde's (the hot path);
//! - [`wire_read`]: [`read_wire_log`], [`open_wire_log`] and the checking
//!   [`WireLogReader`] (sequence order, empty logs);
//! - [`redact`]: [`Redactor`] rules that rewrite payload fields (silence audio, replace,
//!   remove) and the [`RedactingRecorder`] applying them before recording;
//! - [`journal`]: the state-mutation journal: [`journal::StateMutation`], the
//!   [`journal::JournalSink`] trait and its file and memory sinks, [`journal::read_journal`];
//! - [`schema`]: the JSON Schemas of a wire-log line and a journal line;
//! - [`trace`]: agent traces: [`trace::AgentTrace`], read with checks
//!   ([`trace::read_trace`]) and written ([`trace::write_trace`]);
//! - [`jsonl`]: the streaming JSON Lines reader every recording is read with, and the
//!   buffered writer;
//! - [`salvage`]: reading the entries before a damaged region (a NUL-filled tail after a
//!   power loss): [`salvage::Salvaged`] says how many and where reading stopped;
//! - [`llm_tape`]: per-call tapes of out-of-band model calls, [`llm_tape::read_tape`]
//!   and [`llm_tape::write_tape`];
//! - [`clock`]: the session clock every recorded timestamp is read from ([`clock::TokioClock`]
//!   live, [`clock::ManualClock`] in replay);
//! - [`cassette`]: every out-of-band call of a session in one file, with a size cap;
//! - [`live_feed`]: a running session's recording streamed to a viewer ([`live_feed::LiveMessage`]);
//! - [`error`]: [`RecordError`], naming the file and line of every failure, and
//!   [`RuleError`] for redaction rules.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cassette;
pub mod clock;
pub mod compressed;
pub mod error;
pub mod journal;
mod json_fault;
pub mod jsonl;
mod line_buffer;
pub mod live_feed;
pub mod llm_tape;
pub mod redact;
pub mod salvage;
pub mod schema;
pub mod trace;
pub mod wire_file;
pub mod wire_line;
pub mod wire_log;
pub mod wire_read;

pub use error::{RecordError, RuleError};
pub use redact::{RedactAction, RedactingRecorder, RedactionRule, Redactor};
pub use wire_file::{Durability, FileWireRecorder};
pub use wire_log::{CloseMark, Direction, MemoryWireRecorder, Source, WireEntry, WireRecorder};
pub use wire_read::{WireLogReader, open_wire_log, read_wire_log};
