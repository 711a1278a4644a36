//! [`FsPersistence`]: a JSON file per session.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use tokio::io::AsyncWriteExt;

use reel_actors::persistence::PersistenceError;
use reel_actors::persistence::SessionPersistence;
use reel_actors::persistence::SessionSnapshot;
use reel_actors::persistence::check_session_id;

/// Snapshots as JSON files: `<dir>/<session_id>.json`.
///
/// The directory is created on the first save. A save writes a temporary file in the same
/// directory (`.<session_id>.json.<pid>.<n>.tmp`), flushes it to disk and renames it over
/// the snapshot, so a reader (or a crash) sees the old snapshot or the new one, never half
/// of one. Session ids are checked ([`check_session_id`]), so no id reaches outside the
/// directory. Several processes may save different sessions in one directory; the same
/// session from two processes at once is last-writer-wins.
#[derive(Debug)]
pub struct FsPersistence {
    dir: PathBuf,
    temp_counter: AtomicU64,
}

impl FsPersistence {
    /// Snapshots under `dir` (created when first needed).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FsPersistence {
            dir: dir.into(),
            temp_counter: AtomicU64::new(0),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where session `session_id`'s snapshot is stored.
    pub fn path_of(&self, session_id: &str) -> Result<PathBuf, PersistenceError> {
        check_session_id(session_id)?;
        Ok(self.dir.join(format!("{session_id}.json")))
    }

    async fn save_file(
        &self,
        session_id: &str,
        snapshot: &SessionSnapshot,
    ) -> Result<(), PersistenceError> {
        let path = self.path_of(session_id)?;
        let bytes =
            serde_json::to_vec_pretty(snapshot).map_err(|source| PersistenceError::Encode {
                session_id: session_id.to_owned(),
                source,
            })?;
        tokio::fs::create_dir_all(&self.dir)
            .await
            .map_err(io("create the directory", &self.dir))?;
        let n = self.temp_counter.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .dir
            .join(format!(".{session_id}.json.{}.{n}.tmp", std::process::id()));
        let written = write_synced(&temp, &bytes).await;
        let renamed = match written {
            Ok(()) => tokio::fs::rename(&temp, &path)
                .await
                .map_err(io("rename into place", &path)),
            Err(error) => Err(error),
        };
        if renamed.is_err() {
            // Best effort: the temporary file is useless now.
            let _ = tokio::fs::remove_file(&temp).await;
        }
        renamed?;
        sync_dir(&self.dir).await;
        Ok(())
    }

    async fn load_file(
        &self,
        session_id: &str,
    ) -> Result<Option<SessionSnapshot>, PersistenceError> {
        let path = self.path_of(session_id)?;
        let bytes = match tokio::fs::read(&path).await {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(io("read", &path)(error)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| PersistenceError::Corrupt {
                session_id: session_id.to_owned(),
                location: path.display().to_string(),
                source,
            })
    }

    async fn delete_file(&self, session_id: &str) -> Result<(), PersistenceError> {
        let path = self.path_of(session_id)?;
        match tokio::fs::remove_file(&path).await {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
            Err(error) => Err(io("delete", &path)(error)),
        }
    }
}

impl SessionPersistence for FsPersistence {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(self.save_file(session_id, snapshot))
    }

    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        Box::pin(self.load_file(session_id))
    }

    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(self.delete_file(session_id))
    }
}

/// Writes `bytes` to a new file at `path` and flushes it to disk.
async fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), PersistenceError> {
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(io("write", path))?;
    file.write_all(bytes).await.map_err(io("write", path))?;
    file.sync_all().await.map_err(io("write", path))
}

/// Flushes the directory entry of a rename to disk, where the platform allows it (best
/// effort: the snapshot is in place either way).
async fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(handle) = tokio::fs::File::open(dir).await {
        let _ = handle.sync_all().await;
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Makes an [`PersistenceError::Io`] for `action` on `path`.
fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> PersistenceError {
    let path = path.to_owned();
    move |source| PersistenceError::Io {
        action,
        path,
        source,
    }
}
