//! The test-runner helpers published from this repository, run by their own tests against
//! the official SDKs: `packages/pytest-reel` (pytest, `google-genai`) and
//! `packages/reel-node` (node:test, `@google/genai`).
//!
//! Each package's tests run three times against the `reel` binary this build made:
//! 1. `once` mode through a stand-in API (a tape server that answers any setup and any
//!    text turn with "Sunny in Paris."): every test's session is recorded under its name;
//! 2. with `CI=true` and the API unreachable: the same tests pass, replayed;
//! 3. with `CI=true` and a changed prompt: the test fails on the tape with the server's
//!    first mismatch (path, expected and actual value) in a few lines, while a test whose
//!    own options ignore the prompt passes.

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
use reel_tape_server::{
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
        failure: None,
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

/// The payloads of the wire log at `path`, one a line.
fn payloads(path: &Path) -> String {
    reel_recorder::wire_read::read_wire_log(path)
        .unwrap()
        .iter()
        .map(|entry| String::from_utf8_lossy(&entry.payload).into_owned() + "\n")
        .collect()
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

/// The venv's Python with packages/pytest-reel installed as a user installs it, with its
/// pytest11 entry point; from a copy, so the build leaves nothing in the checkout. Once per
/// test run (the tests of this file share the venv).
fn python_with_pytest_reel() -> &'static Path {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        let python = python_with_pytest().to_owned();
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
        python
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_reel_records_each_test_once_then_replays_it_in_ci() {
    let python = python_with_pytest_reel().to_owned();
    let tapes = tempdir("pytest-reel-tapes");
    let api = stand_in_api().await;

    // vcrpy's name for once mode.
    let mut first = pytest(&python, &tapes, &api.live_url());
    first
        .env("REEL_EXPECT", "recorded")
        .arg("--record-mode=once");
    let output = output_of(first).await;
    assert!(
        output.status.success(),
        "recording run:\n{}",
        output_text(&output)
    );
    // --reel-tapes DIR: a folder per module under DIR, named by its path from the rootdir.
    assert_eq!(files(&tapes), ["tests"]);
    let module = tapes.join("tests/test_live");
    assert_eq!(
        files(&module),
        [
            "test_a_marker_that_ignores_the_prompt.wire.jsonl",
            "test_a_marker_that_redacts_the_prompt.wire.jsonl",
            "test_a_text_turn.wire.jsonl",
            "test_live_and_generate_content.cassette.json",
            "test_live_and_generate_content.wire.jsonl",
            "test_two_sessions_in_one_test.2.wire.jsonl",
            "test_two_sessions_in_one_test.wire.jsonl",
        ]
    );
    // The marker's redaction rules changed what was written, not what was sent.
    let redacted = payloads(&module.join("test_a_marker_that_redacts_the_prompt.wire.jsonl"));
    assert!(redacted.contains("(redacted)"), "{redacted}");
    assert!(!redacted.contains("weather in Paris"), "{redacted}");
    drop(api);

    // CI, nothing reachable, vcrpy's `none`: the same tests pass from their tapes.
    let mut second = pytest(&python, &tapes, "ws://127.0.0.1:9");
    second
        .env("CI", "true")
        .env("REEL_EXPECT", "replayed")
        .arg("--record-mode=none");
    let output = output_of(second).await;
    assert!(
        output.status.success(),
        "replaying run:\n{}",
        output_text(&output)
    );
    assert_eq!(files(&module).len(), 7);

    // A changed prompt fails the test on its tape instead of calling the API, in a few lines
    // that name the path and both values; the test whose marker ignores the prompt passes.
    let mut third = pytest(&python, &tapes, "ws://127.0.0.1:9");
    third
        .env("CI", "true")
        .env("REEL_PROMPT", "What's the weather in Rome?")
        .args([
            "-k",
            "test_a_text_turn or test_a_marker_that_ignores_the_prompt",
        ]);
    let output = output_of(third).await;
    let text = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "pytest-reel: test test_a_text_turn did not match its tape {}\n  client frame 2 (tape seq 3) at clientContent.turns[0].parts[0].text\n  expected: \"What's the weather in Paris?\"\n  actual:   \"What's the weather in Rome?\"\n",
            module.join("test_a_text_turn.wire.jsonl").display()
        )),
        "{text}"
    );
    assert!(text.contains("1 failed, 1 passed"), "{text}");
    assert!(text.lines().count() < 30, "{text}");
    assert_eq!(files(&module).len(), 7);
}

/// A pytest file whose two tests open a Live session: with `REEL_FULL=1` they send a text
/// turn and read the answer, else they only wait for the setup's answer and leave. The
/// second is marked as expecting to end early.
const EARLY_PY: &str = r#"
import asyncio
import os

import pytest
from google.genai import types

FULL = os.environ.get("REEL_FULL") == "1"


async def session(client):
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    async with client.aio.live.connect(model="gemini-live-2.5-flash", config=config) as live:
        if not FULL:
            return
        await live.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text="Hi")]), turn_complete=True
        )
        async for message in live.receive():
            if message.server_content and message.server_content.turn_complete:
                break


def test_ends_early(reel_server):
    asyncio.run(asyncio.wait_for(session(reel_server.client()), 30))
    reel_server.wait_for_reports(1)


@pytest.mark.reel_incomplete_ok
def test_ends_early_on_purpose(reel_server):
    asyncio.run(asyncio.wait_for(session(reel_server.client()), 30))
    reel_server.wait_for_reports(1)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_reel_fails_a_test_whose_session_ended_early_unless_it_is_marked() {
    let python = python_with_pytest_reel().to_owned();
    let project = tempdir("pytest-reel-early");
    std::fs::create_dir_all(project.join("tests")).unwrap();
    std::fs::write(project.join("tests/test_early.py"), EARLY_PY).unwrap();
    // Beside the test file, a folder per module.
    let tapes = project.join("tests/tapes/test_early");
    let api = stand_in_api().await;
    let pytest = |upstream: &str, cwd: &Path, path: &str| {
        let mut command = Command::new(&python);
        command
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", path])
            .arg(format!("--reel-bin={}", env!("CARGO_BIN_EXE_reel")))
            .arg(format!("--reel-upstream={upstream}"))
            .current_dir(cwd)
            .env_remove("CI")
            .env_remove("REEL_FULL");
        command
    };

    // Recorded whole, through the stand-in API.
    let mut first = pytest(&api.live_url(), &project, "tests");
    first.env("REEL_FULL", "1");
    let output = output_of(first).await;
    assert!(
        output.status.success(),
        "recording run:
{}",
        output_text(&output)
    );
    drop(api);

    assert_eq!(
        files(&tapes),
        [
            "test_ends_early.wire.jsonl",
            "test_ends_early_on_purpose.wire.jsonl"
        ]
    );

    // Replayed from another directory (the tapes are found beside the test file wherever
    // pytest runs), each session leaving after the setup: the unmarked test fails.
    let mut second = pytest("ws://127.0.0.1:9", &project.join("tests"), "test_early.py");
    second.env("CI", "true");
    let output = output_of(second).await;
    let text = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let tape = tapes.join("test_ends_early.wire.jsonl");
    assert!(
        text.contains(&format!(
            "pytest-reel: the Live session of test test_ends_early ended before its tape did (mark the test @pytest.mark.reel_incomplete_ok if that is expected):\n  connection 1 (test test_ends_early): incomplete: {} (connection 1): the session ended after 1 of 2 client frames (the last matched is seq 1); the client closed 1000",
            tape.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("FAILED test_early.py::test_ends_early"),
        "{text}"
    );
    assert!(text.contains("1 failed, 1 passed"), "{text}");
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
    // The tape names carry the test file (`live.test.mjs` -> `live.`).
    assert_eq!(
        files(&tapes),
        [
            "live.live.a_text_turn.wire.jsonl",
            "live.live.its_own_options_ignore_the_prompt.wire.jsonl",
            "live.live.its_own_options_redact_the_prompt.wire.jsonl",
            "live.live.live_and_generateContent.cassette.json",
            "live.live.live_and_generateContent.wire.jsonl",
            "live.live.two_sessions_in_one_test.2.wire.jsonl",
            "live.live.two_sessions_in_one_test.wire.jsonl",
        ]
    );
    let redacted = payloads(&tapes.join("live.live.its_own_options_redact_the_prompt.wire.jsonl"));
    assert!(redacted.contains("(redacted)"), "{redacted}");
    assert!(!redacted.contains("weather in Paris"), "{redacted}");
    drop(api);

    let mut second = node_test(prefix, &tapes, "ws://127.0.0.1:9", &[]);
    second.env("CI", "true").env("REEL_EXPECT", "replayed");
    let output = output_of(second).await;
    assert!(
        output.status.success(),
        "replaying run:\n{}",
        output_text(&output)
    );

    // A changed prompt fails the test with the first mismatch's path and values; the test
    // with options of its own ignores the prompt's text and passes.
    let mut third = node_test(
        prefix,
        &tapes,
        "ws://127.0.0.1:9",
        &[
            "--test-name-pattern",
            "a text turn|its own options ignore the prompt",
        ],
    );
    third
        .env("CI", "true")
        .env("REEL_PROMPT", "What's the weather in Rome?");
    let output = output_of(third).await;
    let text = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    for line in [
        format!(
            "reel-node: test live.live.a_text_turn did not match its tape {}\n",
            tapes.join("live.live.a_text_turn.wire.jsonl").display()
        ),
        "  client frame 2 (tape seq 3) at clientContent.turns[0].parts[0].text\n".to_owned(),
        "  expected: \"What's the weather in Paris?\"\n".to_owned(),
        "  actual:   \"What's the weather in Rome?\"\n".to_owned(),
        "# pass 1\n# fail 1\n".to_owned(),
    ] {
        assert!(text.contains(&line), "{line}\nnot in:\n{text}");
    }
    assert_eq!(files(&tapes).len(), 7);
}

/// A node:test file whose two tests open a Live session: with `REEL_FULL=1` they send a
/// text turn and read the answer, else they leave once the setup is answered. The second
/// says it expects to end early.
const EARLY_MJS: &str = r#"
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { startReel, tapeName } = await import(pathToFileURL(process.env.REEL_NODE_INDEX).href);
const sdkDir = join(process.env.SDK_NODE_PREFIX, 'node_modules', '@google', 'genai');
const sdkPackage = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8'));
const { GoogleGenAI, Modality } = await import(
  pathToFileURL(join(sdkDir, sdkPackage.exports['.'].node.import)).href
);
const FULL = process.env.REEL_FULL === '1';

function session(ai) {
  return new Promise((resolve, reject) => {
    let live;
    let setUp = false;
    ai.live
      .connect({
        model: 'gemini-live-2.5-flash',
        config: { responseModalities: [Modality.TEXT] },
        callbacks: {
          onmessage: (message) => {
            // The setup's answer can come before `connect` resolves.
            if (!FULL && !setUp && message.setupComplete) {
              setUp = true;
              live?.close();
            }
            if (message.serverContent?.turnComplete) live.close();
          },
          onerror: (event) => reject(new Error(`socket error: ${event.message ?? event}`)),
          onclose: () => resolve(),
        },
      })
      .then((opened) => {
        live = opened;
        if (FULL) {
          live.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'Hi' }] }], turnComplete: true });
        } else if (setUp) {
          live.close();
        }
      }, reject);
  });
}

describe('early', () => {
  let reel;
  before(async () => {
    reel = await startReel({ file: import.meta.url });
  });
  after(async () => {
    await reel.stop();
  });

  test('ends early', async (t) => {
    const name = tapeName(t, import.meta.url);
    await session(new GoogleGenAI(reel.genaiOptions(name)));
    await reel.waitForReports(name, 1);
    reel.checkComplete(name);
  });

  test('ends early on purpose', async (t) => {
    const name = tapeName(t, import.meta.url);
    await session(new GoogleGenAI(reel.genaiOptions(name)));
    await reel.waitForReports(name, 1);
    reel.checkComplete(name, { allowIncomplete: true });
  });
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reel_node_fails_a_test_whose_session_ended_early_unless_it_says_so() {
    let prefix = node_prefix();
    let project = tempdir("reel-node-early");
    let file = project.join("early.test.mjs");
    std::fs::write(&file, EARLY_MJS).unwrap();
    // `startReel({ file: import.meta.url })`: beside the test file, from any directory.
    let tapes = project.join("tapes");
    let api = stand_in_api().await;
    let node = |upstream: &str, cwd: &Path| {
        let mut command = Command::new("node");
        command
            .args(["--test", "--test-concurrency=1"])
            .arg(&file)
            .current_dir(cwd)
            .env("REEL_BIN", env!("CARGO_BIN_EXE_reel"))
            .env_remove("REEL_TAPES")
            .env("REEL_UPSTREAM", upstream)
            .env(
                "REEL_NODE_INDEX",
                root().join("packages/reel-node/index.mjs"),
            )
            .env("SDK_NODE_PREFIX", prefix)
            .env_remove("CI")
            .env_remove("REEL_FULL");
        command
    };

    let elsewhere = tempdir("reel-node-elsewhere");
    let mut first = node(&api.live_url(), &tempdir("reel-node-cwd"));
    first.env("REEL_FULL", "1");
    let output = output_of(first).await;
    assert!(
        output.status.success(),
        "recording run:\n{}",
        output_text(&output)
    );
    drop(api);

    assert_eq!(
        files(&tapes),
        [
            "early.early.ends_early.wire.jsonl",
            "early.early.ends_early_on_purpose.wire.jsonl"
        ]
    );

    let mut second = node("ws://127.0.0.1:9", &elsewhere);
    second.env("CI", "true");
    let output = output_of(second).await;
    let text = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let tape = tapes.join("early.early.ends_early.wire.jsonl");
    // The message's lines, as the TAP output indents them (the SDK closes with no code).
    assert!(
        text.contains(
            "reel-node: the Live session of test early.early.ends_early ended before its tape did (pass { allowIncomplete: true } if that is expected):\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  connection 1 (test early.early.ends_early): incomplete: {} (connection 1): the session ended after 1 of 2 client frames (the last matched is seq 1); the client closed (no code)\n",
            tape.display()
        )),
        "{text}"
    );
    assert!(text.contains("# pass 1\n# fail 1"), "{text}");
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
