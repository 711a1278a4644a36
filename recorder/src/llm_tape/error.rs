//! Errors of reading and writing a one-document JSON recording (a tape, a cassette): each
//! names the file, and where the content is at fault, the JSON path or the line and column.

use std::path::PathBuf;

/// Which format a document is, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DocumentKind {
    /// A per-call tape ([`crate::llm_tape::LlmTape`]).
    Tape,
    /// A cassette ([`crate::cassette::CassetteFile`]).
    Cassette,
}

impl std::fmt::Display for DocumentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DocumentKind::Tape => "tape",
            DocumentKind::Cassette => "cassette",
        })
    }
}

/// A tape or cassette file that could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The file could not be opened, read, written or renamed into place.
    #[error("cannot access the {kind} `{}`: {source}", path.display())]
    Io {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is empty (or only whitespace): nothing was recorded, or the wrong file was
    /// named.
    #[error("the {kind} `{}` is empty", path.display())]
    Empty {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
    },
    /// The file is not JSON: a syntax error, trailing text, or a document cut short.
    #[error("the {kind} `{}` is not JSON: {message} at line {line} column {column}", path.display())]
    NotJson {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The file is JSON but not a valid document of its kind: a missing field, a wrong type,
    /// a value out of range.
    #[error("the {kind} `{}` is invalid at `{at}`: {message}", path.display())]
    Invalid {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
        /// The JSON path of the faulty value (`stream[1].delayNs`; `.` is the whole document).
        at: String,
        /// What is wrong with it.
        message: String,
    },
    /// The document is larger than its size cap (reading: the file; writing: what would be
    /// written, which is then not written).
    #[error(
        "the {kind} `{}` would be {size} bytes, over its cap of {limit} bytes; raise the cap or record less into one file",
        path.display()
    )]
    TooLarge {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
        /// The size in bytes.
        size: u64,
        /// The cap in bytes.
        limit: u64,
    },
    /// A cassette written by a format version this reader does not know.
    #[error(
        "the {kind} `{}` has format version {found}; this reader knows {}",
        path.display(),
        known_versions(*oldest, *supported)
    )]
    UnsupportedVersion {
        /// Which kind of document it is (tape or cassette).
        kind: DocumentKind,
        /// The document's file, as the caller named it.
        path: PathBuf,
        /// The version in the file.
        found: u64,
        /// The oldest version this reader knows.
        oldest: u64,
        /// The newest version this reader knows.
        supported: u64,
    },
}

/// `version 2`, or `versions 1 to 2`.
fn known_versions(oldest: u64, newest: u64) -> String {
    if oldest == newest {
        format!("version {newest}")
    } else {
        format!("versions {oldest} to {newest}")
    }
}

impl DocumentError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            DocumentError::Io { path, .. }
            | DocumentError::Empty { path, .. }
            | DocumentError::NotJson { path, .. }
            | DocumentError::Invalid { path, .. }
            | DocumentError::TooLarge { path, .. }
            | DocumentError::UnsupportedVersion { path, .. } => path,
        }
    }
}
