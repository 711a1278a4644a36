//! Per-call tapes: one JSON file per out-of-band model call, holding the request
//! as it was sent and the streamed answer chunk by chunk, with the delay before each chunk.
//!
//! ```json
//! {
//!   "meta": {"label": "smoke-1", "model": "gemini-2.5-flash",
//!            "recordedAt": "2025-12-10T18:00:00Z", "sdk": "reel 0.1.0",
//!            "comment": "optional notes"},
//!   "request": {"model": "gemini-2.5-flash", "contents": [...]},
//!   "stream": [
//!     {"delayNs": 0, "text": "[{\"type\":"},
//!     {"delayNs": 12000000, "text": ""},
//!     {"delayNs": 8000000, "text": "\"news\"}]", "finishReason": "STOP"}
//!   ]
//! }
//! ```
//!
//! The request is kept as JSON: this crate does not know the model types (for reel it is
//! `LlmRequest` serialized). Optional additions, written only when they carry information:
//! a chunk's `finishReason` and `usage` ([`RecordedChunk`]), and `end` ([`TapeEnd`]), set
//! when the call did not end normally (it failed, or the recording was abandoned), so that
//! a tape never looks complete when it is not.
//!
//! [`read_tape`] checks a tape and says where it is wrong; [`write_tape`] writes atomically.

mod chunk;
mod document;
mod error;

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::trace::Timestamp;
pub use chunk::{RecordedChunk, RecordedFunctionCall, RecordedUsage};
pub(crate) use document::{parse_document, read_document, read_document_bytes, write_document};
pub use error::{DocumentError, DocumentKind};

/// One recorded model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmTape {
    /// What the tape is, for people and tools.
    pub meta: TapeMeta,
    /// The request exactly as it was sent, as a JSON object.
    pub request: Map<String, Value>,
    /// The answer's chunks in the order they came.
    pub stream: Vec<RecordedChunk>,
    /// How the call ended, when it did not end normally after the last chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TapeEnd>,
}

/// What a tape is: a label, the model, when and with what it was recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TapeMeta {
    /// A name for the call (`smoke-1`, `extractor-003`).
    pub label: String,
    /// The model that answered.
    pub model: String,
    /// When the call started, RFC 3339.
    pub recorded_at: Timestamp,
    /// What recorded it (`reel 0.1.0`, `@google/genai`).
    pub sdk: String,
    /// Free notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// How a call ended when it did not end normally after its last recorded chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum TapeEnd {
    /// The call failed after the recorded chunks (or before any): replay fails the same way,
    /// at the same point.
    ///
    /// ```json
    /// {"kind": "error", "delayNs": 3000000, "message": "the model API answered 503 …"}
    /// ```
    Error {
        /// Nanoseconds after the last chunk (or the call's start) when the failure came.
        #[serde(rename = "delayNs")]
        delay_ns: u64,
        /// The failure as the model client reported it (never holds a key).
        message: String,
    },
    /// The recording stopped before the call ended, so the stream is only its beginning:
    /// replay yields the recorded chunks, then fails rather than pass for a whole answer.
    ///
    /// ```json
    /// {"kind": "abandoned", "reason": "the consumer dropped the stream outside a runtime"}
    /// ```
    Abandoned {
        /// Why the recording could not continue.
        reason: String,
    },
}

/// Reads and checks the tape at `path`.
///
/// Fails with a [`DocumentError`] naming the file, and the JSON path of a faulty value
/// (`stream[1].delayNs`) or the line and column of a syntax error.
///
/// ```no_run
/// let tape = reel_recorder::llm_tape::read_tape("tests/tapes/smoke-1.json")?;
/// println!("{} chunks from {}", tape.stream.len(), tape.meta.model);
/// # Ok::<_, reel_recorder::llm_tape::DocumentError>(())
/// ```
pub fn read_tape(path: impl AsRef<Path>) -> Result<LlmTape, DocumentError> {
    read_document(path.as_ref(), DocumentKind::Tape, None)
}

/// Parses a tape from `bytes`, the content of `path` (named in errors only).
pub fn parse_tape(bytes: &[u8], path: impl AsRef<Path>) -> Result<LlmTape, DocumentError> {
    document::parse_document(bytes, path.as_ref(), DocumentKind::Tape)
}

/// Writes `tape` to `path` atomically (a temporary file renamed over it), creating the
/// folder if needed. Returns the number of bytes written.
pub fn write_tape(path: impl AsRef<Path>, tape: &LlmTape) -> Result<u64, DocumentError> {
    write_document(tape, path.as_ref(), DocumentKind::Tape, None)
}
