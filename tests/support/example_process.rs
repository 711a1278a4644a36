//! Runs an example as a real process (`cargo run --example NAME -- ARGS`), the way a
//! reader of the README runs it, and returns what it printed.

use std::process::Command;

use crate::guide_project::forget_the_test_package;

/// `cargo run --example NAME -- ARGS` in the checkout, in the environment a reader's shell
/// would give it: without the variables cargo set for this test binary, which made every
/// such run rebuild ring and all above it, and the next workspace build rebuild it back
/// ([`forget_the_test_package`]).
fn cargo_run(name: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(["run", "--quiet", "--offline", "--example", name, "--"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    forget_the_test_package(&mut command);
    command
}

/// The example's standard output; panics with its standard error when it fails.
pub fn run_example(name: &str, args: &[&str]) -> String {
    let output = cargo_run(name, args).output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo run --example {name} -- {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the example prints UTF-8")
}

/// The variables a Gemini endpoint is read from (`ApiEndpoint::from_env`).
const CREDENTIAL_VARS: [&str; 6] = [
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
];

/// Runs the example as a real process with no Gemini credential or host in its
/// environment: its exit code, standard output and standard error.
pub fn run_example_without_key(name: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = cargo_run(name, args);
    for var in CREDENTIAL_VARS {
        command.env_remove(var);
    }
    let output = command.output().expect("cargo runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Checks that the example run with `--live` and no credential fails as it should: exit
/// code 1 and one line, `error: {prefix}` then the missing-key error naming
/// `GEMINI_API_KEY`, before any network. (`prefix` is empty for the governed examples; the
/// live cookbook examples name themselves: `"36_mcp_tools: "`.)
#[allow(dead_code)] // the cookbook's live examples use it; other test binaries do not
pub fn check_live_needs_a_key(name: &str, prefix: &str) {
    let (code, _, stderr) = run_example_without_key(name, &["--live"]);
    assert_eq!(
        stderr,
        format!(
            "error: {prefix}{}\n",
            reel_protocol::EndpointError::MissingApiKey
        ),
        "{name} -- --live with no key"
    );
    assert!(stderr.contains("GEMINI_API_KEY"), "{stderr}");
    assert_eq!(code, Some(1));
}

/// Checks that `text` is `bundled` (the text of `assets/tapes/{file}`); with `REEL_BLESS`
/// set, writes it there instead.
pub fn check_or_bless_text(file: &str, text: &str, bundled: &str) {
    if std::env::var_os("REEL_BLESS").is_some() {
        let path = format!("{}/assets/tapes/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(path, text).unwrap();
        return;
    }
    assert_eq!(
        text, bundled,
        "assets/tapes/{file} is stale: re-bless it with REEL_BLESS=1"
    );
}

#[test]
fn a_cargo_run_from_a_test_forgets_the_test_package() {
    // Cargo set these for this test binary; the inner cargo must not see them.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let command = cargo_run("01_foundations", &[]);
    let removed: Vec<String> = command
        .get_envs()
        .filter(|(_, value)| value.is_none())
        .map(|(key, _)| key.to_string_lossy().into_owned())
        .collect();
    for var in [
        "CARGO_PKG_NAME",
        "CARGO_PKG_VERSION_MAJOR",
        "CARGO_MANIFEST_DIR",
    ] {
        assert!(
            removed.iter().any(|r| r == var),
            "{var} reaches the inner cargo"
        );
    }
}
