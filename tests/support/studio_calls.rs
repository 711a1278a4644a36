//! Small recorded calls for the studio's tests: a fresh directory, frames at chosen times
//! turned into a wire log, the log written as JSON lines.

use std::path::{Path, PathBuf};

use reel_recorder::wire_log::{Direction, WireEntry};

/// An empty directory of this process's own under the temp dir (`reel-studio-{kind}-{name}`).
pub fn fresh_dir(kind: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("reel-studio-{kind}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `frames` (milliseconds after `t0`, direction, payload) as wire entries numbered from 1.
pub fn entries<P: AsRef<str>>(t0: u64, frames: Vec<(u64, Direction, P)>) -> Vec<WireEntry> {
    frames
        .into_iter()
        .enumerate()
        .map(|(i, (ts, dir, payload))| {
            WireEntry::frame(
                i as u64 + 1,
                dir,
                t0 + ts,
                payload.as_ref().as_bytes().to_vec(),
                None,
                false,
            )
        })
        .collect()
}

/// Writes `entries` as the wire log `dir/name` and returns its path.
pub fn write_log(dir: &Path, name: &str, entries: &[WireEntry]) -> PathBuf {
    let path = dir.join(name);
    let text: String = entries
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}
