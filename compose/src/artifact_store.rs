//! [`ArtifactStore`]: artifacts kept as versioned files in a directory, for `A::save`,
//! `A::load`, `A::version` and `A::publish`.
//!
//! Each save of an artifact is a new version, one file each:
//! `DIR/{name}/{version}.json` holding `{"name", "version", "mime", "value"}`, versions
//! counting from 1. A version is claimed by linking a whole written file into place, so a
//! reader never sees half a version and two saves at once get two versions.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use reel_actors::state::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifacts::{Artifacts, JSON_MIME, TEXT_MIME};

/// Saves started in this process (names each save's temporary file).
static SAVES: AtomicU64 = AtomicU64::new(0);

/// What went wrong in an [`ArtifactStore`].
#[derive(Debug, thiserror::Error)]
pub enum ArtifactStoreError {
    /// A file or directory could not be read or written.
    #[error("artifact store: {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A stored version is not an artifact file.
    #[error("artifact store: {path} is not an artifact file: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// An artifact name that cannot be a directory name here.
    #[error("artifact name `{name}` is not allowed: use letters, digits, `_` and `-`")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// No such artifact, or no such version of it.
    #[error("artifact `{name}` has no version {}", version.map_or("saved".to_owned(), |v| v.to_string()))]
    NotFound {
        /// The artifact.
        name: String,
        /// The version asked for (`None`: any).
        version: Option<u32>,
    },
    /// `A::publish` found a declared output artifact not set in the state.
    #[error("artifact `{name}` is declared but not set in the state")]
    Unset {
        /// The artifact.
        name: String,
    },
}

/// One stored version of an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredArtifact {
    /// The artifact's name.
    pub name: String,
    /// Its version, from 1.
    pub version: u32,
    /// Its MIME type.
    pub mime: String,
    /// Its value (text as a JSON string).
    pub value: Value,
}

/// A directory of versioned artifacts. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    dir: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArtifactStoreError + '_ {
    move |source| ArtifactStoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl ArtifactStore {
    /// The store in `dir`, created if missing.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ArtifactStoreError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        Ok(ArtifactStore { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn folder(&self, name: &str) -> Result<PathBuf, ArtifactStoreError> {
        let allowed = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if allowed {
            Ok(self.dir.join(name))
        } else {
            Err(ArtifactStoreError::InvalidName {
                name: name.to_owned(),
            })
        }
    }

    /// The versions of `name` saved so far, in order (none: empty).
    pub fn versions(&self, name: &str) -> Result<Vec<u32>, ArtifactStoreError> {
        let folder = self.folder(name)?;
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(io(&folder)(error)),
        };
        let mut versions = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io(&folder))?;
            let file = entry.file_name().to_string_lossy().into_owned();
            if let Some(version) = file
                .strip_suffix(".json")
                .and_then(|stem| stem.parse::<u32>().ok())
            {
                versions.push(version);
            }
        }
        versions.sort_unstable();
        Ok(versions)
    }

    /// Saves `value` as the next version of `name`; returns the version.
    pub fn save(&self, name: &str, mime: &str, value: Value) -> Result<u32, ArtifactStoreError> {
        let folder = self.folder(name)?;
        std::fs::create_dir_all(&folder).map_err(io(&folder))?;
        let mut version = self.versions(name)?.last().copied().unwrap_or(0) + 1;
        // One temporary file per save, so saves at once (threads, processes) never share one.
        let temp = folder.join(format!(
            ".saving-{}-{}",
            std::process::id(),
            SAVES.fetch_add(1, Ordering::Relaxed)
        ));
        loop {
            let stored = StoredArtifact {
                name: name.to_owned(),
                version,
                mime: mime.to_owned(),
                value: value.clone(),
            };
            // Serializing strings, a number and a JSON value cannot fail.
            let mut text = serde_json::to_string_pretty(&stored).unwrap_or_default();
            text.push('\n');
            std::fs::write(&temp, text).map_err(io(&temp))?;
            let path = folder.join(format!("{version}.json"));
            let claimed = std::fs::hard_link(&temp, &path);
            let _ = std::fs::remove_file(&temp);
            match claimed {
                Ok(()) => return Ok(version),
                // Another save took this version: take the next.
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => version += 1,
                Err(error) => return Err(io(&path)(error)),
            }
        }
    }

    /// Version `version` of `name`, or its latest (`None`).
    pub fn load(
        &self,
        name: &str,
        version: Option<u32>,
    ) -> Result<StoredArtifact, ArtifactStoreError> {
        let not_found = || ArtifactStoreError::NotFound {
            name: name.to_owned(),
            version,
        };
        let version = match version {
            Some(version) => version,
            None => *self.versions(name)?.last().ok_or_else(not_found)?,
        };
        let path = self.folder(name)?.join(format!("{version}.json"));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(not_found()),
            Err(error) => return Err(io(&path)(error)),
        };
        serde_json::from_str(&text).map_err(|source| ArtifactStoreError::Parse { path, source })
    }

    /// Saves each of `artifacts`' outputs from `state` (where an agent wrote them) as its
    /// next version; returns `(name, version)` in declaration order. An output not set in
    /// the state is [`ArtifactStoreError::Unset`], and nothing after it is saved.
    pub fn publish(
        &self,
        artifacts: &Artifacts,
        state: &State,
    ) -> Result<Vec<(String, u32)>, ArtifactStoreError> {
        let mut saved = Vec::new();
        for artifact in artifacts.all_outputs() {
            let value = state
                .get_raw(&artifact.name)
                .ok_or_else(|| ArtifactStoreError::Unset {
                    name: artifact.name.clone(),
                })?;
            let version = self.save(&artifact.name, &artifact.mime, value)?;
            saved.push((artifact.name.clone(), version));
        }
        Ok(saved)
    }
}

impl crate::A {
    /// Saves each declared output of `artifacts` from `state` to `store`, as a new version
    /// each ([`ArtifactStore::publish`]).
    pub fn publish(
        store: &ArtifactStore,
        artifacts: &Artifacts,
        state: &State,
    ) -> Result<Vec<(String, u32)>, ArtifactStoreError> {
        store.publish(artifacts, state)
    }

    /// Saves `value` as the next version of `name` ([`ArtifactStore::save`]): JSON, or
    /// text when `value` is a string.
    pub fn save(
        store: &ArtifactStore,
        name: &str,
        value: Value,
    ) -> Result<u32, ArtifactStoreError> {
        let mime = if value.is_string() {
            TEXT_MIME
        } else {
            JSON_MIME
        };
        store.save(name, mime, value)
    }

    /// Version `version` of `name`, or its latest ([`ArtifactStore::load`]).
    pub fn load(
        store: &ArtifactStore,
        name: &str,
        version: Option<u32>,
    ) -> Result<StoredArtifact, ArtifactStoreError> {
        store.load(name, version)
    }

    /// The latest version of `name` (`None`: never saved).
    pub fn version(store: &ArtifactStore, name: &str) -> Result<Option<u32>, ArtifactStoreError> {
        Ok(store.versions(name)?.last().copied())
    }
}
