//! The studio's HTTP/1.1 server (hyper's) over real loopback sockets, on what a hand-read
//! head did not give: requests kept alive and pipelined on one connection, answered in
//! order; a head that does not end within 16 KiB answered 431 and closed; a head that does
//! not arrive within its timeout closed; a request body refused (413); a WebSocket upgrade
//! of the wrong version or method refused with the reason; and `stop` ending the open
//! connections and live feeds, not only the accept loop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use reel::studio::RunningStudio;
use reel::studio::http::{HEAD_READ_TIMEOUT, MAX_HEAD};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp/studio-http")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One answer of a connection's bytes: its status line, its head's lines, its body.
#[derive(Debug)]
struct Answer {
    status_line: String,
    headers: Vec<String>,
    body: String,
}

/// The answers in `bytes`, one after another (each framed by its `content-length`).
fn answers(mut bytes: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    while !bytes.is_empty() {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no end of head in {:?}", String::from_utf8_lossy(bytes)));
        let head = std::str::from_utf8(&bytes[..end]).unwrap();
        let mut lines = head.split("\r\n").map(str::to_owned);
        let status_line = lines.next().unwrap();
        let headers: Vec<String> = lines.collect();
        let length: usize = headers
            .iter()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |n| n.parse().unwrap());
        let body = String::from_utf8(bytes[end + 4..end + 4 + length].to_vec()).unwrap();
        answers.push(Answer {
            status_line,
            headers,
            body,
        });
        bytes = &bytes[end + 4 + length..];
    }
    answers
}

/// Writes `request` to a new connection to `studio` and reads until the studio closes it
/// (a deadline only against a studio that never does).
async fn exchange(studio: &RunningStudio, request: &[u8]) -> Vec<u8> {
    let mut tcp = TcpStream::connect(studio.local_addr()).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), tcp.read_to_end(&mut answer))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the studio kept the connection open after {:?}",
                String::from_utf8_lossy(&answer)
            )
        })
        .unwrap();
    answer
}

fn error(message: &str) -> String {
    json!({ "error": message }).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_kept_alive_and_pipelined_on_one_connection_are_answered_in_order() {
    let dir = fresh_dir("pipelined");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    // Three requests in one write: two ask to keep the connection, the last does not.
    let request = "GET /api/recordings HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n\
                   GET /nothing-here HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n\
                   GET /api/recordings/none.wire.jsonl HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    let answered = answers(&exchange(&studio, request.as_bytes()).await);
    let seen: Vec<(&str, &str)> = answered
        .iter()
        .map(|a| (a.status_line.as_str(), a.body.as_str()))
        .collect();
    let listed = json!({ "dir": dir.display().to_string(), "recordings": [] }).to_string();
    assert_eq!(
        seen,
        [
            ("HTTP/1.1 200 OK", listed.as_str()),
            ("HTTP/1.1 404 Not Found", error("no such page").as_str()),
            (
                "HTTP/1.1 404 Not Found",
                error("no recording \"none.wire.jsonl\" in the studio's directory").as_str()
            ),
        ]
    );
    // Kept while asked; the last answer says it closes (and it did: read to the end).
    let closes: Vec<bool> = answered
        .iter()
        .map(|a| a.headers.iter().any(|h| h == "connection: close"))
        .collect();
    assert_eq!(closes, [false, false, true]);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_that_does_not_end_within_16_kib_is_answered_431_and_closed() {
    let dir = fresh_dir("too-large");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    // Exactly the limit, with no blank line: the server reads all of it (nothing is left
    // unread under the close) and finds no end.
    let mut head = b"GET /api/recordings HTTP/1.1\r\nhost: 127.0.0.1\r\nx-filler: ".to_vec();
    head.resize(MAX_HEAD, b'a');
    let answered = answers(&exchange(&studio, &head).await);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(
        answered[0].status_line,
        "HTTP/1.1 431 Request Header Fields Too Large"
    );
    assert_eq!(answered[0].body, "");
    studio.stop().await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_head_that_does_not_arrive_in_time_closes_the_connection_unanswered() {
    let dir = fresh_dir("slow-head");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let started = tokio::time::Instant::now();
    let mut tcp = TcpStream::connect(studio.local_addr()).await.unwrap();
    // Half a head, then nothing: the clock (virtual, paused) runs to the server's timeout.
    tcp.write_all(b"GET /api/recordings HTTP/1.1\r\nhost: 127.0")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(600), tcp.read_to_end(&mut answer))
        .await
        .expect("the studio kept a connection whose head never ended");
    assert_eq!(read.unwrap(), 0, "{:?}", String::from_utf8_lossy(&answer));
    let waited = started.elapsed();
    assert!(
        waited >= HEAD_READ_TIMEOUT && waited < HEAD_READ_TIMEOUT + Duration::from_secs(1),
        "{waited:?}"
    );
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_a_body_is_refused_413() {
    let dir = fresh_dir("body");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let request =
        b"GET /api/recordings HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 5\r\n\r\nhello";
    let answered = answers(&exchange(&studio, request).await);
    let seen: Vec<(&str, &str)> = answered
        .iter()
        .map(|a| (a.status_line.as_str(), a.body.as_str()))
        .collect();
    assert_eq!(
        seen,
        [(
            "HTTP/1.1 413 Payload Too Large",
            error("the studio takes no request body").as_str()
        )]
    );
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_upgrade_of_another_version_or_method_is_refused_with_the_reason() {
    let dir = fresh_dir("upgrade");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let token = studio.token().to_owned();
    let upgrade = |method: &str, version: Option<&str>| {
        let version = version.map_or(String::new(), |v| format!("sec-websocket-version: {v}\r\n"));
        format!(
            "{method} /api/live?name=call&token={token} HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n{version}\r\n"
        )
    };
    let mut seen = Vec::new();
    for request in [
        upgrade("GET", Some("8")),
        upgrade("GET", None),
        upgrade("POST", Some("13")),
    ] {
        let answered = answers(&exchange(&studio, request.as_bytes()).await);
        let [answer] = answered.as_slice() else {
            panic!("{answered:?}");
        };
        assert!(
            answer
                .headers
                .iter()
                .any(|h| h == "sec-websocket-version: 13"),
            "{answer:?}"
        );
        seen.push((answer.status_line.clone(), answer.body.clone()));
    }
    let bad = |reason: &str| ("HTTP/1.1 400 Bad Request".to_owned(), error(reason));
    assert_eq!(
        seen,
        [
            bad("WebSocket version \"8\" is not served: Sec-WebSocket-Version must be 13"),
            bad("/api/live needs Sec-WebSocket-Version: 13"),
            bad("a WebSocket upgrade is a GET request, not POST"),
        ]
    );
    // Nothing was created for them.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // The right one is switched, with the key's answer (RFC 6455's own example).
    let mut tcp = TcpStream::connect(studio.local_addr()).await.unwrap();
    tcp.write_all(upgrade("GET", Some("13")).as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(tcp.read(&mut byte).await.unwrap(), 1);
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let lines: Vec<&str> = head.trim_end().split("\r\n").collect();
    assert_eq!(lines[0], "HTTP/1.1 101 Switching Protocols");
    for expected in [
        "upgrade: websocket",
        "connection: Upgrade",
        "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
    ] {
        assert!(lines.contains(&expected), "{head}");
    }
    drop(tcp);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_kept_connections_and_live_feeds_not_only_the_accept_loop() {
    let dir = fresh_dir("stop");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let addr = studio.local_addr();

    // A connection kept alive after its answer, idle.
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(
        b"GET /nothing-here HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n",
    )
    .await
    .unwrap();
    let mut first = Vec::new();
    while answers_complete(&first) < 1 {
        let mut chunk = [0u8; 1024];
        let n = kept.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before its answer");
        first.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(answers(&first)[0].status_line, "HTTP/1.1 404 Not Found");

    // A live feed.
    let mut request = format!("ws://{addr}/api/live?name=stopping")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", studio.token()).parse().unwrap(),
    );
    let (mut feed, _) = tokio_tungstenite::connect_async(request).await.unwrap();

    let stopped = tokio::spawn(studio.stop());
    // The feed is told the studio stopped (1001); the kept connection is closed.
    let close = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match feed.next().await {
                Some(Ok(Message::Close(frame))) => break frame.unwrap(),
                Some(Ok(_)) => continue,
                other => panic!("{other:?}"),
            }
        }
    })
    .await
    .expect("the feed stayed open after stop");
    assert_eq!(
        (u16::from(close.code), close.reason.as_str()),
        (1001, "reel studio stopped")
    );
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), kept.read_to_end(&mut rest))
        .await
        .expect("the kept connection stayed open after stop");
    assert_eq!(read.unwrap(), 0);
    tokio::time::timeout(Duration::from_secs(60), stopped)
        .await
        .expect("stop did not return")
        .unwrap();
    // Nothing came on the feed: it leaves no recording.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

/// How many whole answers `bytes` holds.
fn answers_complete(bytes: &[u8]) -> usize {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return 0;
    };
    let head = String::from_utf8_lossy(&bytes[..end]);
    let length: usize = head
        .split("\r\n")
        .find_map(|line| line.strip_prefix("content-length: "))
        .map_or(0, |n| n.parse().unwrap());
    usize::from(bytes.len() >= end + 4 + length)
}
