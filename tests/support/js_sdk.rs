//! The official JS SDK (`@google/genai` from npm), installed once into an npm prefix of its
//! own under `target/interop/node`, for tests that run it as a real client of reel's
//! servers. Installing it needs npm's registry, which CI reaches; later runs reuse it.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::python_sdk::{interop_dir, run};

/// The pinned SDK: the version the fixtures were captured with
/// (`scripts/capture-sdk-frames/`).
pub const JS_SDK: &str = "@google/genai@3.1.0";

/// The npm prefix holding the pinned JS SDK, installed once.
pub fn node_prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = interop_dir().join("node");
        let marker = prefix.join(format!("{}.installed", JS_SDK.replace('/', "_")));
        if !marker.exists() {
            std::fs::create_dir_all(&prefix).unwrap();
            run(
                Command::new("npm")
                    .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                    .arg(&prefix)
                    .arg(JS_SDK),
                "npm install @google/genai",
            );
            std::fs::write(&marker, "").unwrap();
        }
        prefix
    })
}
