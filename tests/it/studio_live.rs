//! Live attach over real loopback sockets: a session built with `.studio(addr)` streams its
//! recording into a running studio while a scripted server talks to it; the studio lists
//! it as live while it runs, and afterwards holds files byte for byte the session's own
//! recording. Bad names, garbage messages and a studio that is not there are refused with
//! their reasons.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reel::studio::RunningStudio;
use reel_actors::testing::ScriptedServer;
use reel_fluent::{ConnectError, Live};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp/studio-live")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn get_json(studio: &RunningStudio, target: &str) -> Value {
    let mut tcp = TcpStream::connect(studio.local_addr()).await.unwrap();
    tcp.write_all(format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    serde_json::from_slice(&answer[split + 4..]).unwrap()
}

/// Reads `target` until `done` holds for its answer (the studio is another task writing
/// what a socket brings: this waits for it, with a deadline, and asserts nothing itself).
async fn until(studio: &RunningStudio, target: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let answer = get_json(studio, target).await;
        if done(&answer) {
            return answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{target} never got there: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn listed<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["recordings"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_streams_into_the_studio_while_it_runs_and_stays_there_as_its_recording() {
    let dir = fresh_dir("stream");
    let local = fresh_dir("stream-local");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint();
    let builder = Live::builder()
        .text_only()
        .record_wire(local.join("support.wire.jsonl"))
        .journal(local.join("support.journal.jsonl"))
        // A callback that fails on one text: the fast lane restarts mid-turn.
        .on_text(|text| assert!(!text.contains("crash"), "the callback failed on {text:?}"))
        .studio(studio.local_addr().to_string())
        .studio_token(studio.token());
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint.clone()), script);
    let handle = handle.unwrap();

    // The studio has the call, live, with what crossed the wire so far: the setup and its
    // answer.
    let list = until(&studio, "/api/recordings", |list| {
        listed(list, "support.wire.jsonl").is_some_and(|r| r["frames"] == 2)
    })
    .await;
    assert_eq!(listed(&list, "support.wire.jsonl").unwrap()["live"], true);

    // A turn while the studio watches: it arrives as it happens.
    handle.send_text("What is the weather in London?").unwrap();
    conn.recv().await.unwrap();
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "crash"}]}}}))
        .await;
    conn.send_json(
        &json!({"serverContent": {"modelTurn": {"parts": [{"text": "Sunny, 21 °C."}]}}}),
    )
    .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let overview = until(&studio, "/api/recordings/support.wire.jsonl", |o| {
        o["frames"] == 6
            && o["turns"].as_array().is_some_and(|t| t.len() == 1)
            && o["supervisor"]
                .as_array()
                .is_some_and(|marks| marks.iter().any(|m| m["kind"] == "restarted"))
    })
    .await;
    // The restart, which no recording holds, is on the supervisor lane beside the wire's
    // marks.
    let marks: Vec<(&str, &str)> = overview["supervisor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["kind"].as_str().unwrap(), m["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(marks[0], ("connected", "connection 1"));
    assert!(
        marks.contains(&(
            "restarted",
            "fast_lane restarted (1): the callback failed on \"crash\""
        )),
        "{marks:?}"
    );
    assert_eq!(overview["live"], true);
    assert_eq!(overview["dropped"], 0);
    let events = get_json(&studio, "/api/recordings/support.wire.jsonl/events").await;
    let kinds: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "setup",
            "setupComplete",
            "clientContent",
            "serverContent.text",
            "serverContent.text",
            "serverContent.turnComplete"
        ]
    );

    // The session ends: the studio's copy is no longer live, and it is the session's own
    // recording, byte for byte, journal included.
    tokio::join!(handle.disconnect(), conn.expect_closed());
    drop(handle);
    let list = until(&studio, "/api/recordings", |list| {
        listed(list, "support.wire.jsonl").is_some_and(|r| r["live"] == false)
    })
    .await;
    let info = listed(&list, "support.wire.jsonl").unwrap();
    assert_eq!(info["turns"], 1);
    let recorded = std::fs::read(local.join("support.wire.jsonl")).unwrap();
    assert!(!recorded.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.join("support.wire.jsonl")).unwrap(),
        String::from_utf8(recorded).unwrap()
    );
    let journal = std::fs::read_to_string(local.join("support.journal.jsonl")).unwrap();
    assert!(journal.contains("\"session:turn_count\""), "{journal}");
    assert_eq!(
        std::fs::read_to_string(dir.join("support.journal.jsonl")).unwrap(),
        journal
    );

    // The same name again: a new recording beside the first, never over it.
    let builder = Live::builder()
        .text_only()
        .record_wire(local.join("support.wire.jsonl"))
        .studio(studio.local_addr().to_string())
        .studio_token(studio.token());
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint.clone()), script);
    let handle = handle.unwrap();
    until(&studio, "/api/recordings", |list| {
        listed(list, "support.2.wire.jsonl").is_some_and(|r| r["live"] == true)
    })
    .await;
    tokio::join!(handle.disconnect(), conn.expect_closed());
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_that_is_not_there_or_a_bad_name_stops_the_session_before_it_starts() {
    let local = fresh_dir("refused-local");
    // A port nothing listens on: bind one, then free it.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap().to_string();
    drop(free);
    let server = ScriptedServer::bind().await;
    let error = Live::builder()
        .text_only()
        .record_wire(local.join("call.wire.jsonl"))
        .studio(addr.clone())
        .connect(server.endpoint())
        .await
        .unwrap_err();
    let ConnectError::Studio {
        addr: named,
        reason,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(named, &addr);
    assert!(
        reason.starts_with(&format!(
            "ws://{addr}/api/live?name=call did not answer as a studio:"
        )) && reason.ends_with("is `reel studio` running there?"),
        "{reason}"
    );
    // Nothing was created: the studio is reached before any file.
    assert!(!local.join("call.wire.jsonl").exists());

    let dir = fresh_dir("refused");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let error = Live::builder()
        .text_only()
        .studio_as(studio.local_addr().to_string(), "../escape")
        .connect(server.endpoint())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot stream to the studio at {}: \"../escape\" cannot name a recording: use 1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot",
            studio.local_addr()
        )
    );
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_refuses_bad_feeds_and_keeps_what_came_before_the_garbage() {
    let dir = fresh_dir("bad-feeds");
    std::fs::write(dir.join("keep.wire.jsonl"), "").unwrap();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let base = format!("ws://{}/api/live", studio.local_addr());
    let token = studio.token().to_owned();

    // A name that leads out of the directory: refused before the upgrade.
    let refused = tokio_tungstenite::connect_async(format!("{base}?name=..%2Fout&token={token}"))
        .await
        .unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(response.status(), 400);
    let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
    assert_eq!(
        body["error"],
        "\"../out\" cannot name a recording: use 1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot"
    );
    assert!(!dir.parent().unwrap().join("out.wire.jsonl").exists());

    // Without a WebSocket: refused.
    let plain = get_json(&studio, &format!("/api/live?name=x&token={token}")).await;
    assert_eq!(
        plain["error"],
        "/api/live takes a WebSocket (Upgrade: websocket with a Sec-WebSocket-Key)"
    );

    // One good entry, then garbage: closed 1007 naming the message; the entry stays, in a
    // new file beside the existing one.
    let (mut socket, _) =
        tokio_tungstenite::connect_async(format!("{base}?name=keep&token={token}"))
            .await
            .unwrap();
    let entry = r#"{"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"e30="}"#;
    socket
        .send(Message::text(format!(r#"{{"wire":{entry}}}"#)))
        .await
        .unwrap();
    socket
        .send(Message::text(r#"{"wire":{"seq":"two"}}"#))
        .await
        .unwrap();
    let close = loop {
        match socket.next().await {
            Some(Ok(Message::Close(frame))) => break frame.unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(u16::from(close.code), 1007);
    assert!(
        close
            .reason
            .as_str()
            .starts_with("message 2 is not a live-feed message: invalid type: string \"two\""),
        "{}",
        close.reason
    );
    assert_eq!(std::fs::read(dir.join("keep.wire.jsonl")).unwrap(), b"");
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.2.wire.jsonl")).unwrap(),
        format!("{entry}\n")
    );

    // A feed that carries nothing leaves nothing.
    let (mut socket, _) =
        tokio_tungstenite::connect_async(format!("{base}?name=empty&token={token}"))
            .await
            .unwrap();
    socket.close(None).await.unwrap();
    while socket.next().await.is_some() {}
    until(&studio, "/api/recordings", |list| {
        listed(list, "empty.wire.jsonl").is_none()
    })
    .await;
    assert!(!dir.join("empty.journal.jsonl").exists());
    studio.stop().await;
}
