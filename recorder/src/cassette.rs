//! Cassettes: every out-of-band model call of a session in one JSON file, each
//! as an interaction (the request, the whole answer as its chunks, when it was recorded).
//!
//! ```json
//! {
//!   "version": 1,
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
//! `usage` and `durationNs` are optional. A cassette has a size cap
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

/// The cassette format version this crate reads and writes.
pub const CASSETTE_VERSION: u64 = 1;

/// The size cap of a cassette unless told otherwise: 64 MiB.
pub const DEFAULT_MAX_CASSETTE_BYTES: u64 = 64 * 1024 * 1024;

/// A cassette file: its format version and its interactions, in the order they were
/// recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CassetteFile {
    /// The format version, [`CASSETTE_VERSION`].
    #[schemars(range(min = 1, max = 1))]
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
    /// nothing is written). Creates the folder if needed. Returns the bytes written.
    pub fn write(&self, path: impl AsRef<Path>, max_bytes: u64) -> Result<u64, DocumentError> {
        write_document(self, path.as_ref(), DocumentKind::Cassette, Some(max_bytes))
    }

    fn check_version(&self, path: &Path) -> Result<(), DocumentError> {
        if self.version == CASSETTE_VERSION {
            Ok(())
        } else {
            Err(DocumentError::UnsupportedVersion {
                kind: DocumentKind::Cassette,
                path: path.to_owned(),
                found: self.version,
                supported: CASSETTE_VERSION,
            })
        }
    }
}
