//! reel-eval's integration tests, one binary: each file beside this one is a module.

mod criteria;
mod exporters;
mod judged;
mod runs;
mod suite_file;

use std::path::{Path, PathBuf};

use reel_recorder::trace::{AgentTrace, read_trace};

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bundled weather session's wire log: three turns, one `get_weather` call.
pub fn weather_log() -> PathBuf {
    root().join("assets/tapes/weather.wire.jsonl")
}

/// The weather session's trace, as `reel export` writes it.
pub fn weather_trace() -> AgentTrace {
    read_trace(root().join("tests/golden/weather.trace.json")).unwrap()
}

/// A fresh, empty directory of this test's own.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-eval-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The golden file `name` (under `eval/tests/golden/`); with `REEL_BLESS=1`, written.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (REEL_BLESS=1 writes it)", path.display()));
    assert_eq!(actual, expected, "{} differs", path.display());
}
