//! Shared by the `reel serve` tests: the smallest replayable session (a setup and one text
//! turn), written as a tape, and a fresh directory for each test.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};

use reel_recorder::wire_log::{Direction, WireEntry};

pub const SETUP: &str = r#"{"setup":{"model":"models/gemini-live-2.5-flash"}}"#;
pub const SETUP_COMPLETE: &str = r#"{"setupComplete":{}}"#;
pub const HELLO: &str = r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#;
pub const ANSWER: &str =
    r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi!"}]},"turnComplete":true}}"#;

/// A fresh, empty directory named after the test file's `prefix` and `name`.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The session's entries: setup, setupComplete, the user's text, the answer.
pub fn hello_entries() -> Vec<WireEntry> {
    [
        (Direction::Out, SETUP),
        (Direction::In, SETUP_COMPLETE),
        (Direction::Out, HELLO),
        (Direction::In, ANSWER),
    ]
    .into_iter()
    .enumerate()
    .map(|(n, (dir, payload))| {
        let seq = n as u64 + 1;
        WireEntry::frame(
            seq,
            dir,
            1_718_000_000_000 + seq,
            payload.as_bytes().to_vec(),
            None,
            false,
        )
    })
    .collect()
}

/// Writes the session as a tape at `path`.
pub fn write_tape(path: &Path) {
    let mut text = String::new();
    for entry in hello_entries() {
        text.push_str(&serde_json::to_string(&entry).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}
