//! `reel` is the one dependency a program adds; the command line's own dependencies sit
//! behind the default `cli` feature, so `reel = { …, default-features = false }` builds the
//! library without them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What only the command line needs.
const CLI_ONLY: [&str; 3] = ["clap", "glob", "tracing-subscriber"];

fn cargo(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo prints UTF-8")
}

/// The crates `reel`'s normal dependencies pull in, by name.
fn dependencies(default_features: bool) -> Vec<String> {
    let mut args = vec!["tree", "-p", "reel", "-e", "normal", "--prefix", "none"];
    args.extend(["--offline", "--frozen"]);
    if !default_features {
        args.push("--no-default-features");
    }
    cargo(&args)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_library_does_not_pull_in_the_command_lines_dependencies() {
    let with_cli = dependencies(true);
    let library = dependencies(false);
    for name in CLI_ONLY {
        assert!(
            with_cli.iter().any(|d| d == name),
            "the command line uses {name}"
        );
        assert!(
            !library.iter().any(|d| d == name),
            "{name} is built for a library user"
        );
    }
    for name in [
        "reel-fluent",
        "reel-actors",
        "reel-llm",
        "reel-extract",
        "reel-replayer",
        "tokio",
    ] {
        assert!(
            library.iter().any(|d| d == name),
            "the library needs {name}"
        );
    }
}

/// What a library built without defaults leaves out besides the command line: SQLite (the
/// `sqlite` feature), the tape server with its certificate generator (reel-tape-server,
/// part of `cli`), the object store client (the `s3` feature) and the scripted test servers
/// (the crates' `testing` features).
const NOT_IN_THE_LIBRARY: [&str; 5] = [
    "rusqlite",
    "libsqlite3-sys",
    "rcgen",
    "reel-tape-server",
    "object_store",
];

/// The features each package of `reel`'s normal dependency tree is built with.
fn features(default_features: bool) -> Vec<(String, String)> {
    let mut args = vec!["tree", "-p", "reel", "-e", "normal", "--prefix", "none"];
    args.extend(["--offline", "--frozen", "--format", "{p}|{f}"]);
    if !default_features {
        args.push("--no-default-features");
    }
    cargo(&args)
        .lines()
        .filter_map(|line| line.split_once('|'))
        .map(|(package, features)| {
            let name = package.split_whitespace().next().unwrap_or_default();
            (name.to_owned(), features.to_owned())
        })
        .collect()
}

#[test]
fn without_defaults_there_is_no_sqlite_no_certificate_generator_and_no_test_server() {
    let with_defaults = dependencies(true);
    let library = dependencies(false);
    for name in NOT_IN_THE_LIBRARY {
        assert!(
            with_defaults.iter().any(|d| d == name),
            "the defaults build {name}"
        );
        assert!(
            !library.iter().any(|d| d == name),
            "{name} is built for a library user"
        );
    }
    let testing = |tree: &[(String, String)]| {
        tree.iter()
            .filter(|(_, features)| features.split(',').any(|f| f == "testing"))
            .map(|(name, _)| name.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(
        testing(&features(true)).into_iter().collect::<Vec<_>>(),
        ["reel-actors", "reel-llm"]
    );
    assert!(
        testing(&features(false)).is_empty(),
        "test servers built for a library user: {:?}",
        testing(&features(false))
    );
}

#[test]
fn the_library_builds_without_the_cli_feature() {
    // A target directory of its own: the test's cargo must not wait for the one running it.
    let target: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/no-cli");
    let target = target.to_str().expect("the checkout's path is UTF-8");
    cargo(&[
        "check",
        "-p",
        "reel",
        "--lib",
        "--no-default-features",
        "--offline",
        "--frozen",
        "--quiet",
        "--target-dir",
        target,
    ]);
}

/// The crates `package`'s normal dependencies pull in, by name (its own features only:
/// `-e normal` leaves dev-dependencies and the features they turn on out).
fn dependencies_of(package: &str) -> Vec<String> {
    dependencies_with(package, &[])
}

/// [`dependencies_of`] with more arguments for `cargo tree` (`--all-features`).
fn dependencies_with(package: &str, more: &[&str]) -> Vec<String> {
    let mut args = vec![
        "tree",
        "-p",
        package,
        "-e",
        "normal",
        "--prefix",
        "none",
        "--offline",
        "--frozen",
    ];
    args.extend(more);
    cargo(&args)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The HTTP client stack of reel-llm's `gemini` feature.
const HTTP_CLIENT: [&str; 4] = ["hyper", "hyper-util", "hyper-rustls", "http-body-util"];

#[test]
fn the_session_tree_builds_no_http_client() {
    let tree = dependencies_of("reel-actors");
    let http: Vec<&String> = tree
        .iter()
        .filter(|d| HTTP_CLIENT.contains(&d.as_str()))
        .collect();
    assert!(
        http.is_empty(),
        "reel-actors builds an HTTP client: {http:?}"
    );
    assert!(
        tree.iter().any(|d| d == "reel-llm"),
        "the tree needs BaseLlm"
    );
    // The library's default `gemini` feature still brings the REST client.
    assert!(
        dependencies(true).iter().any(|d| d == "hyper"),
        "reel's defaults build GeminiLlm"
    );
}

/// Decision 0043 (and 0049 for the reactive layer): each capability crate sits on its side
/// of the tree and pulls in only what its seam needs.
#[test]
fn the_capability_crates_sit_where_decision_0043_puts_them() {
    let has = |tree: &[String], name: &str| tree.iter().any(|d| d == name);

    // The tree, with every feature it has: no session store's database, no tape server.
    let tree = dependencies_with("reel-actors", &["--all-features"]);
    for name in [
        "rusqlite",
        "libsqlite3-sys",
        "tokio-postgres",
        "reel-persistence",
        "reel-reactive",
        "reel-agents",
        "reel-tape-server",
        "rcgen",
    ] {
        assert!(!has(&tree, name), "reel-actors builds {name}");
    }
    assert!(has(&tree, "reel-audio"), "the tree uses client audio");

    // Client audio, below the tree, knows nothing of it.
    let audio = dependencies_of("reel-audio");
    for name in [
        "reel-actors",
        "reel-recorder",
        "reel-llm",
        "ractor",
        "tokio",
    ] {
        assert!(!has(&audio, name), "reel-audio builds {name}");
    }

    // The session stores, above the tree: the databases only with their features.
    let stores = dependencies_of("reel-persistence");
    assert!(
        has(&stores, "reel-actors"),
        "the stores implement the tree's interface"
    );
    assert!(!has(&stores, "rusqlite") && !has(&stores, "tokio-postgres"));
    let all_stores = dependencies_with("reel-persistence", &["--all-features"]);
    assert!(has(&all_stores, "rusqlite") && has(&all_stores, "tokio-postgres"));

    // The tape server runs no session tree and no replay.
    let server = dependencies_of("reel-tape-server");
    for name in ["reel-actors", "reel-replayer", "reel-llm", "ractor"] {
        assert!(!has(&server, name), "reel-tape-server builds {name}");
    }
}

/// Decision 0048: the tool kinds and MCP sit above the tree, in `reel-tools`; the tree
/// keeps the tools' interface and engine, and no feature of its own builds the MCP SDK or
/// its HTTP client (reqwest). (Its `testing` feature still builds hyper for the scripted
/// Gemini REST server: test servers are not the tree.)
#[test]
fn tools_with_mcp_sit_above_the_tree() {
    let has = |tree: &[String], name: &str| tree.iter().any(|d| d == name);

    let tree = dependencies_with("reel-actors", &["--all-features"]);
    for name in ["rmcp", "reqwest", "reel-tools"] {
        assert!(!has(&tree, name), "reel-actors builds {name}");
    }

    // The tool kinds implement the tree's interface; MCP only with its feature.
    let tools = dependencies_of("reel-tools");
    assert!(
        has(&tools, "reel-actors"),
        "the tool kinds implement the tree's interface"
    );
    assert!(!has(&tools, "rmcp") && !has(&tools, "reqwest"));
    let with_mcp = dependencies_with("reel-tools", &["--features", "mcp"]);
    assert!(has(&with_mcp, "rmcp") && has(&with_mcp, "reqwest"));
}
