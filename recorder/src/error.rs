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
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A line that is not a valid entry, anywhere but at the torn end of the file.
    #[error("`{}` line {line} is not a valid entry ({message}); the file is corrupt", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What the parser expected, with the column; string literals are blanked.
        message: String,
    },
}
