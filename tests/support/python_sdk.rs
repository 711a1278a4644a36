//! The official Python SDK (`google-genai` from PyPI), installed once into a venv of its own
//! under `target/interop/python`, for tests that run it as a real client of reel's servers.
//! Installing it needs PyPI, which CI reaches; later runs reuse the venv.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The pinned SDK: the version the fixtures were captured with
/// (`scripts/capture-sdk-frames/`).
pub const PYTHON_SDK: &str = "google-genai==3.4.0";

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the SDKs are installed.
pub fn interop_dir() -> PathBuf {
    root().join("target/interop")
}

/// Runs `command`, panicking with its output unless it succeeds.
pub fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The Python interpreter of a venv with the pinned SDK, installed once.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = interop_dir().join("python");
        let python = venv.join("bin/python");
        let marker = venv.join(format!("{PYTHON_SDK}.installed"));
        if !marker.exists() {
            std::fs::create_dir_all(interop_dir()).unwrap();
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv",
            );
            run(
                Command::new(&python).args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    PYTHON_SDK,
                    "websockets",
                ]),
                "pip install google-genai",
            );
            std::fs::write(&marker, "").unwrap();
        }
        python
    })
}

/// A process's stdout and stderr, one after the other.
pub fn output_text(output: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A fresh directory under the system's temporary directory, named after the test.
pub fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-interop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The venv's Python with pytest and setuptools too (for the pytest-reel package, installed
/// from the checkout without build isolation, so offline after the first run).
pub fn python_with_pytest() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = python().to_owned();
        let marker = interop_dir().join("python/pytest-8.3.5.installed");
        if !marker.exists() {
            run(
                Command::new(&python).args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "pytest==8.3.5",
                    "setuptools>=69",
                ]),
                "pip install pytest",
            );
            std::fs::write(&marker, "").unwrap();
        }
        python
    })
}
