//! Helpers shared by the tape and cassette tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A folder under the system temp dir, unique to this process and test, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh, empty folder named after `name`.
    pub fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("reel-recorder-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    /// `name` inside the folder.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The names of the files in the folder, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
