//! The wire-log reader on arbitrary bytes, checked and salvaging. Nothing may panic;
//! beyond that:
//!
//! - a salvaging reader reads exactly the entries a checked reader reads before its first
//!   error, unless that error is one salvage does not skip (out of order, empty);
//! - every entry read writes back (the hand-written line writer of the hot path) to a line
//!   that reads back to it.
//!
//! Shared by the fuzz target `wire_log` and the workspace test `tests/it/fuzz_seeds.rs`.

use reel_recorder::jsonl::JsonlReader;
use reel_recorder::wire_line::write_entry;
use reel_recorder::wire_log::WireEntry;
use reel_recorder::{RecordError, WireLogReader};

/// Checks one input.
pub fn run(data: &[u8]) {
    let mut checked = WireLogReader::new(JsonlReader::new(data, "fuzz.wire.jsonl"));
    let mut entries = Vec::new();
    let mut error = None;
    for item in checked.by_ref() {
        match item {
            Ok(entry) => entries.push(entry),
            Err(failure) => {
                let _ = failure.to_string();
                error = Some(failure);
            }
        }
    }
    for entry in &entries {
        let mut line = Vec::new();
        write_entry(entry, &mut line).expect("a read entry writes");
        let again: WireEntry = serde_json::from_slice(&line).expect("a written line reads");
        assert_eq!(&again, entry);
    }

    let mut salvaging = WireLogReader::new(JsonlReader::new(data, "fuzz.wire.jsonl")).salvaging();
    let salvaged: Vec<WireEntry> = salvaging.by_ref().map_while(Result::ok).collect();
    match error {
        None | Some(RecordError::NulFilled { .. } | RecordError::Corrupt { .. }) => {
            assert_eq!(salvaged, entries);
        }
        Some(_) => assert!(entries.starts_with(&salvaged)),
    }
    if let Some(report) = salvaging.salvaged() {
        assert_eq!(report.entries, salvaged.len() as u64);
        let _ = report.to_string();
    }
}
