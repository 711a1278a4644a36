//! Salvaging a damaged recording: reading the entries before its first bad line.
//!
//! A power cut can leave a JSON Lines file whose length was saved but whose last blocks
//! were not: the end of the file (or a region of it) reads as NUL bytes. By default a reader
//! fails there with [`RecordError::NulFilled`] (or [`RecordError::Corrupt`] for other
//! damage), naming the file and the line. A *salvaging* reader
//! ([`JsonlReader::salvaging`](crate::jsonl::JsonlReader::salvaging)) instead ends the
//! stream at that line, as if the file ended there, and keeps a [`Salvaged`] report of how
//! many entries it read and where it stopped.

use std::fmt;
use std::path::PathBuf;

use crate::error::RecordError;

/// What is wrong with the line a salvaging reader stopped at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The line holds NUL bytes: a region a filesystem filled with zeros.
    NulFilled,
    /// The line is not a valid entry, for another reason.
    Corrupt {
        /// What the parser said, string literals blanked (as in [`RecordError::Corrupt`]).
        message: String,
    },
}

/// Where a salvaging reader stopped reading, and how much it read before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvaged {
    /// The damaged file.
    pub path: PathBuf,
    /// How many entries were read before the damage.
    pub entries: u64,
    /// 1-based number of the first bad line: nothing from it on was read.
    pub line: u64,
    /// What is wrong with that line.
    pub damage: Damage,
}

impl Salvaged {
    /// The error a reader that does not salvage gives for the same line.
    pub fn to_error(&self) -> RecordError {
        let path = self.path.clone();
        let line = self.line;
        match &self.damage {
            Damage::NulFilled => RecordError::NulFilled { path, line },
            Damage::Corrupt { message } => RecordError::Corrupt {
                path,
                line,
                message: message.clone(),
            },
        }
    }
}

impl fmt::Display for Salvaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.entries;
        let plural = if entries == 1 { "entry" } else { "entries" };
        let why = match &self.damage {
            Damage::NulFilled => "NUL-filled".to_owned(),
            Damage::Corrupt { message } => format!("not a valid entry: {message}"),
        };
        write!(
            f,
            "`{}`: salvaged {entries} {plural}; stopped at line {} ({why}), the rest of the file is not read",
            self.path.display(),
            self.line
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_says_how_many_and_where() {
        let salvaged = Salvaged {
            path: "s.wire.jsonl".into(),
            entries: 41,
            line: 42,
            damage: Damage::NulFilled,
        };
        assert_eq!(
            salvaged.to_string(),
            "`s.wire.jsonl`: salvaged 41 entries; stopped at line 42 (NUL-filled), the rest of the file is not read"
        );
        assert_eq!(
            salvaged.to_error().to_string(),
            "`s.wire.jsonl` line 42 is NUL-filled: the file was cut off there (a power loss leaves zeros where unwritten entries were); salvage reads the entries before it"
        );
        let corrupt = Salvaged {
            entries: 1,
            damage: Damage::Corrupt {
                message: "expected value, at column 1".into(),
            },
            ..salvaged
        };
        assert_eq!(
            corrupt.to_string(),
            "`s.wire.jsonl`: salvaged 1 entry; stopped at line 42 (not a valid entry: expected value, at column 1), the rest of the file is not read"
        );
    }
}
