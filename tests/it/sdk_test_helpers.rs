//! The test-runner helpers published from this repository, run by their own tests against
//! the official SDKs: `packages/pytest-reel` (pytest, `google-genai`) and
//! `packages/reel-node` (node:test, `@google/genai`).
//!
//! Each package's tests run three times against the `reel` binary this build made:
//! 1. `once` mode through a stand-in API (a tape server that answers any setup and any
//!    text turn with "Sunny in Paris."): every test's session is recorded under its name;
//! 2. with `CI=true` and the API unreachable: the same tests pass, replayed;
//! 3. with `CI=true` and a changed prompt: the test fails on the tape, naming the path.

use crate::js_sdk;
use crate::python_sdk;

use js_sdk::node_prefix;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use python_sdk::{output_text, python_with_pytest, root, run, tempdir};
use reel_recorder::cassette::{CassetteFile, Interaction};
use reel_recorder::llm_tape::RecordedChunk;
use reel_recorder::trace::Timestamp;
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_replayer::server::{
    CassetteLibrary, IgnoreRule, MatchRules, Matching, RunningServer, TapeLibrary, TapeServer,
};
use serde_json::json;

const ANSWER: &str =
    r#"{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"Sunny in Paris."}]}}}"#;
const TURN_COMPLETE: &str = r#"{"serverContent":{"turnComplete":true}}"#;

/// The stand-in API: one recorded Live exchange and one `generateContent` call, matched
/// loosely enough (the setup's, the text turn's and the REST body's values ignored) that any
/// SDK's session and call get their answers.
async fn stand_in_api() -> RunningServer {
    let frames = [
        (Direction::Out, r#"{"setup":{"model":"models/m"}}"#),
        (Direction::In, r#"{"setupComplete":{}}"#),
        (
            Direction::Out,
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"anything"}]}],"turnComplete":true}}"#,
        ),
        (Direction::In, ANSWER),
        (Direction::In, TURN_COMPLETE),
    ];
    let entries: Vec<WireEntry> = frames
        .iter()
        .enumerate()
        .map(|(n, (dir, payload))| {
            let seq = n as u64 + 1;
            WireEntry::frame(
                seq,
                *dir,
                1_718_000_000_000 + seq * 10,
                *payload,
                None,
                false,
            )
        })
        .collect();
    let rules = MatchRules {
        defaults: true,
        ignore: vec![
            IgnoreRule::value("setup"),
            IgnoreRule::value("clientContent"),
            IgnoreRule::value("body"),
        ],
    };
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It is sunny."}]}, "finishReason": "STOP"}]});
    let request = json!({"method": "generateContent", "model": "gemini-2.5-flash", "body": {}});
    let mut cassette = CassetteFile::new();
    cassette.interactions.push(Interaction {
        request: request.as_object().unwrap().clone(),
        response: vec![RecordedChunk {
            raw: Some(answer),
            ..RecordedChunk::text(0, "It is sunny.")
        }],
        recorded_at: Timestamp::from_epoch_ms(1_718_000_000_000),
        usage: None,
        duration_ns: None,
    });
    TapeServer::replay(TapeLibrary::new().with_entries("stand-in", entries))
        .cassettes(CassetteLibrary::new().with_cassette("rest.cassette.json", cassette))
        .matching(Matching::Loose(rules))
        .start()
        .await
        .unwrap()
}

/// A copy of `packages/<name>`'s `parts` in a fresh directory.
fn copy_package(name: &str, parts: &[&str]) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        if from.is_dir() {
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let entry = entry.unwrap();
                if entry.file_name() != "__pycache__" {
                    copy(&entry.path(), &to.join(entry.file_name()));
                }
            }
        } else {
            std::fs::copy(from, to).unwrap();
        }
    }
    let source = root().join("packages").join(name);
    let target = tempdir(&format!("package-{name}"));
    for part in parts {
        copy(&source.join(part), &target.join(part));
    }
    target
}

/// The run failed (exit 1) on the tape, naming the changed path, and recorded nothing.
fn fails_on_its_tape(output: Output, tapes: &Path) {
    let text = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "reel: frame 2 does not match the tape at clientContent.turns[0].parts[0].text"
        ),
        "{text}"
    );
    assert_eq!(files(tapes).len(), 5);
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `command` on a blocking thread (the stand-in API runs on this test's runtime).
async fn output_of(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn pytest(python: &Path, tapes: &Path, upstream: &str) -> Command {
    let mut command = Command::new(python);
    command
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        // `--option=value`: pytest picks its rootdir (and so the node ids that name the
        // tapes) from the arguments that look like paths, before it knows the plugin's
        // options; a value given as a separate argument would count as one.
        .arg(format!("--reel-bin={}", env!("CARGO_BIN_EXE_reel")))
        .arg(format!("--reel-tapes={}", tapes.display()))
        .arg(format!("--reel-upstream={upstream}"))
        .current_dir(root().join("packages/pytest-reel"))
        .env_remove("CI")
        .env_remove("REEL_PROMPT")
        .env_remove("REEL_EXPECT");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_reel_records_each_test_once_then_replays_it_in_ci() {
    let python = python_with_pytest().to_owned();
    // Installed as a user installs it, with its pytest11 entry point; from a copy, so the
    // build leaves nothing in the checkout.
    let package = copy_package("pytest-reel", &["pyproject.toml", "README.md", "src"]);
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-build-isolation",
                "--force-reinstall",
            ])
            .arg(&package),
        "pip install packages/pytest-reel",
    );
    let tapes = tempdir("pytest-reel-tapes");
    let api = stand_in_api().await;

    let mut first = pytest(&python, &tapes, &api.live_url());
    first.env("REEL_EXPECT", "recorded");
    let output = output_of(first).await;
    assert!(
        output.status.success(),
        "recording run:\n{}",
        output_text(&output)
    );
    assert_eq!(
        files(&tapes),
        [
            "tests_test_live.py__test_a_text_turn.wire.jsonl",
            "tests_test_live.py__test_live_and_generate_content.cassette.json",
            "tests_test_live.py__test_live_and_generate_content.wire.jsonl",
            "tests_test_live.py__test_two_sessions_in_one_test.2.wire.jsonl",
            "tests_test_live.py__test_two_sessions_in_one_test.wire.jsonl",
        ]
    );
    drop(api);

    // CI, nothing reachable: the same tests pass from their tapes.
    let mut second = pytest(&python, &tapes, "ws://127.0.0.1:9");
    second.env("CI", "true").env("REEL_EXPECT", "replayed");
    let output = output_of(second).await;
    assert!(
        output.status.success(),
        "replaying run:\n{}",
        output_text(&output)
    );
    assert_eq!(files(&tapes).len(), 5);

    // A changed prompt fails the test on its tape instead of calling the API.
    let mut third = pytest(&python, &tapes, "ws://127.0.0.1:9");
    third
        .env("CI", "true")
        .env("REEL_PROMPT", "What's the weather in Rome?")
        .args(["-k", "test_a_text_turn"]);
    fails_on_its_tape(output_of(third).await, &tapes);
}

fn node_test(prefix: &Path, tapes: &Path, upstream: &str, options: &[&str]) -> Command {
    let mut command = Command::new("node");
    command
        .args(["--test", "--test-concurrency=1"])
        .args(options)
        .arg(root().join("packages/reel-node/test/live.test.mjs"))
        .env("REEL_BIN", env!("CARGO_BIN_EXE_reel"))
        .env("REEL_TAPES", tapes)
        .env("REEL_UPSTREAM", upstream)
        // The test imports @google/genai from the interop prefix (ESM ignores NODE_PATH).
        .env("SDK_NODE_PREFIX", prefix)
        .env_remove("CI")
        .env_remove("REEL_PROMPT")
        .env_remove("REEL_EXPECT");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reel_node_records_each_test_once_then_replays_it_in_ci() {
    let prefix = node_prefix();
    let tapes = tempdir("reel-node-tapes");
    let api = stand_in_api().await;

    let mut first = node_test(prefix, &tapes, &api.live_url(), &[]);
    first.env("REEL_EXPECT", "recorded");
    let output = output_of(first).await;
    assert!(
        output.status.success(),
        "recording run:\n{}",
        output_text(&output)
    );
    assert_eq!(
        files(&tapes),
        [
            "live.a_text_turn.wire.jsonl",
            "live.live_and_generateContent.cassette.json",
            "live.live_and_generateContent.wire.jsonl",
            "live.two_sessions_in_one_test.2.wire.jsonl",
            "live.two_sessions_in_one_test.wire.jsonl",
        ]
    );
    drop(api);

    let mut second = node_test(prefix, &tapes, "ws://127.0.0.1:9", &[]);
    second.env("CI", "true").env("REEL_EXPECT", "replayed");
    let output = output_of(second).await;
    assert!(
        output.status.success(),
        "replaying run:\n{}",
        output_text(&output)
    );

    let mut third = node_test(
        prefix,
        &tapes,
        "ws://127.0.0.1:9",
        &["--test-name-pattern", "a text turn"],
    );
    third
        .env("CI", "true")
        .env("REEL_PROMPT", "What's the weather in Rome?");
    fails_on_its_tape(output_of(third).await, &tapes);
}

/// The fenced blocks of `language` in the markdown `text`.
fn code_blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").unwrap();
        blocks.push(body[..end].to_owned());
        rest = &body[end..];
    }
    blocks
}

#[test]
fn the_guides_examples_are_the_code_these_tests_run() {
    let guide = std::fs::read_to_string(root().join("docs/testing-with-reel-serve.md")).unwrap();
    for (language, file) in [
        ("python", "packages/pytest-reel/tests/test_live.py"),
        ("js", "packages/reel-node/test/live.test.mjs"),
    ] {
        let source = std::fs::read_to_string(root().join(file)).unwrap();
        let blocks = code_blocks(&guide, language);
        assert_eq!(blocks.len(), 1, "{language}");
        assert!(
            source.contains(&blocks[0]),
            "the guide's {language} example is not in {file}:\n{}",
            blocks[0]
        );
    }
}
