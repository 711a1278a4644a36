//! Errors of reading and writing reel's files: each names the file, and the line when the
//! content is at fault.

use std::path::PathBuf;

/// A recording that could not be read or written.
///
/// No variant ever carries the content of a line: a parser message has its string literals
/// blanked (see [`RecordError::Corrupt`]), so a recorded value or payload cannot leak through
/// an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The file could not be opened, read or written.
    #[error("cannot access `{}`: {source}", path.display())]
    Io {
        /// The file, as the caller named it.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A line that is not a valid entry, anywhere but at the torn end of the file.
    #[error("`{}` line {line} is not a valid entry ({message}); the file is corrupt", path.display())]
    Corrupt {
        /// The file, as the caller named it.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What the parser expected, with the column; string literals are blanked.
        message: String,
    },
    /// A line holding NUL bytes: a region the filesystem filled with zeros, as it does
    /// where a power loss kept a file's length but not its last writes. Everything from
    /// this line on is lost; a salvaging reader
    /// ([`JsonlReader::salvaging`](crate::jsonl::JsonlReader::salvaging)) reads the entries
    /// before it.
    #[error(
        "`{}` line {line} is NUL-filled: the file was cut off there (a power loss leaves zeros where unwritten entries were); salvage reads the entries before it",
        path.display()
    )]
    NulFilled {
        /// The file, as the caller named it.
        path: PathBuf,
        /// 1-based number of the first line with a NUL byte.
        line: u64,
    },
    /// A wire log whose sequence numbers do not strictly increase: entries reordered or
    /// duplicated, or two logs concatenated.
    #[error(
        "`{}` line {line}: sequence number {seq} does not follow {previous}; the wire log is out of order",
        path.display()
    )]
    OutOfOrder {
        /// The file, as the caller named it.
        path: PathBuf,
        /// 1-based line number of the offending entry.
        line: u64,
        /// Its sequence number.
        seq: u64,
        /// The sequence number of the entry before it.
        previous: u64,
    },
    /// A recording with no entry at all (an empty file, only blank lines, or only a torn
    /// line): nothing was recorded, or the wrong file was named.
    #[error("`{}` holds no entries", path.display())]
    Empty {
        /// The file, as the caller named it.
        path: PathBuf,
    },
}

/// What is wrong with a path (the one path syntax of [`reel_protocol::json`]).
pub use reel_protocol::json::{PathError, PathProblem};

/// A redaction rule that cannot be used (see [`crate::redact::RedactionRule`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The rule's path is not a [`JsonPath`](reel_protocol::json::JsonPath).
    #[error("redaction rule: {0}")]
    InvalidPath(#[from] PathError),
    /// A `mime_type_prefix` condition on a path that does not end in a key: the condition
    /// is read beside the last key.
    #[error(
        "redaction rule `{path}`: a `mime_type_prefix` condition needs a path that ends in a key"
    )]
    ConditionNeedsKey {
        /// The path as written.
        path: String,
    },
}
