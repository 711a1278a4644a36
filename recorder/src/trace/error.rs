//! [`TraceError`]: a trace file that could not be read or written, naming the file and,
//! when the content is at fault, where in it (a JSON path such as `entries[3].index`).

use std::path::PathBuf;

/// A trace that could not be read, checked or written.
///
/// No variant carries a recorded value: a parser message has its string literals blanked,
/// so a prompt or a tool result cannot leak through an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("cannot access `{}`: {source}", path.display())]
    Io {
        /// The trace file, as the caller named it.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON (or is cut short).
    #[error("`{}` is not JSON: {message} at line {line}, column {column}", path.display())]
    Syntax {
        /// The trace file, as the caller named it.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// A field is missing, of the wrong type or holds a value it cannot hold.
    #[error("`{}` at {at}: {message}", path.display())]
    Invalid {
        /// The trace file, as the caller named it.
        path: PathBuf,
        /// Where: a JSON path such as `entries[2].timestamp` (`.` for the whole document).
        at: String,
        /// What is wrong (string literals blanked).
        message: String,
    },
    /// A trace of a format version this reader does not know.
    #[error("`{}` at version: trace format version {found} is not supported (this reader reads 1.x)", path.display())]
    UnsupportedVersion {
        /// The trace file, as the caller named it.
        path: PathBuf,
        /// The version the file names.
        found: String,
    },
    /// Entries that do not pair up: see [`TraceProblem`].
    #[error("`{}` at {at}: {problem}", path.display())]
    Inconsistent {
        /// The trace file, as the caller named it.
        path: PathBuf,
        /// Where: the offending entry's `index`, e.g. `entries[4].index`.
        at: String,
        /// What is wrong.
        problem: TraceProblem,
    },
}

/// How a trace's entries fail to pair up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceProblem {
    /// Requests are numbered 0, 1, 2, … in order; this one is not the next.
    #[error("request {found} out of order: the next request is {expected}")]
    RequestOutOfOrder {
        /// The index the request should have.
        expected: u64,
        /// The index it has.
        found: u64,
    },
    /// A response to a request that does not come before it.
    #[error("response {index} answers no earlier request")]
    ResponseWithoutRequest {
        /// The response's index.
        index: u64,
    },
    /// A second response to one request.
    #[error("request {index} already has a response")]
    SecondResponse {
        /// The response's index.
        index: u64,
    },
}
