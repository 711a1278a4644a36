//! Cassettes: every out-of-band model call of a session in one JSON file, each
//! as an interaction (the request, the whole answer as its chunks, when it was recorded).
//!
//! ```json
//! {
//!   "version": 2,
//!   "interactions": [
//!     {
//!       "request": {"model": "gemini-2.5-flash", "contents": [...]},
//!       "response": [{"delayNs": 0, "text": "Hel"}, {"delayNs": 4000000, "text": "lo"}],
//!       "recordedAt": "2025-12-10T18:00:00.000Z",
//!       "usage": {"promptTokens": 5, "responseTokens": 2, "totalTokens": 7},
//!       "durationNs": 4000000
//!     }
//!   ]
//! }
//! ```
//!
//! `usage` and `durationNs` are optional. A chunk may carry the function calls the model
//! made (`"functionCalls": [{"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}}]`),
//! and a request may hold `tools` and turns of `functionCall` / `functionResponse` parts:
//! that is format version 2 (decision 0057). Version 1 files (no function calls) are still
//! read as they are; every file written is version 2. A cassette has a size cap
//! ([`DEFAULT_MAX_CASSETTE_BYTES`] unless told otherwise): reading refuses a larger file
//! before parsing it, writing refuses to write one, each with
//! [`DocumentError::TooLarge`]. Writing is atomic (a temporary file renamed over the old).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::llm_tape::{
    DocumentError, DocumentKind, RecordedChunk, RecordedUsage, Timestamp, parse_document,
    read_document, read_document_bytes, write_document,
};

/// The cassette format version this crate writes (and the newest it reads).
///
/// Version 2 added the model's function calls to the recorded chunks (decision 0057).
pub const CASSETTE_VERSION: u64 = 2;

/// The oldest cassette format version this crate reads: version 1, which has no function
/// calls, reads as a version 2 file without any.
pub const OLDEST_CASSETTE_VERSION: u64 = 1;

/// The size cap of a cassette unless told otherwise: 64 MiB.
pub const DEFAULT_MAX_CASSETTE_BYTES: u64 = 64 * 1024 * 1024;

/// A cassette file: its format version and its interactions, in the order they were
/// recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CassetteFile {
    /// The format version: [`CASSETTE_VERSION`] when written, from
    /// [`OLDEST_CASSETTE_VERSION`] up when read.
    #[schemars(range(min = 1, max = 2))]
    pub version: u64,
    /// The recorded calls, oldest first.
    pub interactions: Vec<Interaction>,
}

/// One recorded call: the request and the whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Interaction {
    /// The request exactly as it was sent, as a JSON object.
    pub request: Map<String, Value>,
    /// The answer's chunks in the order they came, with the delay before each.
    pub response: Vec<RecordedChunk>,
    /// When the call started, RFC 3339.
    pub recorded_at: Timestamp,
    /// The call's token usage, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
    /// How long the call took, start to last chunk, in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    /// How the call failed, when it did: the error's message, after the chunks that came
    /// before it. Written only by a cassette that keeps failures (decision 0063); a replay
    /// answers the call with the same failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl Default for CassetteFile {
    fn default() -> Self {
        CassetteFile::new()
    }
}

impl CassetteFile {
    /// An empty cassette of the current version.
    pub fn new() -> Self {
        CassetteFile {
            version: CASSETTE_VERSION,
            interactions: Vec::new(),
        }
    }

    /// Reads and checks the cassette at `path`, refusing a file over `max_bytes`.
    ///
    /// Fails with a [`DocumentError`] naming the file, and the JSON path of a faulty value
    /// (`interactions[2].recordedAt`) or the line and column of a syntax error.
    pub fn read(path: impl AsRef<Path>, max_bytes: u64) -> Result<CassetteFile, DocumentError> {
        let path = path.as_ref();
        let cassette: CassetteFile = read_document(path, DocumentKind::Cassette, Some(max_bytes))?;
        cassette.check_version(path)?;
        Ok(cassette)
    }

    /// [`CassetteFile::read`], also giving back the bytes read: the file is read once (a
    /// pipe or `<(…)` works), for a caller that needs both (ids derived from the bytes).
    pub fn read_with_bytes(
        path: impl AsRef<Path>,
        max_bytes: u64,
    ) -> Result<(CassetteFile, Vec<u8>), DocumentError> {
        let path = path.as_ref();
        let bytes = read_document_bytes(path, DocumentKind::Cassette, Some(max_bytes))?;
        let cassette: CassetteFile = parse_document(&bytes, path, DocumentKind::Cassette)?;
        cassette.check_version(path)?;
        Ok((cassette, bytes))
    }

    /// Writes the cassette to `path` atomically, unless it would be over `max_bytes` (then
    /// nothing is written), as the current version ([`CASSETTE_VERSION`]: a cassette read
    /// from an older file is written upgraded). Creates the folder if needed. Returns the
    /// bytes written.
    pub fn write(&self, path: impl AsRef<Path>, max_bytes: u64) -> Result<u64, DocumentError> {
        if self.version == CASSETTE_VERSION {
            write_document(self, path.as_ref(), DocumentKind::Cassette, Some(max_bytes))
        } else {
            let upgraded = CassetteFile {
                version: CASSETTE_VERSION,
                interactions: self.interactions.clone(),
            };
            write_document(
                &upgraded,
                path.as_ref(),
                DocumentKind::Cassette,
                Some(max_bytes),
            )
        }
    }

    fn check_version(&self, path: &Path) -> Result<(), DocumentError> {
        if (OLDEST_CASSETTE_VERSION..=CASSETTE_VERSION).contains(&self.version) {
            Ok(())
        } else {
            Err(DocumentError::UnsupportedVersion {
                kind: DocumentKind::Cassette,
                path: path.to_owned(),
                found: self.version,
                oldest: OLDEST_CASSETTE_VERSION,
                supported: CASSETTE_VERSION,
            })
        }
    }
}
