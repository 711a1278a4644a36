//! The tape server as a CI fixture: per-test tapes named by a header or query parameter,
//! `once` (record a test only when it has no tape, then replay it strictly), `passthrough`,
//! redaction of what is recorded, `/healthz`, bad test names, and the JSON reports. The
//! upstream is itself a replay-mode tape server on loopback, so "calling the API" is
//! visible: it is shut down where nothing may reach it.

use crate::server_support;

use std::io::{Read, Write};

use reel_recorder::read_wire_log;
use reel_recorder::redact::{RedactAction, RedactionRule, Redactor};
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_tape_server::{
    CLOSE_BAD_REQUEST, CLOSE_NO_TAPE, End, Outcome, Pace, RunningServer, TapeLibrary, TapeServer,
    TestNameError, Upstream,
};
use serde_json::{Value, json};
use server_support::*;

async fn upstream_server(entries: Vec<WireEntry>) -> RunningServer {
    TapeServer::replay(TapeLibrary::new().with_entries("upstream", entries))
        .pace(Pace::AtOnce)
        .start()
        .await
        .unwrap()
}

fn closed_by_client() -> End {
    End::ClientClosed {
        code: Some(1000),
        reason: None,
    }
}

/// Plays the whole session as test `test` (by header) and closes.
async fn play_as(server: &RunningServer, test: &str) {
    let mut client =
        Client::connect_with_headers(&server.live_url(), &[("x-reel-test", test)]).await;
    client.play(&session()).await;
    client.close().await;
}

/// Sends the setup as test `test` and returns what the server did next.
async fn setup_as(server: &RunningServer, test: &str) -> Seen {
    let mut client =
        Client::connect_with_headers(&server.live_url(), &[("x-reel-test", test)]).await;
    client.send(SETUP).await;
    client.next().await
}

#[tokio::test]
async fn a_tests_session_is_recorded_under_its_name_and_replayed_only_to_it() {
    let upstream = upstream_server(tape_of(&session())).await;
    let dir = fresh_dir("fixture-auto");
    let mut server = TapeServer::auto(
        TapeLibrary::new(),
        Upstream::new(&upstream.base_url()).unwrap(),
        &dir,
    )
    .start()
    .await
    .unwrap();

    play_as(&server, "test_weather").await;
    let report = server.next_report().await.unwrap();
    assert_eq!(report.test.as_deref(), Some("test_weather"));
    assert_eq!(
        report.outcome,
        Outcome::Recorded {
            path: dir.join("test_weather.wire.jsonl"),
            frames_out: 4,
            frames_in: 7,
            end: closed_by_client(),
        }
    );

    // The same setup under another test's name is not that test's tape: it is recorded.
    play_as(&server, "test other/one").await;
    let report = server.next_report().await.unwrap();
    assert_eq!(report.test.as_deref(), Some("test_other_one"));
    assert!(
        matches!(&report.outcome, Outcome::Recorded { path, .. } if *path == dir.join("test_other_one.wire.jsonl")),
        "{report:?}"
    );

    // The first test again: its own tape, replayed, with the upstream gone.
    drop(upstream);
    play_as(&server, "test_weather").await;
    let report = server.next_report().await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Replayed {
            tape: dir.join("test_weather.wire.jsonl").display().to_string(),
            tape_conn: 1,
            frames: 4,
            end: closed_by_client(),
        }
    );
}

#[tokio::test]
async fn once_records_a_test_without_a_tape_then_only_replays_it() {
    let dir = fresh_dir("fixture-once");
    {
        let upstream = upstream_server(tape_of(&session())).await;
        let mut server = TapeServer::once(
            TapeLibrary::new(),
            Upstream::new(&upstream.base_url()).unwrap(),
            &dir,
        )
        .start()
        .await
        .unwrap();
        // No tape for the test: recorded; a second connection of the same run too.
        play_as(&server, "t1").await;
        let first = server.next_report().await.unwrap();
        play_as(&server, "t1").await;
        let second = server.next_report().await.unwrap();
        assert!(
            matches!(&first.outcome, Outcome::Recorded { path, .. } if *path == dir.join("t1.wire.jsonl")),
            "{first:?}"
        );
        assert!(
            matches!(&second.outcome, Outcome::Recorded { path, .. } if *path == dir.join("t1.2.wire.jsonl")),
            "{second:?}"
        );
    }

    // The next run: t1 has tapes, so it only replays. The upstream is unreachable: a miss
    // cannot turn into a call.
    let unreachable = Upstream::new("ws://127.0.0.1:9").unwrap();
    let mut server = TapeServer::once(TapeLibrary::open(&dir).unwrap(), unreachable, &dir)
        .start()
        .await
        .unwrap();
    play_as(&server, "t1").await;
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 4, .. }
    ));
    // A changed setup: refused, named, not recorded.
    let changed = SETUP.replace("gemini-live-2.5-flash", "gemini-live-3");
    let mut client =
        Client::connect_with_headers(&server.live_url(), &[("x-reel-test", "t1")]).await;
    client.send(&changed).await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_NO_TAPE),
            "reel: no tape of test t1 matches this setup".into()
        )
    );
    let report = server.next_report().await.unwrap();
    assert!(
        matches!(&report.outcome, Outcome::NoTape { closest: Some(c) } if c.diffs[0].path == "setup.model"),
        "{report:?}"
    );
    // A test whose tapes are missing, in a directory that has some: recorded through the
    // upstream, which here cannot be reached, so the client learns it at once.
    assert!(matches!(
        setup_as(&server, "t2").await,
        Seen::Close(Some(1011), _)
    ));
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
}

#[tokio::test]
async fn replay_names_a_test_without_tapes_in_its_close_reason() {
    let dir = fresh_dir("fixture-replay");
    write_tape(&dir.join("t1.wire.jsonl"), &tape_of(&session()));
    let mut server = TapeServer::replay(TapeLibrary::open(&dir).unwrap())
        .start()
        .await
        .unwrap();
    assert_eq!(
        setup_as(&server, "t9").await,
        Seen::Close(Some(CLOSE_NO_TAPE), "reel: test t9 has no tape".into())
    );
    let report = server.next_report().await.unwrap();
    assert_eq!(report.test.as_deref(), Some("t9"));
    // The query parameter names a test too (for clients that cannot set headers).
    let url = format!("{}?reel_test=t1", server.live_url());
    let mut client = Client::connect(&url).await;
    client.play(&session()).await;
    client.close().await;
    let report = server.next_report().await.unwrap();
    assert_eq!(report.test.as_deref(), Some("t1"));
    assert!(matches!(report.outcome, Outcome::Replayed { .. }));
}

#[tokio::test]
async fn a_test_name_that_cannot_name_a_file_is_refused_with_4400() {
    let dir = fresh_dir("fixture-bad-name");
    write_tape(&dir.join("t1.wire.jsonl"), &tape_of(&session()));
    let mut server = TapeServer::replay(TapeLibrary::open(&dir).unwrap())
        .start()
        .await
        .unwrap();
    assert_eq!(
        setup_as(&server, "..").await,
        Seen::Close(
            Some(CLOSE_BAD_REQUEST),
            "reel: bad test name: the test name `..` is only dots".into()
        )
    );
    let report = server.next_report().await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::BadTestName(TestNameError::OnlyDots { name: "..".into() })
    );
    let value = report.to_json();
    assert_eq!(value["outcome"], "bad_test_name");
    assert_eq!(
        value["close"],
        json!({"by": "server", "code": 4400, "reason": "reel: bad test name: the test name `..` is only dots"})
    );
    // Header and query naming two different tests.
    let url = format!("{}?reel_test=b", server.live_url());
    let mut client = Client::connect_with_headers(&url, &[("x-reel-test", "a")]).await;
    client.send(SETUP).await;
    assert!(matches!(client.next().await, Seen::Close(Some(4400), _)));
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::BadTestName(TestNameError::Conflict { .. })
    ));
}

#[tokio::test]
async fn passthrough_forwards_every_frame_and_writes_nothing() {
    let upstream = upstream_server(tape_of(&session())).await;
    let mut server = TapeServer::passthrough(Upstream::new(&upstream.base_url()).unwrap())
        .start()
        .await
        .unwrap();
    play_as(&server, "t1").await;
    let report = server.next_report().await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Forwarded {
            frames_out: 4,
            frames_in: 7,
            end: closed_by_client(),
        }
    );
    assert_eq!(
        report.to_json()["frames_in"],
        json!(7),
        "{}",
        report.to_json()
    );
}

#[tokio::test]
async fn what_is_recorded_is_redacted_and_the_client_sees_it_as_it_was() {
    let upstream = upstream_server(tape_of(&session())).await;
    let dir = fresh_dir("fixture-redact");
    let redactor = Redactor::new([
        RedactionRule::new(
            "serverContent.modelTurn.parts[*].text",
            RedactAction::Replace(json!("<text>")),
        ),
        RedactionRule::new(
            "toolResponse.functionResponses[*].response.temp_c",
            RedactAction::Remove,
        ),
    ])
    .unwrap();
    let mut server = TapeServer::record(Upstream::new(&upstream.base_url()).unwrap(), &dir)
        .redact(redactor)
        .start()
        .await
        .unwrap();
    // `play` checks every server frame the client gets against the unredacted session.
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    let Outcome::Recorded { path, .. } = server.next_report().await.unwrap().outcome else {
        panic!("not recorded");
    };
    let payloads: Vec<(Direction, String)> = read_wire_log(&path)
        .unwrap()
        .into_iter()
        .filter(|e| e.close.is_none())
        .map(|e| (e.dir, String::from_utf8(e.payload.to_vec()).unwrap()))
        .collect();
    let redacted_text = r#"{"serverContent":{"modelTurn":{"parts":[{"text":"<text>"}]}}}"#;
    let out = |s: &str| (Direction::Out, s.to_owned());
    let inn = |s: &str| (Direction::In, s.to_owned());
    assert_eq!(
        payloads,
        [
            out(SETUP),
            inn(SETUP_COMPLETE),
            out(HELLO),
            inn(redacted_text),
            inn(redacted_text),
            inn(TURN_COMPLETE),
            out(WEATHER),
            inn(TOOL_CALL),
            out(
                r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{}}]}}"#
            ),
            inn(redacted_text),
            inn(DONE),
        ]
    );
}

#[tokio::test]
async fn healthz_answers_200_with_the_mode_and_makes_no_report() {
    let dir = fresh_dir("fixture-health");
    write_tape(&dir.join("t1.wire.jsonl"), &tape_of(&session()));
    let mut server = TapeServer::replay(TapeLibrary::open(&dir).unwrap())
        .start()
        .await
        .unwrap();
    let addr = server.local_addr();
    let answer = tokio::task::spawn_blocking(move || {
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        tcp.read_to_string(&mut text).unwrap();
        text
    })
    .await
    .unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({"status": "ok", "mode": "replay", "recorded_connections": 1, "recorded_rest_calls": 0})
    );
    // No report for the health check: the next one is the next session's.
    play_as(&server, "t1").await;
    assert_eq!(server.next_report().await.unwrap().conn, 2);
}

#[tokio::test]
async fn a_replayed_report_in_json_says_what_a_runner_needs() {
    let dir = fresh_dir("fixture-json");
    write_tape(&dir.join("t1.wire.jsonl"), &tape_of(&session()));
    let mut server = TapeServer::replay(TapeLibrary::open(&dir).unwrap())
        .start()
        .await
        .unwrap();
    play_as(&server, "t1").await;
    let report = server.next_report().await.unwrap();
    let tape = dir.join("t1.wire.jsonl").display().to_string();
    assert_eq!(
        report.to_json(),
        json!({
            "event": "connection",
            "conn": 1,
            "path": LIVE_PATH,
            "test": "t1",
            "outcome": "replayed",
            "tape": tape,
            "tape_conn": 1,
            "frames_matched": 4,
            "close": {"by": "client", "code": 1000, "reason": null},
            "message": format!("connection 1 (test t1): replayed {tape} (connection 1): 4 client frames matched; the client closed 1000"),
        })
    );
}
