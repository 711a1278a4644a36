//! The recordings being written now, for a server that is told to stop at once to say which
//! it leaves unfinished ([`RunningServer::open_recordings`](super::RunningServer::open_recordings)).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The paths of the recordings in progress.
#[derive(Debug, Default, Clone)]
pub(crate) struct OpenRecordings {
    paths: Arc<Mutex<BTreeSet<PathBuf>>>,
}

/// A recording in progress; dropping it says it is finished.
pub(crate) struct Held {
    open: OpenRecordings,
    path: PathBuf,
}

impl OpenRecordings {
    /// Marks `path` in progress until the returned guard is dropped.
    pub(crate) fn hold(&self, path: &Path) -> Held {
        self.lock().insert(path.to_owned());
        Held {
            open: self.clone(),
            path: path.to_owned(),
        }
    }

    /// The recordings in progress, in path order.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<PathBuf>> {
        self.paths.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.open.lock().remove(&self.path);
    }
}
