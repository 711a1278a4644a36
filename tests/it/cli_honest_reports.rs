//! Issue 25 §2, "reports tell the truth", against the real binary: a client of `reel serve
//! --json` that sends only the setup and closes, or drops, is reported `incomplete` with
//! how far it got; a recording proxy whose disk is full (a file size limit of 0, set with
//! `ulimit -f` in a shell around the real binary: every write fails with EFBIG) reports the
//! recording failed and leaves no empty tape behind, so `reel serve --tapes DIR` still
//! starts; and `reel demo` whose recording files are cut short by the same limit ends with
//! an I/O error (exit 2), not DRIFT.

use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use reel_actors::transport::{Connector, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector};
use reel_protocol::ApiEndpoint;
use reel_tape_server::{TapeLibrary, TapeServer};
use serde_json::{Value, json};
use serve_support::{SETUP, SETUP_COMPLETE, hello_entries, write_tape};

fn temp_dir(name: &str) -> PathBuf {
    serve_support::temp_dir("cli-honest", name)
}

/// `bash -c` running `reel ARGS` with a file size limit of `blocks` KiB, SIGXFSZ ignored
/// (so a write over the limit fails with EFBIG instead of killing the process): a full disk
/// without privileges.
fn limited(blocks: u32, args: &[&str]) -> Command {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .env("RUST_LOG", "off");
    command
}

/// A running `reel serve --json`: its standard output, line by line.
struct Served {
    child: Child,
    stdout: Receiver<String>,
}

impl Served {
    // The child is waited for in `stop`, or killed and waited for when dropped.
    #[allow(clippy::zombie_processes)]
    fn start(mut command: Command) -> Served {
        command.stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (send, stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let _ = send.send(line.unwrap());
            }
        });
        Served { child, stdout }
    }

    /// The next JSON line on standard output.
    fn next_json(&self) -> Value {
        let line = self
            .stdout
            .recv_timeout(Duration::from_secs(60))
            .expect("a line on standard output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// SIGTERM; the exit code.
    fn stop(&mut self) -> Option<i32> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap().code()
    }
}

impl Drop for Served {
    /// A test that failed before `stop` leaves no server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain `reel serve --json ARGS` command.
fn serve(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command.arg("serve").arg("--json").args(args);
    command.env("RUST_LOG", "off").env_remove("CI");
    command
}

const LIVE_PATH: &str =
    "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_sends_only_the_setup_is_reported_incomplete_not_replayed() {
    let dir = temp_dir("incomplete");
    let tape = dir.join("hello.wire.jsonl");
    write_tape(&tape);
    let tape = tape.display().to_string();
    let mut served = Served::start(serve(&["--tapes", dir.to_str().unwrap(), "--port", "0"]));
    let ready = served.next_json();
    let base = ready["base_url"].as_str().unwrap().to_owned();
    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&base)
        .connect_request();

    // The setup, then a close: 1 of the tape's 2 client frames.
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Frame(LinkFrame::text(SETUP_COMPLETE)))
    );
    sender.close(1000, String::new()).await.unwrap();
    assert_eq!(
        served.next_json(),
        json!({
            "event": "connection",
            "conn": 1,
            "path": LIVE_PATH,
            "test": null,
            "outcome": "incomplete",
            "tape": tape,
            "tape_conn": 1,
            "frames_matched": 1,
            "frames_total": 2,
            "last_matched_seq": 1,
            "close": {"by": "client", "code": 1000, "reason": null},
            "message": format!("connection 1: incomplete: {tape} (connection 1): the session ended after 1 of 2 client frames (the last matched is seq 1); the client closed 1000"),
        })
    );

    // The setup, then the connection dropped without a close frame.
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Frame(LinkFrame::text(SETUP_COMPLETE)))
    );
    drop(sender);
    drop(receiver);
    let mut report = served.next_json();
    let message = report["message"].take();
    assert_eq!(
        report,
        json!({
            "event": "connection",
            "conn": 2,
            "path": LIVE_PATH,
            "test": null,
            "outcome": "incomplete",
            "tape": tape,
            "tape_conn": 1,
            "frames_matched": 1,
            "frames_total": 2,
            "last_matched_seq": 1,
            "close": {"by": "client", "code": null, "reason": null},
            "message": null,
        })
    );
    let message = message.as_str().unwrap();
    assert!(
        message.starts_with(&format!("connection 2: incomplete: {tape} (connection 1): the session ended after 1 of 2 client frames (the last matched is seq 1); the client went away (")),
        "{message}"
    );
    assert_eq!(served.stop(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_on_a_full_disk_is_reported_failed_and_leaves_no_empty_tape() {
    let dir = temp_dir("full-disk");
    let tapes = dir.join("tapes");
    std::fs::create_dir_all(&tapes).unwrap();
    write_tape(&tapes.join("hello.wire.jsonl"));
    let mut upstream =
        TapeServer::replay(TapeLibrary::new().with_entries("upstream", hello_entries()))
            .start()
            .await
            .unwrap();
    let tapes_arg = tapes.to_str().unwrap();
    let mut served = Served::start(limited(
        0,
        &[
            "serve",
            "--json",
            "--upstream",
            &upstream.base_url(),
            "--record-dir",
            tapes_arg,
            "--port",
            "0",
        ],
    ));
    let ready = served.next_json();
    let base = ready["base_url"].as_str().unwrap().to_owned();
    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&base)
        .connect_request();
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Frame(LinkFrame::text(SETUP_COMPLETE)))
    );
    sender.close(1000, String::new()).await.unwrap();
    let recording = tapes.join("gemini-live-2.5-flash-1.wire.jsonl");
    let report = served.next_json();
    assert_eq!(
        report,
        json!({
            "event": "connection",
            "conn": 1,
            "path": LIVE_PATH,
            "test": null,
            "outcome": "record_failed",
            "recording": recording.display().to_string(),
            "kept": null,
            "error": "File too large (os error 27)",
            "frames_out": 1,
            "frames_in": 1,
            "close": {"by": "client", "code": 1000, "reason": null},
            "message": format!("connection 1: recording {} failed (File too large (os error 27)): entries are missing; nothing was written, the file is removed (1 client frames, 1 server frames); the client closed 1000", recording.display()),
        })
    );
    assert_eq!(served.stop(), Some(0));
    upstream.shutdown().await;
    // No empty tape: the directory still serves.
    assert_eq!(files(&tapes), ["hello.wire.jsonl"]);
    let mut served = Served::start(serve(&["--tapes", tapes_arg, "--port", "0"]));
    assert_eq!(served.next_json()["recorded_connections"], json!(1));
    assert_eq!(served.stop(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_cut_short_by_a_full_disk_is_kept_under_a_name_the_loader_skips() {
    let dir = temp_dir("full-disk-partial");
    let tapes = dir.join("tapes");
    std::fs::create_dir_all(&tapes).unwrap();
    // The upstream answers the setup with a whole turn in a frame of 4 KiB: the setup's
    // line fits in the 1 KiB the file may hold, that one does not.
    let long = format!(
        r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"text":"{}"}}]}},"turnComplete":true}}}}"#,
        "x".repeat(4096)
    );
    let mut entries = hello_entries();
    entries[1].payload = long.clone().into_bytes().into();
    let mut upstream = TapeServer::replay(TapeLibrary::new().with_entries("upstream", entries))
        .start()
        .await
        .unwrap();
    let tapes_arg = tapes.to_str().unwrap();
    let mut served = Served::start(limited(
        1,
        &[
            "serve",
            "--json",
            "--upstream",
            &upstream.base_url(),
            "--record-dir",
            tapes_arg,
            "--port",
            "0",
        ],
    ));
    let base = served.next_json()["base_url"].as_str().unwrap().to_owned();
    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&base)
        .connect_request();
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Frame(LinkFrame::text(long)))
    );
    sender.close(1000, String::new()).await.unwrap();
    let recording = tapes.join("gemini-live-2.5-flash-1.wire.jsonl");
    let kept = tapes.join("gemini-live-2.5-flash-1.wire.jsonl.failed");
    let report = served.next_json();
    assert_eq!(
        (
            &report["outcome"],
            &report["recording"],
            &report["kept"],
            &report["error"]
        ),
        (
            &json!("record_failed"),
            &json!(recording.display().to_string()),
            &json!(kept.display().to_string()),
            &json!("File too large (os error 27)"),
        )
    );
    assert_eq!(
        report["message"],
        json!(format!(
            "connection 1: recording {} failed (File too large (os error 27)): entries are missing; what was written is kept as {} (1 client frames, 1 server frames); the client closed 1000",
            recording.display(),
            kept.display()
        ))
    );
    assert_eq!(served.stop(), Some(0));
    upstream.shutdown().await;
    // What was written is kept whole up to the limit: the setup's line, then a cut line.
    let text = std::fs::read(&kept).unwrap();
    assert_eq!(text.len(), 1024);
    assert_eq!(files(&tapes), ["gemini-live-2.5-flash-1.wire.jsonl.failed"]);
    // A directory with only the failed recording holds no tape: `--tapes` says so, by name.
    let output = serve(&["--tapes", tapes_arg, "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
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

#[test]
fn the_demo_on_a_full_disk_is_an_io_error_not_drift() {
    let dir = temp_dir("demo");
    let out = dir.join("recordings");
    let output = limited(4, &["demo", "--speed", "0", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    );
    assert_eq!(
        (output.status.code(), stdout.as_str()),
        (Some(2), ""),
        "{stderr}"
    );
    let wire = files(&out)
        .into_iter()
        .find(|name| name.ends_with(".wire.jsonl"))
        .unwrap();
    let wire = out.join(wire).display().to_string();
    // `reel: the demo could not run: PATH: the wire log is incomplete: N of its writes failed …`
    let prefix = format!("reel: the demo could not run: {wire}: the wire log is incomplete: ");
    let suffix = " of its writes failed (a full disk or a file size limit?); it is not replayed\n";
    assert!(
        stderr.starts_with(&prefix) && stderr.ends_with(suffix),
        "{stderr}"
    );
    let count = &stderr[prefix.len()..stderr.len() - suffix.len()];
    assert!(count.parse::<u64>().unwrap() > 0, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
