//! The studio serves its own user, probed as a hostile page would over real sockets: a
//! rebinding `Host` or a foreign `Origin` reads and writes nothing (403), a live feed
//! without the run's token writes nothing (401), a feed stops at its cap with a reason and
//! what it wrote stays a recording, and `reel studio --host 0.0.0.0` warns and wants the
//! token for everything.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reel::studio::{RunningStudio, StudioOptions};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{ConnectError, Live};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp/studio-access")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `GET target` with `headers` (each `Name: value`) to `addr`: the status, the head and
/// the body.
async fn get(addr: &str, target: &str, headers: &[String]) -> (u16, String, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let mut request = format!("GET {target} HTTP/1.1\r\n");
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

fn error(message: &str) -> String {
    json!({ "error": message }).to_string()
}

/// A feed's WebSocket upgrade of `url` with `headers`: the refusal's status and body, or
/// the socket.
async fn feed(
    url: &str,
    headers: &[(&'static str, &str)],
) -> Result<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
    (u16, String),
> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err((
            response.status().as_u16(),
            String::from_utf8(response.body().clone().unwrap_or_default()).unwrap(),
        )),
        Err(other) => panic!("{other}"),
    }
}

const NO_TOKEN: &str = "writing a live feed needs this studio's token (printed when it started): Authorization: Bearer TOKEN or ?token=TOKEN";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_origin_or_a_feed_without_the_token_reads_and_writes_nothing() {
    let dir = fresh_dir("foreign");
    std::fs::write(
        dir.join("secret-call.wire.jsonl"),
        "{\"seq\":1,\"dir\":\"out\",\"ts_ms\":1718000000000,\"payload_b64\":\"e30=\"}\n",
    )
    .unwrap();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let addr = studio.local_addr().to_string();
    let port = studio.local_addr().port();
    let token = studio.token().to_owned();
    assert_eq!(token.len(), 64);

    // DNS rebinding: a page of evil.example reaches the port under its own name.
    let (status, _, body) = get(
        &addr,
        "/api/recordings",
        &[format!("Host: evil.example:{port}")],
    )
    .await;
    assert_eq!(
        (status, body),
        (
            403,
            error(&format!(
                "Host \"evil.example:{port}\" is not this server's loopback name or address (localhost, 127.0.0.1, [::1])"
            ))
        )
    );
    // A page of another origin; the studio's own page is served.
    let (status, _, body) = get(
        &addr,
        "/api/recordings",
        &[
            format!("Host: 127.0.0.1:{port}"),
            "Origin: https://evil.example".into(),
        ],
    )
    .await;
    assert_eq!(
        (status, body),
        (
            403,
            error(
                "Origin \"https://evil.example\" is not allowed here (--allow-origin https://evil.example allows it)"
            )
        )
    );
    let (status, _, body) = get(
        &addr,
        "/api/recordings",
        &[
            format!("Host: localhost:{port}"),
            format!("Origin: http://localhost:{port}"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("secret-call.wire.jsonl"));

    // The live feed: a foreign origin even with the token, no token, a wrong token.
    let url = format!("ws://{addr}/api/live?name=evil");
    let with_token = format!("{url}&token={token}");
    assert_eq!(
        feed(&with_token, &[("origin", "https://evil.example")])
            .await
            .err(),
        Some((
            403,
            error(
                "Origin \"https://evil.example\" is not allowed here (--allow-origin https://evil.example allows it)"
            )
        ))
    );
    assert_eq!(feed(&url, &[]).await.err(), Some((401, error(NO_TOKEN))));
    assert_eq!(
        feed(&url, &[("authorization", "Bearer not-the-token")])
            .await
            .err(),
        Some((401, error(NO_TOKEN)))
    );
    // A session without the token is told why before it starts.
    let server = ScriptedServer::bind().await;
    let refused = Live::builder()
        .text_only()
        .studio_as(addr.clone(), "evil")
        .connect(server.endpoint())
        .await
        .unwrap_err();
    let ConnectError::Studio { reason, .. } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(
        reason,
        &format!("{url} refused the feed with HTTP 401: {}", error(NO_TOKEN))
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["secret-call.wire.jsonl"], "nothing was written");

    // With the token, as a header: the feed is taken.
    let mut socket = feed(&url, &[("authorization", &format!("Bearer {token}"))])
        .await
        .unwrap();
    socket.close(None).await.unwrap();
    while socket.next().await.is_some() {}
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_stops_at_its_cap_with_a_reason_and_what_it_wrote_stays_a_recording() {
    let dir = fresh_dir("cap");
    let options = StudioOptions {
        max_feed_bytes: 1_000,
        ..StudioOptions::default()
    };
    let studio = RunningStudio::start_with("127.0.0.1:0", &dir, options)
        .await
        .unwrap();
    let url = format!(
        "ws://{}/api/live?name=flood&token={}",
        studio.local_addr(),
        studio.token()
    );
    let mut socket = feed(&url, &[]).await.unwrap();
    // 66 bytes a line: 15 fit in 1,000 bytes, the 16th does not.
    let line = |seq: u64| {
        format!(r#"{{"seq":{seq},"dir":"out","ts_ms":1718000000000,"payload_b64":"e30="}}"#)
    };
    assert_eq!(line(10).len() + 1, 66);
    for seq in 10..40 {
        // The studio may close mid-way: later sends can fail, the close is read below.
        if socket
            .send(Message::text(format!(r#"{{"wire":{}}}"#, line(seq))))
            .await
            .is_err()
        {
            break;
        }
    }
    let close = loop {
        match socket.next().await {
            Some(Ok(Message::Close(frame))) => break frame.unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        (u16::from(close.code), close.reason.as_str()),
        (
            1008,
            "reel studio: the feed reached its 1000-byte cap (--max-feed-bytes); the recording ends here"
        )
    );
    let written = std::fs::read_to_string(dir.join("flood.wire.jsonl")).unwrap();
    let expected: String = (10..25).map(|seq| line(seq) + "\n").collect();
    assert_eq!(written, expected);
    assert!(written.len() <= 1_000);
    let entries = reel_recorder::read_wire_log(dir.join("flood.wire.jsonl")).unwrap();
    assert_eq!(entries.len(), 15);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_the_studio_warns_and_wants_the_token_for_everything() {
    let dir = fresh_dir("open");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["studio", dir.to_str().unwrap(), "--host", "0.0.0.0"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut printed = Vec::new();
    while !printed
        .last()
        .is_some_and(|line: &String| line.starts_with("Ctrl-C"))
    {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{printed:?}");
        printed.push(line.trim_end().to_owned());
    }
    let mut warning = String::new();
    stderr.read_line(&mut warning).unwrap();
    let token = printed[1].strip_prefix("token: ").unwrap().to_owned();
    let url = printed[0]
        .strip_prefix("reel studio: ")
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let port: u16 = url
        .strip_prefix("http://0.0.0.0:")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        printed,
        [
            format!(
                "reel studio: http://0.0.0.0:{port}/?token={token} (0 recordings in {})",
                dir.display()
            ),
            format!("token: {token}"),
            format!(
                "A session streams in live with Live::builder()….studio(\"0.0.0.0:{port}\").studio_token(\"{token}\") (or REEL_STUDIO_TOKEN={token})."
            ),
            "Ctrl-C or SIGTERM to stop.".to_owned(),
        ]
    );
    assert_eq!(
        warning.trim_end(),
        format!(
            "reel studio: warning: listening on 0.0.0.0:{port}, not loopback: anyone who can reach this port can try it; every request needs the token"
        )
    );

    let addr = format!("127.0.0.1:{port}");
    let host = format!("Host: laptop.lan:{port}");
    let (status, _, body) = get(&addr, "/api/recordings", std::slice::from_ref(&host)).await;
    assert_eq!(
        (status, body),
        (
            401,
            error(
                "this studio (not on loopback) needs this studio's token (printed when it started): Authorization: Bearer TOKEN or ?token=TOKEN"
            )
        )
    );
    // The printed address: the page, and a cookie for its own requests.
    let (status, head, _) = get(
        &addr,
        &format!("/?token={token}"),
        std::slice::from_ref(&host),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        head.contains(&format!(
            "\r\nset-cookie: reel_studio_token={token}; HttpOnly; SameSite=Strict; Path=/\r\n"
        )),
        "{head}"
    );
    let cookie = format!("Cookie: reel_studio_token={token}");
    let (status, _, body) = get(&addr, "/api/recordings", &[host.clone(), cookie]).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(listed["recordings"], json!([]));

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || child.wait().unwrap().code());
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(60), exit)
            .await
            .unwrap()
            .unwrap(),
        Some(0)
    );
}

#[test]
fn sighup_stops_the_studio_like_sigterm() {
    let dir = fresh_dir("hup");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["studio", dir.to_str().unwrap()])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("Ctrl-C") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0);
    }
    let status = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
