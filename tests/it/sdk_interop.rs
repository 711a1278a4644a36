//! The official SDKs as real clients of `reel serve`: the Python SDK (`google-genai` from
//! PyPI) and the JS SDK (`@google/genai` from npm), each installed into a folder of its own
//! under `target/interop/`, run a whole session — setup, a text turn, a tool call round
//! trip, audio input, a second session with manual activity signals — against a tape server
//! playing tapes made from the frames those SDKs were captured sending, and every message
//! they receive is checked. Then a JS session is recorded through a recording proxy whose
//! upstream is another tape server, and the new recording matches the tape and replays
//! cleanly.
//!
//! The SDK versions are pinned to the ones the fixtures were captured with
//! (`scripts/capture-sdk-frames/`); installing them needs PyPI and npm, which CI reaches.

use crate::js_sdk;
use crate::python_sdk;

use js_sdk::node_prefix;

use std::path::PathBuf;
use std::process::Command;

use python_sdk::{output_text, python, root, tempdir};
use reel_protocol::decode_server;
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_tape_server::{SelfSignedCertificate, TapeLibrary, TapeServer, Upstream};
use serde_json::Value;

/// Tapes made from an SDK's captured frames: for each session, every client frame as it was
/// sent, followed by the server frames that answered it.
fn fixture_tapes(sdk: &str) -> Vec<(String, Vec<WireEntry>)> {
    let dir = root().join("protocol/tests/fixtures/sdk").join(sdk);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut sessions: Vec<(u64, Vec<WireEntry>)> = Vec::new();
    for frame in manifest["frames"].as_array().unwrap() {
        let connection = frame["connection"].as_u64().unwrap();
        if sessions.last().map(|(c, _)| *c) != Some(connection) {
            sessions.push((connection, Vec::new()));
        }
        let entries = &mut sessions.last_mut().unwrap().1;
        let mut push = |dir: Direction, payload: Vec<u8>| {
            let seq = entries.len() as u64 + 1;
            let ts = 1_718_000_000_000 + seq * 10;
            entries.push(WireEntry::frame(seq, dir, ts, payload, None, false));
        };
        let bytes = std::fs::read(dir.join(frame["file"].as_str().unwrap())).unwrap();
        push(Direction::Out, bytes);
        for reply in frame["replies"].as_array().unwrap() {
            push(Direction::In, serde_json::to_vec(reply).unwrap());
        }
    }
    sessions
        .into_iter()
        .map(|(connection, entries)| (format!("{sdk}-session-{connection}"), entries))
        .collect()
}

fn library(tapes: &[(String, Vec<WireEntry>)]) -> TapeLibrary {
    tapes
        .iter()
        .fold(TapeLibrary::new(), |library, (name, entries)| {
            library.with_entries(name.clone(), entries.clone())
        })
}

/// The server frames of the tapes, in order, as messages.
fn served(tapes: &[(String, Vec<WireEntry>)]) -> Vec<reel_protocol::ServerMessage> {
    tapes
        .iter()
        .flat_map(|(_, entries)| entries.iter())
        .filter(|e| e.dir == Direction::In)
        .map(|e| decode_server(&e.payload).unwrap())
        .collect()
}

/// The messages a client script printed as received (`[sdk]   -> {json}`), as messages.
fn received(stdout: &str, sdk: &str) -> Vec<reel_protocol::ServerMessage> {
    let prefix = format!("[{sdk}]   -> ");
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .map(|json| {
            decode_server(json.as_bytes()).unwrap_or_else(|e| {
                panic!("the SDK printed a message reel cannot read ({e}): {json}")
            })
        })
        .collect()
}

fn script(name: &str) -> PathBuf {
    root().join("scripts/capture-sdk-frames").join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_runs_a_whole_session_against_reel_serve() {
    let python = python().to_owned();
    let tapes = fixture_tapes("python");
    let certificate = SelfSignedCertificate::generate().unwrap();
    let tls_dir = tempdir("python-tls");
    let files = certificate.write_to(&tls_dir).unwrap();
    let mut server = TapeServer::replay(library(&tapes))
        .tls(certificate.identity().clone())
        .start()
        .await
        .unwrap();
    let port = server.local_addr().port().to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script("client.py"))
            .arg(port)
            .env("SSL_CERT_FILE", &files.cert)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = output_text(&output);
    assert!(output.status.success(), "the Python client failed:\n{text}");
    assert!(text.contains("[python] OK"), "{text}");
    // The Python SDK takes setupComplete inside connect() and prints the rest.
    let expected: Vec<_> = served(&tapes)
        .into_iter()
        .filter(|m| m.setup_complete.is_none())
        .collect();
    assert_eq!(received(&text, "python"), expected, "{text}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_runs_a_whole_session_against_reel_serve() {
    let prefix = node_prefix().to_owned();
    let tapes = fixture_tapes("js");
    let mut server = TapeServer::replay(library(&tapes)).start().await.unwrap();
    let port = server.local_addr().port().to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script("client.mjs"))
            .arg(port)
            .env("SDK_NODE_PREFIX", prefix)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = output_text(&output);
    assert!(output.status.success(), "the JS client failed:\n{text}");
    assert!(text.contains("[js] OK"), "{text}");
    assert_eq!(received(&text, "js"), served(&tapes), "{text}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_js_session_recorded_through_reel_serve_matches_its_tape_and_replays_clean() {
    let prefix = node_prefix().to_owned();
    let tapes = fixture_tapes("js");
    // The tape server stands in for the API…
    let mut api = TapeServer::replay(library(&tapes)).start().await.unwrap();
    // …and the recording proxy sits between the SDK and it.
    let out_dir = tempdir("recordings");
    let upstream = Upstream::new(&api.live_url()).unwrap();
    let mut proxy = TapeServer::record(upstream, &out_dir)
        .start()
        .await
        .unwrap();
    let port = proxy.local_addr().port().to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script("client.mjs"))
            .arg(port)
            .env("SDK_NODE_PREFIX", prefix)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = output_text(&output);
    assert!(
        output.status.success(),
        "the JS client failed through the proxy:\n{text}"
    );
    proxy.shutdown().await;
    api.shutdown().await;

    let mut recordings: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".wire.jsonl"))
        .collect();
    recordings.sort();
    assert_eq!(recordings.len(), tapes.len(), "one recording per session");
    for (recording, (name, tape)) in recordings.iter().zip(&tapes) {
        let recorded = reel_recorder::read_wire_log(recording).unwrap();
        let frames = |entries: &[WireEntry]| -> Vec<(Direction, Value)> {
            entries
                .iter()
                .filter(|e| !e.is_close_marker())
                .map(|e| (e.dir, serde_json::from_slice(&e.payload).unwrap()))
                .collect()
        };
        assert_eq!(
            frames(&recorded),
            frames(tape),
            "{name} vs {}",
            recording.display()
        );
        let replay = Command::new(env!("CARGO_BIN_EXE_reel"))
            .arg("replay")
            .arg(recording)
            .output()
            .unwrap();
        assert!(
            replay.status.success(),
            "reel replay {}:\n{}",
            recording.display(),
            output_text(&replay)
        );
    }
}
