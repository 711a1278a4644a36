//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A file under the system temp dir, unique to this process and test, removed when dropped.
pub struct TempFile(PathBuf);

impl TempFile {
    /// A path named after `name`; any file left there by an earlier run is removed.
    pub fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("reel-recorder-{}-{name}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The file's text ("" if it does not exist yet).
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap_or_default()
    }

    /// Writes `bytes` as the whole file.
    pub fn write(&self, bytes: impl AsRef<[u8]>) {
        std::fs::write(&self.0, bytes).unwrap();
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
