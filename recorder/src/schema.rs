//! JSON Schemas of reel's file formats, one line's worth each, generated from the types
//! that read and write them, so they cannot drift apart.
//!
//! Both are JSON Schema 2020-12. They accept fields they do not name, as the readers do:
//! a newer writer's optional additions do not make an older file invalid.
//!
//! ```
//! let schema = reel_recorder::schema::wire_entry_schema();
//! assert_eq!(schema["title"], "WireEntry");
//! assert_eq!(schema["properties"]["payload_b64"]["contentEncoding"], "base64");
//! ```

use schemars::schema_for;
use serde_json::Value;

use crate::cassette::CassetteFile;
use crate::journal::StateMutation;
use crate::llm_tape::LlmTape;
use crate::trace::AgentTrace;
use crate::wire_log::WireEntry;

/// The schema of one wire-log line, a [`WireEntry`]: `payload_b64` is a base64 string
/// (`contentEncoding: base64`).
pub fn wire_entry_schema() -> Value {
    schema_for!(WireEntry).into()
}

/// The schema of one journal line, a [`StateMutation`]: `old` and `new` are any JSON value.
pub fn journal_entry_schema() -> Value {
    schema_for!(StateMutation).into()
}

/// The schema of a per-call tape, an [`LlmTape`]: a whole file, not a line. `delayNs` is a
/// non-negative integer, `meta.recordedAt` a `date-time`, `request` any JSON object.
pub fn llm_tape_schema() -> Value {
    schema_for!(LlmTape).into()
}

/// The schema of a cassette, a [`CassetteFile`]: a whole file, `version` 1 and its
/// interactions.
pub fn cassette_schema() -> Value {
    schema_for!(CassetteFile).into()
}

/// The schema of a whole agent trace file, an [`AgentTrace`] (with reel's
/// optional additions): timestamps are RFC 3339 strings (`format: date-time`).
pub fn trace_schema() -> Value {
    schema_for!(AgentTrace).into()
}
