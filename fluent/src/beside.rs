//! The files one recording keeps beside its wire log, named after it: `X.cassette.json`,
//! `X.resume.json`, `X.journal.jsonl` for `X.wire.jsonl`.

use std::path::{Path, PathBuf};

use reel_actors::llm::Cassette;

/// The file `X.<suffix>` beside the wire log `X.wire.jsonl` (`X.jsonl` works too).
pub(crate) fn path_beside(wire_log: &Path, suffix: &str) -> PathBuf {
    // The cassette's naming, so that every file of one recording shares its stem.
    let cassette = Cassette::path_beside(wire_log);
    let name = cassette
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".cassette.json").unwrap_or("session");
    cassette.with_file_name(format!("{stem}.{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_shares_the_recording_stem() {
        assert_eq!(
            path_beside(Path::new("calls/call-1.wire.jsonl"), "journal.jsonl"),
            Path::new("calls/call-1.journal.jsonl")
        );
        assert_eq!(
            path_beside(Path::new("call.jsonl"), "resume.json"),
            Path::new("call.resume.json")
        );
    }
}
