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
use crate::guide_project::{CHECKOUT, Server, beside_checkout, cargo, run, write_project};
use crate::markdown::{Block, GUIDE, blocks};

use std::path::Path;

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
