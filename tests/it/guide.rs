//! The getting-started guide, proved as a new user would follow it, offline and without a
//! key: its project — `Cargo.toml`, `src/lib.rs`, `src/main.rs` and `tests/replay.rs`, all
//! taken from `docs/getting-started.md` — is built for real as a cargo project depending on
//! this checkout by path; its program runs against the guide's `reel serve` of the bundled
//! tape and prints what the guide says it prints; its replay test passes on the recording
//! the program made, and fails with the report the guide shows once `get_weather` answers
//! otherwise.
//!
//! The project shares this workspace's target directory and `Cargo.lock`, so the build
//! compiles only what the guide's feature set needs beyond what the tests already built.

use crate::doc_blocks;
use crate::markdown::{Block, GUIDE, block_for_file, blocks};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

/// The checkout, which the guide calls `../reel`.
const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");

/// The variables that say where the guide's program connects: none is inherited.
const ENDPOINT_VARIABLES: [&str; 6] = [
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
];

/// The one `sh` block of the guide whose text contains `needle`, as its single command line.
fn command_line(needle: &str) -> String {
    let found: Vec<Block> = blocks(GUIDE)
        .into_iter()
        .filter(|block| block.lang() == "sh" && block.text.contains(needle))
        .collect();
    assert_eq!(found.len(), 1, "one sh block with `{needle}` in the guide");
    let lines: Vec<&str> = found[0].text.lines().collect();
    assert_eq!(lines.len(), 1, "the block with `{needle}` is one command");
    lines[0].to_owned()
}

/// The guide's project in a fresh directory: `cargo new --lib my-assistant`'s manifest
/// header, then the guide's blocks, its `../reel` pointing at this checkout.
fn write_project(dir: &Path) {
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
fn cargo(project: &Path, args: &[&str]) -> Command {
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
    // What cargo set for this test process describes the reel package; build scripts that
    // watch these variables (ring's) would otherwise build again, here and in the next
    // workspace build, each time.
    for (variable, _) in std::env::vars_os() {
        let name = variable.to_string_lossy();
        if CARGO_SET_FOR_TESTS.iter().any(|set| name.starts_with(set)) {
            command.env_remove(&variable);
        }
    }
    command
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

fn run(mut command: Command) -> Output {
    let output = command.output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    eprintln!("{:?}: {}", command, output.status);
    eprintln!("{}{}", text(&output.stdout), text(&output.stderr));
    output
}

/// A `reel serve` this test started: stopped (killed) when dropped.
struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`: where the program is pointed.
    base_url: String,
    /// The server's standard error, line by line.
    reports: mpsc::Receiver<String>,
}

impl Server {
    /// Runs the guide's `reel serve` command line on a free port, in the guide's project
    /// (where its `../reel/…` paths start).
    fn start(guide_line: &str, project: &Path) -> Server {
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
fn beside_checkout(root: &Path) -> PathBuf {
    let beside = root.join("beside");
    std::fs::create_dir_all(&beside).unwrap();
    std::os::unix::fs::symlink(CHECKOUT, beside.join("reel")).unwrap();
    beside
}

/// The `text` block of the guide that starts with `start`.
fn text_block(start: &str) -> String {
    let found: Vec<Block> = blocks(GUIDE)
        .into_iter()
        .filter(|block| block.lang() == "text" && block.text.starts_with(start))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one text block starting `{start}` in the guide"
    );
    found[0].text.clone()
}

#[test]
fn the_guide_builds_runs_against_the_bundled_tape_and_its_test_replays_clean() {
    let root = std::env::temp_dir().join(format!("reel-guide-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let beside = beside_checkout(&root);
    let project = beside.join("my-assistant");
    write_project(&project);
    let examples = doc_blocks::write_examples(Path::new(CHECKOUT), &project);

    // One build: the library, the program, the replay test, and the docs' other Rust
    // blocks as examples.
    let built = run(cargo(&project, &["test", "--no-run"]));
    assert!(
        built.status.success(),
        "the guide's project or a Rust block of the docs does not build (see above)"
    );
    let examples_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("debug/examples");
    for name in examples {
        assert!(examples_dir.join(&name).is_file(), "{name} was not built");
    }

    // Step 4 with nothing set: the program says what to set, as its message.
    let unset = run(cargo(&project, &["run", "--quiet"]));
    assert_eq!(unset.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(unset.stderr).unwrap(),
        text_block("Error: "),
        "the program's error is not what the guide shows"
    );

    // Step 4 without a key: the program against `reel serve` of the bundled tape.
    let serve = command_line(" serve --tape ");
    let server = Server::start(&serve, &project);
    let run_line = command_line("GOOGLE_GEMINI_BASE_URL=");
    let (assignment, rest) = run_line.split_once(' ').unwrap();
    assert_eq!(rest, "cargo run");
    assert_eq!(
        assignment, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9100",
        "the program is pointed where the guide's server listens"
    );
    let mut program = cargo(&project, &["run", "--quiet"]);
    program.env("GOOGLE_GEMINI_BASE_URL", &server.base_url);
    let ran = run(program);
    assert!(ran.status.success(), "the guide's program failed");
    assert_eq!(
        String::from_utf8(ran.stdout).unwrap(),
        text_block("assistant: "),
        "the program's output is not what the guide shows"
    );
    let tape = "../reel/assets/tapes/guide.wire.jsonl";
    assert_eq!(
        server.reports.recv().unwrap(),
        format!(
            "reel serve: connection 1: replayed {tape} (connection 1): 6 client frames \
             matched; the client closed 1000 \"client disconnect\""
        )
    );
    drop(server);
    for file in ["weather.wire.jsonl", "weather.journal.jsonl"] {
        assert!(project.join("recordings").join(file).is_file(), "{file}");
    }

    // Step 5: the replay test passes on the recording just made...
    let tested = run(cargo(&project, &["test", "--quiet"]));
    assert!(tested.status.success(), "the guide's replay test failed");
    let summary = String::from_utf8(tested.stdout).unwrap();
    assert!(
        summary.contains("test result: ok. 1 passed;"),
        "the guide's replay test did not run"
    );

    // ...and fails with the guide's report once `get_weather` answers otherwise.
    let lib = project.join("src/lib.rs");
    let code = std::fs::read_to_string(&lib).unwrap();
    let changed = code.replace(
        r#""London" => (14, "cloudy")"#,
        r#""London" => (15, "cloudy")"#,
    );
    assert_ne!(
        changed, code,
        "the guide's get_weather answers 14 for London"
    );
    std::fs::write(&lib, changed).unwrap();
    let drifted = run(cargo(&project, &["test", "--quiet", "--test", "replay"]));
    assert!(
        !drifted.status.success(),
        "the replay test passed on a changed tool"
    );
    let stdout = String::from_utf8(drifted.stdout).unwrap();
    let report = text_block("DRIFT");
    assert!(
        stdout.contains(&report),
        "the failing test's output does not hold the guide's report:\n{report}"
    );

    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn every_rust_block_of_the_readme_docs_and_package_readmes_is_proven() {
    let checkout = Path::new(CHECKOUT);
    let documents = doc_blocks::documents(checkout);
    assert!(
        documents.contains(&"docs/getting-started.md".to_owned()),
        "{documents:?}"
    );
    assert!(
        documents.contains(&"packages/pytest-reel/README.md".to_owned()),
        "{documents:?}"
    );
    let mut unproven = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(checkout.join(document)).unwrap();
        for (line, first) in doc_blocks::unproven(document, &text) {
            unproven.push(format!("{document}:{line}: {first}"));
        }
    }
    assert_eq!(
        unproven,
        Vec::<String>::new(),
        "Rust blocks no test compiles: give each a context in tests/support/doc_blocks.rs \
         (or fence it `rust,ignore` and say why in the text)"
    );
    // Every context still names a block of its document.
    for context in &doc_blocks::CONTEXTS {
        let text = std::fs::read_to_string(checkout.join(context.document)).unwrap();
        doc_blocks::block_of(context, &text);
    }
}
