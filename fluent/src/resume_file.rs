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
//!
//! The file is the snapshot's JSON with one more field, `restored_at_ms`: the session time
//! the restored state was stamped with. It is not in the wire log (the session restores
//! before it connects), and a replay restores at that time again, so the journal entries
//! of the restore come out equal however long the recorded connect took. A file without it
//! (an older recording) replays with the restore stamped at the tape's start.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use reel_actors::session::RestoredHook;
use reel_persistence::{PersistenceError, RestoredSnapshot, SessionPersistence, SessionSnapshot};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use crate::beside::path_beside;

/// What a resume file holds: the snapshot, and when it was restored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResumeFile {
    /// The snapshot the session resumed from.
    #[serde(flatten)]
    pub(crate) snapshot: SessionSnapshot,
    /// The session time its state was restored at (epoch ms); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) restored_at_ms: Option<u64>,
}

/// The file a session recorded to `wire_log` keeps its resumed-from snapshot in.
pub(crate) fn resume_path_beside(wire_log: &Path) -> PathBuf {
    path_beside(wire_log, "resume.json")
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
    Box::new(move |restored| Box::pin(write(path, session_id, restored)))
}

/// Writes `restored` as pretty JSON to `path`, atomically: a temporary file beside it,
/// flushed to disk, renamed over it. A reader sees no file or the whole snapshot.
async fn write(
    path: PathBuf,
    session_id: String,
    restored: RestoredSnapshot,
) -> Result<(), PersistenceError> {
    let file = ResumeFile {
        snapshot: restored.snapshot,
        restored_at_ms: Some(restored.restored_at_ms),
    };
    let bytes = serde_json::to_vec_pretty(&file)
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

/// The snapshot beside the wire log `wire_log` that its session resumed from, and when,
/// if it has one.
pub(crate) async fn read_beside(
    wire_log: &Path,
    session_id: &str,
) -> Result<Option<ResumeFile>, PersistenceError> {
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

/// What a replay resumes from when its recording resumed from a snapshot: the recorded
/// restore's session time, when the resume file says (an older file does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedResume {
    /// The session time the recording restored the snapshot at (epoch ms).
    pub restored_at_ms: Option<u64>,
}

/// Saves the snapshot the session recorded in `wire_log` resumed from — `X.resume.json`
/// beside `X.wire.jsonl` — in `backend` under `session_id`, so that a replay on that
/// backend resumes from it exactly as the recording did (same restored state and phase,
/// same handle in the setup). `None`, and nothing saved, when there is no resume file: the
/// recorded session started afresh.
///
/// The one way a replay resumes like its recording: [`LiveBuilder::replay`](crate::LiveBuilder::replay)
/// and `reel replay` both call it (then restore at
/// [`RecordedResume::restored_at_ms`] with `LiveSessionBuilder::restored_at`).
///
/// ```no_run
/// # async fn example() -> Result<(), reel_persistence::PersistenceError> {
/// use reel_persistence::MemoryPersistence;
///
/// let backend = MemoryPersistence::new();
/// let resumed =
///     reel_fluent::seed_resumed_from(&backend, "replay", "call.wire.jsonl".as_ref()).await?;
/// println!("resumed: {}", resumed.is_some());
/// # Ok(())
/// # }
/// ```
pub async fn seed_resumed_from(
    backend: &dyn SessionPersistence,
    session_id: &str,
    wire_log: &Path,
) -> Result<Option<RecordedResume>, PersistenceError> {
    let Some(file) = read_beside(wire_log, session_id).await? else {
        return Ok(None);
    };
    backend.save(session_id, &file.snapshot).await?;
    Ok(Some(RecordedResume {
        restored_at_ms: file.restored_at_ms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_snapshot_with_its_restore_time_which_older_files_lack() {
        let snapshot = SessionSnapshot {
            state: [("app:name".to_owned(), serde_json::json!("Ada"))]
                .into_iter()
                .collect(),
            phase: "booking".into(),
            turn_count: 1,
            transcript_summary: String::new(),
            resume_handle: Some("h-1".into()),
            saved_at: "2024-06-10T06:13:20.000Z".into(),
        };
        let file = ResumeFile {
            snapshot: snapshot.clone(),
            restored_at_ms: Some(1_718_000_000_000),
        };
        let mut expected = serde_json::to_value(&snapshot).unwrap();
        expected["restored_at_ms"] = 1_718_000_000_000u64.into();
        assert_eq!(serde_json::to_value(&file).unwrap(), expected);
        assert_eq!(
            serde_json::from_value::<ResumeFile>(expected).unwrap(),
            file
        );
        let older = serde_json::to_value(&snapshot).unwrap();
        assert_eq!(
            serde_json::from_value::<ResumeFile>(older).unwrap(),
            ResumeFile {
                snapshot,
                restored_at_ms: None
            }
        );
    }

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
