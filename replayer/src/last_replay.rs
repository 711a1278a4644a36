//! The verdict of a log's last replay, kept beside it: `X.replay.json` for `X.wire.jsonl`.
//!
//! `reel replay --save-verdict` writes it (one log or a farm of them; never without the
//! flag, so replaying checked-in tapes leaves no files beside them); `reel studio`
//! shows it in its list as CLEAN or DRIFT. It is a note, not part of the recording: writing
//! it may fail (a read-only directory of checked-in tapes) without failing the replay, and
//! a note whose log has changed size since is stale and not shown.
//!
//! ```
//! use reel_replayer::last_replay::{LastReplay, path_beside};
//!
//! assert_eq!(
//!     path_beside("tapes/weather.wire.jsonl".as_ref()).unwrap(),
//!     std::path::Path::new("tapes/weather.replay.json")
//! );
//! let note = LastReplay::drift(412, 1_764_000_000_000, "seq 11 payload: $.toolResponse …".into());
//! assert_eq!(note.verdict, "DRIFT");
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What the last replay of a log found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastReplay {
    /// `CLEAN` or `DRIFT`.
    pub verdict: String,
    /// The first divergence, for a drifted replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<String>,
    /// When it ran, epoch milliseconds.
    pub replayed_at_ms: u64,
    /// The log's size in bytes when it was replayed: a note for another size is stale.
    pub log_bytes: u64,
}

impl LastReplay {
    /// A replay that did not drift.
    pub fn clean(log_bytes: u64, replayed_at_ms: u64) -> LastReplay {
        LastReplay {
            verdict: "CLEAN".to_owned(),
            first_divergence: None,
            replayed_at_ms,
            log_bytes,
        }
    }

    /// A replay that drifted, first at `first`.
    pub fn drift(log_bytes: u64, replayed_at_ms: u64, first: String) -> LastReplay {
        LastReplay {
            verdict: "DRIFT".to_owned(),
            first_divergence: Some(first),
            replayed_at_ms,
            log_bytes,
        }
    }

    /// Writes the note beside `log`; the error says which file could not be written.
    pub fn write_beside(&self, log: &Path) -> Result<PathBuf, std::io::Error> {
        let path = path_beside(log).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a *.wire.jsonl file", log.display()),
            )
        })?;
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&path, format!("{text}\n"))?;
        Ok(path)
    }

    /// The note beside `log`, if there is one, it reads, and it was written for the log
    /// as it is now (same size).
    pub fn read_beside(log: &Path) -> Option<LastReplay> {
        let path = path_beside(log)?;
        let note: LastReplay = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        let size = std::fs::metadata(log).ok()?.len();
        (note.log_bytes == size).then_some(note)
    }
}

/// `X.replay.json` for `X.wire.jsonl`; `None` for a file not named `*.wire.jsonl`.
pub fn path_beside(log: &Path) -> Option<PathBuf> {
    let name = log.file_name()?.to_str()?;
    let stem = name.strip_suffix(".wire.jsonl")?;
    Some(log.with_file_name(format!("{stem}.replay.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_read_back_only_for_the_log_it_was_written_for() {
        let dir = std::env::temp_dir().join(format!("reel-last-replay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("call.wire.jsonl");
        std::fs::write(&log, "0123456789").unwrap();
        assert_eq!(LastReplay::read_beside(&log), None);
        let note = LastReplay::drift(10, 7, "seq 3".into());
        assert_eq!(
            note.write_beside(&log).unwrap(),
            dir.join("call.replay.json")
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("call.replay.json")).unwrap(),
            "{\n  \"verdict\": \"DRIFT\",\n  \"first_divergence\": \"seq 3\",\n  \"replayed_at_ms\": 7,\n  \"log_bytes\": 10\n}\n"
        );
        assert_eq!(LastReplay::read_beside(&log), Some(note));
        // The log grew: the note is stale.
        std::fs::write(&log, "0123456789+").unwrap();
        assert_eq!(LastReplay::read_beside(&log), None);
        assert!(
            LastReplay::clean(1, 1)
                .write_beside(&dir.join("notes.txt"))
                .is_err()
        );
    }
}
