//! `reel serve` under a service manager: SIGTERM stops it like Ctrl-C — an open proxied
//! session is finished, its recording flushed and closed, its report printed, exit 0 — and
//! library warnings reach standard error through `RUST_LOG` (default `warn`).

use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::Receiver;

use reel_actors::transport::{Connector, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector};
use reel_protocol::ApiEndpoint;
use reel_recorder::read_wire_log;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_tape_server::{TapeLibrary, TapeServer};
use serve_support::{ANSWER, HELLO, SETUP, SETUP_COMPLETE, hello_entries};

fn temp_dir(name: &str) -> PathBuf {
    serve_support::temp_dir("cli-serve-signals", name)
}

/// The session the upstream plays: a setup, one text turn.
fn tape() -> Vec<WireEntry> {
    hello_entries()
}

/// Starts `reel` with `args` (and `RUST_LOG` as given, or unset), reads standard output up
/// to the line that says how to stop it; returns the child, those lines, and standard
/// error line by line.
// The child is handed to the caller, which waits for it; a panic here ends the test run.
#[allow(clippy::zombie_processes)]
fn serve(args: &[&str], rust_log: Option<&str>) -> (Child, Vec<String>, Receiver<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match rust_log {
        Some(filter) => command.env("RUST_LOG", filter),
        None => command.env_remove("RUST_LOG"),
    };
    let mut child = command.spawn().unwrap();
    let mut stdout: BufReader<ChildStdout> = BufReader::new(child.stdout.take().unwrap());
    let (lines, stderr_lines) = std::sync::mpsc::channel::<String>();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in stderr.lines() {
            let _ = lines.send(line.unwrap());
        }
    });
    let mut printed = Vec::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{printed:?}");
        printed.push(line.trim_end().to_owned());
        if line.starts_with("Ctrl-C or SIGTERM to stop.") {
            return (child, printed, stderr_lines);
        }
    }
}

/// Sends SIGTERM to `child` (the one this test started).
fn send_sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends SIGTERM to `child` and waits for its exit code.
fn terminate(child: &mut Child) -> Option<i32> {
    send_sigterm(child);
    child.wait().unwrap().code()
}

/// Every line left on standard error, until it closes.
fn rest(stderr: Receiver<String>) -> Vec<String> {
    stderr.iter().collect()
}

#[tokio::test]
async fn sigterm_finishes_the_open_recording_and_prints_its_report() {
    let dir = temp_dir("record");
    let mut upstream = TapeServer::replay(TapeLibrary::new().with_entries("upstream", tape()))
        .start()
        .await
        .unwrap();
    let record_dir = dir.display().to_string();
    let (mut child, printed, stderr) = serve(
        &[
            "serve",
            "--upstream",
            &upstream.base_url(),
            "--record-dir",
            &record_dir,
            "--port",
            "0",
        ],
        None,
    );
    assert_eq!(
        printed[0],
        format!(
            "reel serve: record mode, through {}, into {record_dir}; strict matching; frames sent at once",
            upstream.base_url()
        )
    );
    let base = printed[1].strip_prefix("listening on ").unwrap().to_owned();

    // A client talks through the proxy and stays connected.
    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&base)
        .connect_request();
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    let frame = |text: &str| Some(LinkEvent::Frame(LinkFrame::text(text)));
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(receiver.recv().await, frame(SETUP_COMPLETE));
    sender.send(LinkFrame::text(HELLO)).await.unwrap();
    assert_eq!(receiver.recv().await, frame(ANSWER));

    // SIGTERM, with the session open: it is closed (the client answers the close), recorded,
    // reported.
    send_sigterm(&child);
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(1001),
            reason: Some("reel: the server is shutting down".into())
        })
    );
    let exit = tokio::task::spawn_blocking(move || child.wait().unwrap().code());
    assert_eq!(exit.await.unwrap(), Some(0));
    let recording = dir.join("gemini-live-2.5-flash-1.wire.jsonl");
    assert_eq!(
        rest(stderr),
        [
            "reel serve: stopping; finishing open sessions".to_owned(),
            format!(
                "reel serve: connection 1: recorded {} (2 client frames, 2 server frames); the server shut down",
                recording.display()
            ),
            "reel serve: stopped".to_owned(),
        ]
    );

    // The recording is whole: every frame, then the close, each line complete.
    let text = std::fs::read_to_string(&recording).unwrap();
    assert!(text.ends_with('\n'));
    let entries = read_wire_log(&recording).unwrap();
    let frames: Vec<(Direction, &str)> = entries
        .iter()
        .filter(|entry| !entry.is_close_marker())
        .map(|entry| (entry.dir, std::str::from_utf8(&entry.payload).unwrap()))
        .collect();
    assert_eq!(
        frames,
        [
            (Direction::Out, SETUP),
            (Direction::In, SETUP_COMPLETE),
            (Direction::Out, HELLO),
            (Direction::In, ANSWER),
        ]
    );
    assert_eq!(
        entries.last().and_then(|entry| entry.close.clone()),
        Some(CloseMark {
            code: Some(1001),
            reason: Some("reel: the server is shutting down".into()),
            client: true,
        })
    );
    upstream.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A tape whose last line was cut short: read with a warning.
fn torn_tape(path: &Path) {
    let mut text = String::new();
    for entry in tape() {
        text.push_str(&serde_json::to_string(&entry).unwrap());
        text.push('\n');
    }
    text.push_str(r#"{"seq":5,"dir":"in","ts_"#);
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_library_warning_reaches_stderr_unless_rust_log_says_otherwise() {
    let dir = temp_dir("warn");
    let tape = dir.join("torn.wire.jsonl");
    torn_tape(&tape);
    let tape = tape.display().to_string();

    // No RUST_LOG: warnings are logged, the tape server's among them.
    let (mut child, _, stderr) = serve(&["serve", "--tape", &tape, "--port", "0"], None);
    assert_eq!(terminate(&mut child), Some(0));
    let lines = rest(stderr);
    assert_eq!(lines.len(), 3, "{lines:?}");
    // `<time>  WARN <target>: <message> <fields>`: the time is the run's own.
    let (_, warning) = lines[0].split_once(' ').unwrap();
    assert_eq!(
        warning,
        format!(
            " WARN reel_tape_server::tape_index: tape read with a warning tape={tape} \
             warning=`{tape}` line 5: torn last line skipped (a write was cut short): EOF \
             while parsing a string, at column 24"
        )
    );
    assert_eq!(
        lines[1..],
        [
            "reel serve: stopping; finishing open sessions",
            "reel serve: stopped"
        ]
    );

    // RUST_LOG=error: the warning is not logged.
    let (mut child, _, stderr) = serve(&["serve", "--tape", &tape, "--port", "0"], Some("error"));
    assert_eq!(terminate(&mut child), Some(0));
    assert_eq!(
        rest(stderr),
        [
            "reel serve: stopping; finishing open sessions",
            "reel serve: stopped"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
