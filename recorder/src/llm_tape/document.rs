//! Reading and writing a recording that is one JSON document (a tape, a cassette).
//!
//! Reading checks everything a reader relies on and says where it failed: an empty file, a
//! file that is not JSON (line and column), or a document of the wrong shape (the JSON path
//! of the faulty value, e.g. `stream[1].delayNs`). Writing is atomic: the document goes to a
//! temporary file beside the target, is synced, then renamed over it, so a reader never sees
//! half a file and a crash leaves the previous version whole.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::{DocumentError, DocumentKind};
use crate::json_fault::{JsonFault, parse_at_path};

/// Reads and parses the document at `path`; with `limit`, a file over `limit` bytes is
/// refused before it is parsed.
pub(crate) fn read_document<T: DeserializeOwned>(
    path: &Path,
    kind: DocumentKind,
    limit: Option<u64>,
) -> Result<T, DocumentError> {
    let bytes = read_document_bytes(path, kind, limit)?;
    parse_document(&bytes, path, kind)
}

/// The bytes of the document at `path`, read once (a pipe works); with `limit`, a file
/// over `limit` bytes is refused.
pub(crate) fn read_document_bytes(
    path: &Path,
    kind: DocumentKind,
    limit: Option<u64>,
) -> Result<Vec<u8>, DocumentError> {
    let io_error = |source| DocumentError::Io {
        kind,
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(io_error)?;
    let mut bytes = Vec::new();
    match limit {
        Some(limit) => {
            // Read one byte past the cap: enough to know the file is over it.
            (&mut file)
                .take(limit.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(io_error)?;
            let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
            if size > limit {
                let size = file.metadata().map_or(size, |meta| meta.len().max(size));
                return Err(DocumentError::TooLarge {
                    kind,
                    path: path.to_owned(),
                    size,
                    limit,
                });
            }
        }
        None => {
            file.read_to_end(&mut bytes).map_err(io_error)?;
        }
    }
    Ok(bytes)
}

/// Parses `bytes`, the content of `path`.
pub(crate) fn parse_document<T: DeserializeOwned>(
    bytes: &[u8],
    path: &Path,
    kind: DocumentKind,
) -> Result<T, DocumentError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(DocumentError::Empty {
            kind,
            path: path.to_owned(),
        });
    }
    parse_at_path(bytes).map_err(|(at, error)| describe(&error, at, path, kind))
}

/// Serializes `document` (pretty, with a final newline) and writes it to `path` atomically;
/// with `limit`, a document over `limit` bytes is refused and nothing is written. Creates
/// the parent folder when missing. Returns the number of bytes written.
pub(crate) fn write_document<T: Serialize>(
    document: &T,
    path: &Path,
    kind: DocumentKind,
    limit: Option<u64>,
) -> Result<u64, DocumentError> {
    let io_error = |source| DocumentError::Io {
        kind,
        path: path.to_owned(),
        source,
    };
    // Serializing these types cannot fail (every map has string keys); should it ever, the
    // error is reported as the write failing, not as a panic.
    let mut bytes = serde_json::to_vec_pretty(document)
        .map_err(|error| io_error(io::Error::new(io::ErrorKind::InvalidData, error)))?;
    bytes.push(b'\n');
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if let Some(limit) = limit
        && size > limit
    {
        return Err(DocumentError::TooLarge {
            kind,
            path: path.to_owned(),
            size,
            limit,
        });
    }
    write_atomically(path, &bytes).map_err(io_error)?;
    Ok(size)
}

/// Writes `bytes` to a fresh temporary file beside `path`, syncs it and renames it over
/// `path`. The temporary file is removed if any step fails.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
    })?;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&folder)?;
    let temporary = folder.join(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    } else if let Ok(folder) = File::open(&folder) {
        // Best effort: make the rename itself durable (not supported everywhere).
        let _ = folder.sync_all();
    }
    result
}

/// Turns a parser error met at the JSON path `at` into a [`DocumentError`]: a syntax error
/// or a document cut short is "not JSON" (line and column), anything else is "invalid" at
/// `at`. String literals in the parser's message are blanked.
fn describe(
    error: &serde_json::Error,
    at: String,
    path: &Path,
    kind: DocumentKind,
) -> DocumentError {
    let path = path.to_owned();
    match JsonFault::new(error, at) {
        JsonFault::Invalid { at, message } => DocumentError::Invalid {
            kind,
            path,
            at,
            message,
        },
        JsonFault::Syntax {
            line,
            column,
            message,
        } => DocumentError::NotJson {
            kind,
            path,
            line,
            column,
            message,
        },
    }
}
