//! The snapshot a recorded session resumed from, kept beside its wire log: `X.resume.json`
//! for `X.wire.jsonl`.
//!
//! A session that resumes from a saved [`SessionSnapshot`] starts from something the wire
//! log does not hold: the restored state, the saved phase (its instruction in the setup),
//! the saved resumption handle. A replay runs on an empty in-memory backend, so without
//! that snapshot it would start afresh and part from the recording at the setup frame.
//! Recording writes the snapshot here — the one the runtime restored, handed over by
//! [`LiveSessionBuilder::on_snapshot_restored`](reel_actors::LiveSessionBuilder::on_snapshot_restored)
//! before the session starts — and a replay of `X.wire.jsonl` seeds its backend with it.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use reel_actors::llm::Cassette;
use reel_actors::persistence::{PersistenceError, SessionSnapshot};
use reel_actors::session::RestoredHook;
use tokio::io::AsyncWriteExt;

/// The file a session recorded to `wire_log` keeps its resumed-from snapshot in.
pub(crate) fn resume_path_beside(wire_log: &Path) -> PathBuf {
    // The cassette's naming (`X.cassette.json` beside `X.wire.jsonl`), so that every file
    // of one recording shares its stem.
    let cassette = Cassette::path_beside(wire_log);
    let name = cassette
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".cassette.json").unwrap_or("session");
    cassette.with_file_name(format!("{stem}.resume.json"))
}

/// Removes the resume file an earlier recording left at `path` (the wire log beside it is
/// being truncated, so it no longer belongs to anything).
pub(crate) fn remove_stale(path: &Path) -> Result<(), PersistenceError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
        Err(source) => Err(PersistenceError::Io {
            action: "delete",
            path: path.to_owned(),
            source,
        }),
    }
}

/// The hook that writes the restored snapshot of session `session_id` to `path`.
pub(crate) fn writer(path: PathBuf, session_id: String) -> RestoredHook {
    Box::new(move |snapshot| Box::pin(write(path, session_id, snapshot)))
}

/// Writes `snapshot` as pretty JSON to `path`, atomically: a temporary file beside it,
/// flushed to disk, renamed over it. A reader sees no file or the whole snapshot.
async fn write(
    path: PathBuf,
    session_id: String,
    snapshot: SessionSnapshot,
) -> Result<(), PersistenceError> {
    let bytes = serde_json::to_vec_pretty(&snapshot)
        .map_err(|source| PersistenceError::Encode { session_id, source })?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = async {
        let mut file = tokio::fs::File::create(&temp).await?;
        file.write_all(&bytes).await?;
        file.sync_all().await?;
        tokio::fs::rename(&temp, &path).await
    }
    .await;
    if let Err(source) = written {
        // Best effort: the temporary file is useless now.
        let _ = tokio::fs::remove_file(&temp).await;
        return Err(PersistenceError::Io {
            action: "write",
            path,
            source,
        });
    }
    Ok(())
}

/// The snapshot beside the wire log `wire_log` that its session resumed from, if it has
/// one.
pub(crate) async fn read_beside(
    wire_log: &Path,
    session_id: &str,
) -> Result<Option<SessionSnapshot>, PersistenceError> {
    let path = resume_path_beside(wire_log);
    let bytes = match tokio::fs::read(&path).await {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(PersistenceError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| PersistenceError::Corrupt {
            session_id: session_id.to_owned(),
            location: path.display().to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_file_shares_the_recording_stem() {
        assert_eq!(
            resume_path_beside(Path::new("calls/call-1.wire.jsonl")),
            Path::new("calls/call-1.resume.json")
        );
        assert_eq!(
            resume_path_beside(Path::new("call.jsonl")),
            Path::new("call.resume.json")
        );
    }
}
