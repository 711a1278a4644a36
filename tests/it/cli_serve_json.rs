//! `reel serve` for test runners: `--json` lines (ready, one report per connection,
//! stopped), per-test tapes by header, `CI` turning `auto` and `once` into replay only
//! unless `--allow-record`, and the arguments the new modes refuse.

use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use reel_actors::transport::{Connector, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector};
use reel_protocol::{ApiEndpoint, Secret};
use serde_json::{Value, json};
use serve_support::{ANSWER, HELLO, SETUP, SETUP_COMPLETE, write_tape};

fn temp_dir(name: &str) -> PathBuf {
    serve_support::temp_dir("cli-serve-json", name)
}

/// A running `reel serve --json`: its standard output and error, line by line.
struct Served {
    child: Child,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

/// Each line `reader` yields, sent on a channel from a thread of its own.
fn lines_of(reader: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines() {
            let _ = send.send(line.unwrap());
        }
    });
    receive
}

impl Served {
    // The child is waited for in `stop`; a panic before it ends the test run.
    #[allow(clippy::zombie_processes)]
    fn start(args: &[&str], ci: Option<&str>) -> Served {
        let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
        command
            .arg("serve")
            .arg("--json")
            .args(args)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match ci {
            Some(value) => command.env("CI", value),
            None => command.env_remove("CI"),
        };
        let mut child = command.spawn().unwrap();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Served {
            child,
            stdout,
            stderr,
        }
    }

    /// The next JSON line on standard output.
    fn next_json(&self) -> Value {
        let line = self
            .stdout
            .recv_timeout(Duration::from_secs(30))
            .expect("a line on standard output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// SIGTERM; the lines left on standard output and the exit code.
    fn stop(mut self) -> (Vec<Value>, Option<i32>) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let code = self.child.wait().unwrap().code();
        let rest = self
            .stdout
            .iter()
            .map(|line| serde_json::from_str(&line).unwrap())
            .collect();
        (rest, code)
    }
}

/// Connects to `base` as test `test`, sends the setup and returns the sender, the receiver
/// and the server's first answer.
async fn open_as(
    base: &str,
    test: &str,
) -> (
    Box<dyn reel_actors::transport::LinkSender>,
    Box<dyn reel_actors::transport::LinkReceiver>,
    Option<LinkEvent>,
) {
    let mut request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(base)
        .connect_request();
    request
        .headers
        .push(("x-reel-test".to_owned(), Secret::from(test.to_owned())));
    let (mut sender, mut receiver) = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    let first = receiver.recv().await;
    (sender, receiver, first)
}

#[tokio::test]
async fn json_lines_say_ready_then_each_connection_then_stopped() {
    let dir = temp_dir("lines");
    write_tape(&dir.join("hello.wire.jsonl"));
    let served = Served::start(&["--tapes", dir.to_str().unwrap()], None);
    let ready = served.next_json();
    let base = ready["base_url"].as_str().unwrap().to_owned();
    let http = base.replacen("ws://", "http://", 1);
    assert!(base.starts_with("ws://127.0.0.1:"), "{ready}");
    assert_eq!(
        ready,
        json!({
            "event": "ready",
            "mode": "replay",
            "requested_mode": "replay",
            "ci_replay_only": false,
            "base_url": base,
            "http_base_url": http,
            "live_url": format!("{base}/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent"),
            "vertex_url": format!("{base}/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"),
            "health_url": format!("{http}/healthz"),
            "tls_cert": null,
            "recorded_connections": 1,
            "recorded_rest_calls": 0,
            "record_dir": null,
            "upstream": null,
            "redacting": false,
            "matching": "strict",
        })
    );

    let (mut sender, mut receiver, first) = open_as(&base, "hello").await;
    assert_eq!(
        first,
        Some(LinkEvent::Frame(LinkFrame::text(SETUP_COMPLETE)))
    );
    sender.send(LinkFrame::text(HELLO)).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Frame(LinkFrame::text(ANSWER)))
    );
    sender.close(1000, String::new()).await.unwrap();
    let report = served.next_json();
    let tape = dir.join("hello.wire.jsonl").display().to_string();
    assert_eq!(
        report,
        json!({
            "event": "connection",
            "conn": 1,
            "path": "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED",
            "test": "hello",
            "outcome": "replayed",
            "tape": tape,
            "tape_conn": 1,
            "frames_matched": 2,
            "close": {"by": "client", "code": 1000, "reason": null},
            "message": format!("connection 1 (test hello): replayed {tape} (connection 1): 2 client frames matched; the client closed 1000"),
        })
    );

    let (_sender, _receiver, first) = open_as(&base, "other").await;
    assert_eq!(
        first,
        Some(LinkEvent::Closed {
            code: Some(4004),
            reason: Some("reel: test other has no tape".into())
        })
    );
    let report = served.next_json();
    assert_eq!(
        (&report["outcome"], &report["test"], &report["close"]),
        (
            &json!("no_tape"),
            &json!("other"),
            &json!({"by": "server", "code": 4004, "reason": null})
        )
    );

    let (rest, code) = served.stop();
    assert_eq!(rest, [json!({"event": "stopped"})]);
    assert_eq!(code, Some(0));
}

#[test]
fn ci_makes_auto_and_once_replay_only_unless_recording_is_allowed() {
    let dir = temp_dir("ci");
    write_tape(&dir.join("hello.wire.jsonl"));
    let dir = dir.to_str().unwrap();
    let upstream = "ws://127.0.0.1:9";
    for (mode, ci, allow, expected) in [
        ("auto", Some("true"), false, "replay"),
        ("once", Some("1"), false, "replay"),
        ("auto", Some("true"), true, "auto"),
        ("once", Some("false"), false, "once"),
        ("auto", None, false, "auto"),
    ] {
        let mut args = vec!["--mode", mode, "--tapes", dir, "--upstream", upstream];
        if allow {
            args.push("--allow-record");
        }
        let served = Served::start(&args, ci);
        let ready = served.next_json();
        assert_eq!(
            (
                ready["mode"].as_str(),
                ready["requested_mode"].as_str(),
                ready["ci_replay_only"].as_bool()
            ),
            (Some(expected), Some(mode), Some(expected == "replay")),
            "{mode} CI={ci:?} allow={allow}: {ready}"
        );
        let stderr = served.stderr.recv_timeout(Duration::from_millis(500)).ok();
        let (rest, code) = served.stop();
        assert_eq!((rest, code), (vec![json!({"event": "stopped"})], Some(0)));
        if expected == "replay" {
            assert_eq!(
                stderr.as_deref(),
                Some(
                    format!("reel serve: CI is set: {mode} mode only replays here (a client no tape matches is refused with 4004); --allow-record to record").as_str()
                )
            );
        }
    }
}

#[test]
fn the_new_modes_refuse_arguments_that_do_not_fit() {
    let dir = temp_dir("bad");
    write_tape(&dir.join("hello.wire.jsonl"));
    let dir_arg = dir.to_str().unwrap();
    let rules = dir.join("rules.json");
    std::fs::write(&rules, r#"{"path": "a"}"#).unwrap();
    let rules = rules.to_str().unwrap();
    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], String); 4] = [
        (
            &["serve", "--mode", "passthrough", "--upstream", "ws://127.0.0.1:9", "--tapes", dir_arg],
            "reel serve: passthrough mode records nothing and replays nothing: drop --tape, --tapes and --record-dir\n".to_owned(),
        ),
        (
            &["serve", "--tapes", dir_arg, "--redact", rules],
            "reel serve: --redact applies to what is recorded, and replay mode records nothing\n".to_owned(),
        ),
        (
            &["serve", "--upstream", "ws://127.0.0.1:9", "--redact", missing],
            format!("reel serve: --redact {missing}: cannot read it: "),
        ),
        (
            &["serve", "--upstream", "ws://127.0.0.1:9", "--redact", rules],
            format!("reel serve: --redact {rules}: not a list of redaction rules: "),
        ),
    ];
    for (args, expected) in cases {
        let output = Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(args)
            .env_remove("CI")
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(&expected), "{args:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_connections_is_reported_whole_even_while_stdout_is_not_read() {
    // Standard output is a pipe nobody reads until the burst is over: the printer blocks
    // once it is full (64 KiB, a few hundred reports), and more connections end than the
    // server's backlog of reports holds. Every one is still printed, once.
    let dir = temp_dir("burst");
    write_tape(&dir.join("hello.wire.jsonl"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["serve", "--json", "--tapes", dir.to_str().unwrap()])
        .env_remove("RUST_LOG")
        .env_remove("CI")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ready = String::new();
    stdout.read_line(&mut ready).unwrap();
    let ready: Value = serde_json::from_str(&ready).unwrap();
    let addr = ready["http_base_url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .to_owned();
    let total: u64 = reel_tape_server::REPORT_BACKLOG as u64 + 600;
    for _ in 0..total {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        tcp.write_all(b"GET /nothing HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 Not Found\r\n"), "{answer}");
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
        .collect();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let (last, reports) = lines.split_last().unwrap();
    assert_eq!(*last, json!({"event": "stopped"}));
    let conns: Vec<u64> = reports
        .iter()
        .map(|r| r["conn"].as_u64().unwrap())
        .collect();
    let mut sorted = conns.clone();
    sorted.sort_unstable();
    assert_eq!(sorted.len() as u64, total, "one report a connection");
    assert_eq!(sorted, (1..=total).collect::<Vec<_>>());
    assert!(
        reports.iter().all(|r| r["outcome"] == "not_found"),
        "{reports:?}"
    );
}
