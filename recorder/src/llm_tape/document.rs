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
use serde_json::error::Category;

use super::error::{DocumentError, DocumentKind};

/// Reads and parses the document at `path`; with `limit`, a file over `limit` bytes is
/// refused before it is parsed.
pub(crate) fn read_document<T: DeserializeOwned>(
    path: &Path,
    kind: DocumentKind,
    limit: Option<u64>,
) -> Result<T, DocumentError> {
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
    parse_document(&bytes, path, kind)
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
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let document = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let at = error.path().to_string();
        describe(error.inner(), at, path, kind)
    })?;
    deserializer
        .end()
        .map_err(|error| describe(&error, ".".to_owned(), path, kind))?;
    Ok(document)
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

/// Turns a parser error into a [`DocumentError`]: a syntax error or a document cut short is
/// "not JSON" (line and column), anything else is "invalid" at the JSON path `at`. String
/// literals in the parser's message are blanked.
fn describe(
    error: &serde_json::Error,
    at: String,
    path: &Path,
    kind: DocumentKind,
) -> DocumentError {
    // serde_json's Display appends " at line L column C"; the fields say it already.
    let text = error.to_string();
    let message = blank_string_literals(
        text.rsplit_once(" at line ")
            .map_or(text.as_str(), |(head, _)| head),
    );
    match error.classify() {
        Category::Data => DocumentError::Invalid {
            kind,
            path: path.to_owned(),
            at: field_path(at, &message),
            message,
        },
        Category::Syntax | Category::Eof | Category::Io => DocumentError::NotJson {
            kind,
            path: path.to_owned(),
            line: error.line(),
            column: error.column(),
            message,
        },
    }
}

/// `text` with the inside of every `"…"` replaced by `…`, so that no recorded value (a
/// prompt, an answer) reaches an error message or a log line.
fn blank_string_literals(text: &str) -> String {
    let pieces: Vec<&str> = text
        .split('"')
        .enumerate()
        .map(|(i, piece)| if i % 2 == 1 { "…" } else { piece })
        .collect();
    pieces.join("\"")
}

/// serde reports a missing field at the object that lacks it; point at the field itself.
fn field_path(at: String, message: &str) -> String {
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'));
    match missing {
        Some(field) if at == "." => field.to_owned(),
        Some(field) => format!("{at}.{field}"),
        None => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_named_by_its_own_path() {
        assert_eq!(field_path(".".into(), "missing field `stream`"), "stream");
        assert_eq!(
            field_path("meta".into(), "missing field `label`"),
            "meta.label"
        );
        assert_eq!(
            field_path("stream[1].delayNs".into(), "invalid type"),
            "stream[1].delayNs"
        );
    }
}
