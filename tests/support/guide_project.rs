//! The getting-started guide's project as a new user makes it, for `tests/it/guide.rs`:
//! written from the guide's blocks beside a `reel` link to this checkout, built and run
//! with cargo, offline, into this workspace's target directory; and the guide's
//! `reel serve`, as a process of its own.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

use crate::markdown::{GUIDE, block_for_file};

/// The checkout, which the guide calls `../reel`.
pub const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");

/// The variables that say where the guide's program connects: none is inherited.
const ENDPOINT_VARIABLES: [&str; 6] = [
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
];

/// The guide's project in a fresh directory: `cargo new --lib my-assistant`'s manifest
/// header, then the guide's blocks, its `../reel` pointing at this checkout.
pub fn write_project(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let manifest = block_for_file(GUIDE, "Cargo.toml");
    let by_path = manifest.replace(
        r#"path = "../reel""#,
        &format!("path = {:?}", CHECKOUT.to_owned()),
    );
    assert_ne!(
        by_path, manifest,
        "the guide's Cargo.toml depends on reel by path"
    );
    // `[workspace]`: the project is a workspace of its own wherever the temp dir is.
    let manifest = format!(
        "[package]\nname = \"my-assistant\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [workspace]\n\n{by_path}"
    );
    for (file, text) in [
        ("Cargo.toml", manifest),
        ("src/lib.rs", block_for_file(GUIDE, "src/lib.rs")),
        ("src/main.rs", block_for_file(GUIDE, "src/main.rs")),
        ("tests/replay.rs", block_for_file(GUIDE, "tests/replay.rs")),
    ] {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    // The versions this checkout is tested with, so their artifacts are reused.
    std::fs::copy(
        Path::new(CHECKOUT).join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
}

/// `cargo ARGS` in the project, offline, building into this workspace's target directory
/// with the workspace's dev profile (line tables in our crates, no debug info in
/// dependencies), so that what the tests built is reused.
pub fn cargo(project: &Path, args: &[&str]) -> Command {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(project)
        .args(args)
        .args([
            "--offline",
            "--config",
            r#"profile.dev.debug="line-tables-only""#,
            "--config",
            r#"profile.dev.package."*".debug=false"#,
        ])
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUST_BACKTRACE");
    for variable in ENDPOINT_VARIABLES {
        command.env_remove(variable);
    }
    forget_the_test_package(&mut command);
    command
}

/// Removes from `command`'s environment what cargo set for this test process: it
/// describes the reel package, and build scripts that watch these variables (ring's
/// `rerun-if-env-changed=CARGO_PKG_NAME`, …) would otherwise build again in a cargo run
/// from a test, and once more in the next workspace build, each time.
pub fn forget_the_test_package(command: &mut Command) {
    for (variable, _) in std::env::vars_os() {
        let name = variable.to_string_lossy();
        if CARGO_SET_FOR_TESTS.iter().any(|set| name.starts_with(set)) {
            command.env_remove(&variable);
        }
    }
}

/// The variables (prefixes) cargo sets for a test process, not for a build.
const CARGO_SET_FOR_TESTS: [&str; 7] = [
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "CARGO_CRATE_",
    "CARGO_BIN_",
    "CARGO_TARGET_TMPDIR",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_RUSTC_CURRENT_DIR",
];

/// Runs `command` to its end, echoing the command and what it printed (shown when the
/// test fails).
pub fn run(mut command: Command) -> Output {
    let output = command.output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    eprintln!("{:?}: {}", command, output.status);
    eprintln!("{}{}", text(&output.stdout), text(&output.stderr));
    output
}

/// A `reel serve` this test started: stopped (killed) when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`: where the program is pointed.
    pub base_url: String,
    /// The server's standard error, line by line.
    pub reports: mpsc::Receiver<String>,
}

impl Server {
    /// Runs the guide's `reel serve` command line on a free port, in the guide's project
    /// (where its `../reel/…` paths start).
    pub fn start(guide_line: &str, project: &Path) -> Server {
        let args: Vec<&str> = guide_line
            .split_once(" -- ")
            .expect("the guide runs reel with `cargo run … -- serve …`")
            .1
            .split_whitespace()
            .map(|arg| if arg == "9100" { "0" } else { arg })
            .collect();
        let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(&args)
            .current_dir(project)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let base_url = loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                let output = child.wait_with_output().unwrap();
                panic!(
                    "reel {args:?} ended: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            if let Some(url) = line.trim_end().strip_prefix("listening on ws://") {
                break format!("http://{url}");
            }
        };
        // Read on to the end: a closed pipe would end the server at its next line.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let (lines, reports) = mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        Server {
            child,
            base_url,
            reports,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The guide's checkout as `../reel` seen from a project beside it: a directory holding a
/// `reel` link to this checkout.
pub fn beside_checkout(root: &Path) -> PathBuf {
    let beside = root.join("beside");
    std::fs::create_dir_all(&beside).unwrap();
    std::os::unix::fs::symlink(CHECKOUT, beside.join("reel")).unwrap();
    beside
}
