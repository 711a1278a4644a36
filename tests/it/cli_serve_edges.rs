//! `reel serve` at its edges, probed as a hostile client would, with the real binary, real
//! sockets and a fake upstream: a web page's `Origin` and a rebinding `Host` are refused
//! before any upstream is opened; requests that are not a WebSocket upgrade it can read get
//! HTTP 400 with the reason; a client that never sends its setup, or sends text that is not
//! UTF-8, is closed with a reason; SIGHUP stops it like SIGTERM, and a second signal while
//! it drains stops it at once, naming what it leaves unfinished; credentials in any spelling
//! of the query are redacted from the reports and the logs.

use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_tape_server::{Pace, TapeLibrary, TapeServer};
use serde_json::{Value, json};
use serve_support::{ANSWER, HELLO, SETUP, SETUP_COMPLETE, hello_entries, write_tape};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{Frame, FrameHeader};

const LIVE: &str = "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";

fn temp_dir(name: &str) -> PathBuf {
    serve_support::temp_dir("cli-serve-edges", name)
}

/// A running `reel serve`: its standard output and error, line by line.
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
    /// `reel serve --json ARGS`, with `RUST_LOG` as given; returns it and its `ready` line.
    // The child is waited for by the test; a panic before it ends the test run.
    #[allow(clippy::zombie_processes)]
    fn start(args: &[&str], rust_log: Option<&str>) -> (Served, Value) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
        command
            .arg("serve")
            .arg("--json")
            .args(args)
            .env_remove("CI")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match rust_log {
            Some(filter) => command.env("RUST_LOG", filter),
            None => command.env_remove("RUST_LOG"),
        };
        let mut child = command.spawn().unwrap();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        let served = Served {
            child,
            stdout,
            stderr,
        };
        let ready = served.next_json();
        (served, ready)
    }

    /// The next JSON line on standard output.
    fn next_json(&self) -> Value {
        let line = self
            .stdout
            .recv_timeout(Duration::from_secs(60))
            .expect("a line on standard output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The next line on standard error.
    fn next_stderr(&self) -> String {
        self.stderr
            .recv_timeout(Duration::from_secs(60))
            .expect("a line on standard error")
    }

    /// Sends `signal` (`TERM`, `HUP`, …) to the child.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the exit; the JSON lines left on standard output, the lines left on
    /// standard error, and the exit code.
    fn wait(self) -> (Vec<Value>, Vec<String>, Option<i32>) {
        let (stdout, stderr, code) = self.wait_for_text();
        let stdout = stdout
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (stdout, stderr, code)
    }

    /// Waits for the exit; the lines left on standard output and error, and the exit code.
    fn wait_for_text(mut self) -> (Vec<String>, Vec<String>, Option<i32>) {
        let code = self.child.wait().unwrap().code();
        (
            self.stdout.iter().collect(),
            self.stderr.iter().collect(),
            code,
        )
    }
}

impl Drop for Served {
    /// A test that failed half-way leaves no server behind (the child is this test's own).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `host:port` of a `ws://` base URL.
fn authority(base: &str) -> String {
    base.strip_prefix("ws://").unwrap().to_owned()
}

/// Sends `request` on a fresh TCP connection to `addr`, returns everything answered.
async fn raw(addr: &str, request: &[u8]) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.unwrap();
    String::from_utf8(answer).unwrap()
}

/// The HTTP answer reel serve gives a refused request.
fn refusal(status: &str, message: &str) -> String {
    let body = format!("{message}\n");
    let version = if status.starts_with("400") {
        "sec-websocket-version: 13\r\n"
    } else {
        ""
    };
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n{version}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A WebSocket upgrade of `url` carrying `headers`; the HTTP error it gets, as status and
/// body, or `None` when it is accepted (the socket is then closed).
async fn upgrade_refused(url: &str, headers: &[(&'static str, &str)]) -> Option<(u16, String)> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((mut socket, _)) => {
            socket.close(None).await.unwrap();
            None
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Some((
            response.status().as_u16(),
            String::from_utf8(response.body().clone().unwrap_or_default()).unwrap(),
        )),
        Err(other) => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_refused_before_any_upstream_is_opened() {
    let dir = temp_dir("origin");
    let mut upstream =
        TapeServer::replay(TapeLibrary::new().with_entries("upstream", hello_entries()))
            .start()
            .await
            .unwrap();
    let record_dir = dir.display().to_string();
    let (served, ready) = Served::start(
        &[
            "--mode",
            "record",
            "--upstream",
            &upstream.base_url(),
            "--record-dir",
            &record_dir,
            "--allow-origin",
            "https://app.example",
        ],
        None,
    );
    let base = ready["base_url"].as_str().unwrap().to_owned();
    let addr = authority(&base);
    let url = format!("{base}{LIVE}");

    // A page of another origin opens the socket, as a browser would.
    let evil = "reel: Origin \"https://evil.example\" is not allowed here (--allow-origin https://evil.example allows it)";
    assert_eq!(
        upgrade_refused(&url, &[("origin", "https://evil.example")]).await,
        Some((403, format!("{evil}\n")))
    );
    assert_eq!(
        served.next_json(),
        json!({
            "event": "connection", "conn": 1, "path": LIVE, "test": null,
            "outcome": "refused", "status": 403, "error": evil, "close": null,
            "message": format!("connection 1: refused with HTTP 403: {evil}"),
        })
    );
    // A rebinding page's own name as Host, on the socket and on plain HTTP.
    let host = "reel: Host \"evil.example:80\" is not this server's loopback name or address (localhost, 127.0.0.1, [::1])";
    assert_eq!(
        upgrade_refused(&url, &[("host", "evil.example:80")]).await,
        Some((403, format!("{host}\n")))
    );
    assert_eq!(served.next_json()["error"], json!(host));
    assert_eq!(
        raw(
            &addr,
            b"GET /healthz HTTP/1.1\r\nHost: evil.example:80\r\n\r\n"
        )
        .await,
        refusal("403 Forbidden", host)
    );
    assert_eq!(served.next_json()["outcome"], json!("refused"));

    // The allowed origin, and a client sending none, are proxied: the first connection the
    // upstream ever saw is the allowed one.
    assert_eq!(
        upgrade_refused(
            &url,
            &[("origin", "https://app.example"), ("host", "localhost")]
        )
        .await,
        None
    );
    assert_eq!(served.next_json()["outcome"], json!("no_setup"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    socket.send(Message::text(SETUP)).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap(),
        Message::text(SETUP_COMPLETE)
    );
    socket.send(Message::text(HELLO)).await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), Message::text(ANSWER));
    socket.close(None).await.unwrap();
    assert_eq!(served.next_json()["outcome"], json!("recorded"));
    let first_upstream = upstream.next_report().await.unwrap();
    assert_eq!(first_upstream.conn, 1, "{first_upstream}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "one recording: the allowed client's"
    );

    served.signal("TERM");
    let (rest, _, code) = served.wait();
    assert_eq!((rest, code), (vec![json!({"event": "stopped"})], Some(0)));
    upstream.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn what_is_not_an_upgrade_it_can_read_gets_400_with_the_reason() {
    let dir = temp_dir("bad-upgrade");
    write_tape(&dir.join("hello.wire.jsonl"));
    let (served, ready) = Served::start(&["--tapes", dir.to_str().unwrap()], None);
    let addr = authority(ready["base_url"].as_str().unwrap());
    let upgrade = |extra: &str| {
        format!(
            "GET {LIVE} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n{extra}\r\n"
        )
    };
    let cases = [
        (
            upgrade("Sec-WebSocket-Version: 13\r\n"),
            "reel: a WebSocket upgrade needs a Sec-WebSocket-Key header",
        ),
        (
            upgrade("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n"),
            "reel: WebSocket version \"8\" is not served: Sec-WebSocket-Version must be 13",
        ),
        (
            "\u{1}\u{2} garbage\r\n\r\n".to_owned(),
            "reel: not an HTTP request (invalid token)",
        ),
    ];
    for (n, (request, reason)) in cases.into_iter().enumerate() {
        assert_eq!(
            raw(&addr, request.as_bytes()).await,
            refusal("400 Bad Request", reason),
            "{request:?}"
        );
        let report = served.next_json();
        assert_eq!(
            (
                &report["conn"],
                &report["outcome"],
                &report["status"],
                &report["error"]
            ),
            (
                &json!(n + 1),
                &json!("refused"),
                &json!(400),
                &json!(reason)
            ),
        );
    }
    served.signal("TERM");
    let (rest, _, code) = served.wait();
    assert_eq!((rest, code), (vec![json!({"event": "stopped"})], Some(0)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_silent_client_and_text_that_is_not_utf8_are_closed_with_a_reason() {
    let dir = temp_dir("silent");
    write_tape(&dir.join("hello.wire.jsonl"));
    let (served, ready) = Served::start(
        &["--tapes", dir.to_str().unwrap(), "--setup-timeout", "0.2"],
        None,
    );
    let url = format!("{}{LIVE}", ready["base_url"].as_str().unwrap());

    // Upgraded, then nothing.
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    let Some(Ok(Message::Close(Some(close)))) = socket.next().await else {
        panic!("a close frame");
    };
    assert_eq!(
        (close.code, close.reason.as_str()),
        (CloseCode::from(4408), "reel: no setup frame within 200 ms")
    );
    // Reading on sends the answering close.
    while socket.next().await.is_some() {}
    let report = served.next_json();
    assert_eq!(
        (&report["outcome"], &report["close"]),
        (
            &json!("no_setup"),
            &json!({"by": "server", "code": 4408, "reason": "reel: no setup frame within 200 ms"})
        )
    );

    // A text frame whose bytes are not UTF-8, first and after a matched setup.
    for setup_first in [false, true] {
        let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        let number = if setup_first {
            socket.send(Message::text(SETUP)).await.unwrap();
            assert_eq!(
                socket.next().await.unwrap().unwrap(),
                Message::text(SETUP_COMPLETE)
            );
            2
        } else {
            1
        };
        let header = FrameHeader {
            opcode: OpCode::Data(Data::Text),
            ..FrameHeader::default()
        };
        let frame = Frame::from_payload(header, b"{\"x\":\"\xff\xfe\"}".to_vec().into());
        socket.send(Message::Frame(frame)).await.unwrap();
        let Some(Ok(Message::Close(Some(close)))) = socket.next().await else {
            panic!("a close frame");
        };
        let reason = format!("reel: frame {number} is not valid UTF-8 text");
        assert_eq!(
            (close.code, close.reason.as_str()),
            (CloseCode::Invalid, reason.as_str())
        );
        while socket.next().await.is_some() {}
        let report = served.next_json();
        assert_eq!(
            (&report["outcome"], &report["frame"], &report["error"]),
            (
                &json!("invalid_frame"),
                &json!(number),
                &json!("a text frame that is not valid UTF-8")
            )
        );
    }
    served.signal("TERM");
    let (rest, _, code) = served.wait();
    assert_eq!((rest, code), (vec![json!({"event": "stopped"})], Some(0)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bind_off_loopback_says_so() {
    let dir = temp_dir("open");
    write_tape(&dir.join("hello.wire.jsonl"));
    let (served, ready) = Served::start(
        &["--tapes", dir.to_str().unwrap(), "--host", "0.0.0.0"],
        None,
    );
    let port = ready["base_url"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        served.next_stderr(),
        format!(
            "reel serve: warning: listening on 0.0.0.0:{port}, not loopback: anyone who can reach this port can use the server; Host is not checked there"
        )
    );
    served.signal("TERM");
    let (rest, _, code) = served.wait();
    assert_eq!((rest, code), (vec![json!({"event": "stopped"})], Some(0)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sighup_stops_it_like_sigterm() {
    let dir = temp_dir("hup");
    write_tape(&dir.join("hello.wire.jsonl"));
    let (served, _) = Served::start(&["--tapes", dir.to_str().unwrap()], None);
    served.signal("HUP");
    let (rest, stderr, code) = served.wait();
    assert_eq!(
        (rest, stderr, code),
        (vec![json!({"event": "stopped"})], vec![], Some(0))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The upstream's session: it answers the setup at once and the question an hour later.
fn slow_answer() -> Vec<WireEntry> {
    let mut entries = hello_entries();
    entries[3].ts_ms += 3_600_000;
    entries
}

#[tokio::test]
async fn a_second_signal_while_draining_stops_at_once_and_names_the_unfinished_recording() {
    let dir = temp_dir("second-signal");
    let mut upstream =
        TapeServer::replay(TapeLibrary::new().with_entries("upstream", slow_answer()))
            .pace(Pace::Recorded { speed: 1.0 })
            .start()
            .await
            .unwrap();
    let record_dir = dir.display().to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command
        .args([
            "serve",
            "--upstream",
            &upstream.base_url(),
            "--record-dir",
            &record_dir,
            "--drain-timeout",
            "60",
        ])
        .env_remove("RUST_LOG")
        .env_remove("CI")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stdout = lines_of(child.stdout.take().unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    let served = Served {
        child,
        stdout,
        stderr,
    };
    let base = loop {
        let line = served.stdout.recv().unwrap();
        if let Some(base) = line.strip_prefix("listening on ") {
            break base.to_owned();
        }
    };
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("{base}{LIVE}"))
        .await
        .unwrap();
    socket.send(Message::text(SETUP)).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap(),
        Message::text(SETUP_COMPLETE)
    );
    // The question is asked: the upstream owes the turn, for an hour.
    socket.send(Message::text(HELLO)).await.unwrap();
    // Signalled only once the question is on the recording: on a busy machine the signal
    // could otherwise overtake the frame on its way through the proxy.
    let recording = dir.join("gemini-live-2.5-flash-1.wire.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while reel_recorder::read_wire_log(&recording).map_or(0, |entries| entries.len()) < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the question never reached the recording"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    served.signal("TERM");
    let Some(Ok(Message::Close(Some(close)))) = socket.next().await else {
        panic!("a close frame");
    };
    assert_eq!(close.reason.as_str(), "reel: the server is shutting down");
    assert_eq!(
        served.next_stderr(),
        "reel serve: stopping; finishing open sessions"
    );
    // It drains (up to 60 s); the user asks again.
    served.signal("TERM");
    let (_, stderr, code) = served.wait_for_text();
    assert_eq!(
        (stderr, code),
        (
            vec![format!(
                "reel serve: SIGTERM again: stopped at once; 1 recording not finished (no rest of the turn, no close marker): {}",
                recording.display()
            )],
            Some(1)
        )
    );
    // What was recorded is there, line by line.
    let entries = reel_recorder::read_wire_log(&recording).unwrap();
    let frames: Vec<(Direction, &str)> = entries
        .iter()
        .map(|entry| (entry.dir, std::str::from_utf8(&entry.payload).unwrap()))
        .collect();
    assert_eq!(
        frames,
        [
            (Direction::Out, SETUP),
            (Direction::In, SETUP_COMPLETE),
            (Direction::Out, HELLO)
        ]
    );
    upstream.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn credentials_in_any_spelling_of_the_query_are_redacted_from_reports_and_logs() {
    let dir = temp_dir("secrets");
    write_tape(&dir.join("hello.wire.jsonl"));
    let (served, ready) = Served::start(&["--tapes", dir.to_str().unwrap()], Some("debug"));
    let base = ready["base_url"].as_str().unwrap();
    let url = format!(
        "{base}{LIVE}?%6Bey=AIzaSECRET1;key=AIzaSECRET2&KEY=AIzaSECRET3&access%5Ftoken=SECRET4&alt=json"
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    socket.send(Message::text(SETUP)).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap(),
        Message::text(SETUP_COMPLETE)
    );
    socket.close(None).await.unwrap();
    let report = served.next_json();
    assert_eq!(
        report["path"],
        json!(format!(
            "{LIVE}?%6Bey=REDACTED;key=REDACTED&KEY=REDACTED&access%5Ftoken=REDACTED&alt=json"
        ))
    );
    served.signal("TERM");
    let (_, logs, code) = served.wait();
    assert_eq!(code, Some(0));
    assert!(
        logs.iter()
            .any(|line| line.contains("%6Bey=REDACTED;key=REDACTED")),
        "the redacted URL is logged: {logs:#?}"
    );
    let leaks: Vec<&String> = logs.iter().filter(|line| line.contains("SECRET")).collect();
    assert!(leaks.is_empty(), "{leaks:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
