//! Record and auto modes: a recording proxy in front of an upstream that is itself a
//! replay-mode tape server. The recording's frames equal the tape's; a client that leaves
//! mid-turn still leaves a complete turn; closes pass through; no credential is recorded.

use crate::server_support;

use std::time::Duration;

use reel_protocol::{Credential, Secret};
use reel_recorder::read_wire_log;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_tape_server::{
    CLOSE_UPSTREAM, ConnectionError, End, Outcome, Pace, RunningServer, TapeLibrary, TapeServer,
    Upstream,
};
use server_support::*;

async fn upstream_server(entries: Vec<WireEntry>, pace: Pace) -> RunningServer {
    TapeServer::replay(TapeLibrary::new().with_entries("upstream", entries))
        .pace(pace)
        .start()
        .await
        .unwrap()
}

async fn recorded(proxy: &mut RunningServer) -> (std::path::PathBuf, Vec<WireEntry>, End) {
    let report = proxy.next_report().await.unwrap();
    let Outcome::Recorded { path, end, .. } = report.outcome else {
        panic!("not recorded: {report:?}");
    };
    let entries = read_wire_log(&path).unwrap();
    (path, entries, end)
}

#[tokio::test]
async fn the_recording_equals_the_tape_it_was_recorded_from() {
    let upstream = upstream_server(tape_of(&session()), Pace::AtOnce).await;
    let dir = fresh_dir("record-equal");
    let mut proxy = TapeServer::record(Upstream::new(&upstream.base_url()).unwrap(), &dir)
        .start()
        .await
        .unwrap();

    for n in 1..=2 {
        let mut client = Client::connect(&proxy.live_url()).await;
        client.play(&session()).await;
        client.close().await;
        let report = proxy.next_report().await.unwrap();
        let expected_path = dir.join(format!("gemini-live-2.5-flash-{n}.wire.jsonl"));
        assert_eq!(
            report.outcome,
            Outcome::Recorded {
                path: expected_path.clone(),
                frames_out: 4,
                frames_in: 7,
                end: End::ClientClosed {
                    code: Some(1000),
                    reason: None
                },
            }
        );
        let entries = read_wire_log(&expected_path).unwrap();
        assert_eq!(shape(&entries), shape(&tape_of(&session())));
        let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=12).collect::<Vec<_>>());
        assert!(entries.windows(2).all(|w| w[0].ts_ms <= w[1].ts_ms));
        assert!(entries.iter().all(|e| e.conn.is_none() && !e.binary));
    }

    // The recording replays like the original.
    let mut replay = TapeServer::replay(TapeLibrary::open(&dir).unwrap())
        .start()
        .await
        .unwrap();
    let mut client = Client::connect(&replay.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    assert!(matches!(
        replay.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 4, .. }
    ));
}

#[tokio::test(start_paused = true)]
async fn a_client_leaving_mid_turn_still_leaves_a_complete_turn() {
    // The upstream answers at the recorded pace: 100 ms between frames.
    let upstream = upstream_server(tape_of(&session()), Pace::Recorded { speed: 1.0 }).await;
    let dir = fresh_dir("record-early-leave");
    let mut proxy = TapeServer::record(Upstream::new(&upstream.base_url()).unwrap(), &dir)
        .drain_timeout(Duration::from_secs(10))
        .start()
        .await
        .unwrap();
    let mut client = Client::connect(&proxy.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    assert_eq!(client.texts(1).await, [HI]);
    client.drop_connection();

    let (_, entries, end) = recorded(&mut proxy).await;
    assert!(matches!(end, End::ClientGone { .. }), "{end:?}");
    let text = |s: &str| s.to_owned();
    assert_eq!(
        shape(&entries),
        vec![
            (Direction::Out, text(SETUP), None),
            (Direction::In, text(SETUP_COMPLETE), None),
            (Direction::Out, text(HELLO), None),
            (Direction::In, text(HI), None),
            (Direction::In, text(THERE), None),
            (Direction::In, text(TURN_COMPLETE), None),
            (
                Direction::In,
                String::new(),
                Some(CloseMark {
                    code: None,
                    reason: None,
                    client: true
                })
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_upstream_that_never_finishes_the_turn_is_given_up_after_the_drain_timeout() {
    // The upstream tape stops mid-turn, and the recorded client never closed.
    let mut entries = tape_of(&session()[..2]);
    entries.truncate(4); // setup, setupComplete, hello, "Hi "
    let upstream = upstream_server(entries, Pace::AtOnce).await;
    let dir = fresh_dir("record-drain-timeout");
    let mut proxy = TapeServer::record(Upstream::new(&upstream.base_url()).unwrap(), &dir)
        .drain_timeout(Duration::from_secs(3))
        .start()
        .await
        .unwrap();
    let mut client = Client::connect(&proxy.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    assert_eq!(client.texts(1).await, [HI]);
    let left = tokio::time::Instant::now();
    client.close().await;
    let (_, entries, _) = recorded(&mut proxy).await;
    assert_eq!(left.elapsed(), Duration::from_secs(3));
    assert_eq!(entries.len(), 5);
    assert_eq!(
        entries[4].close,
        Some(CloseMark {
            code: Some(1000),
            reason: None,
            client: true
        })
    );
}

#[tokio::test]
async fn an_upstream_close_reaches_the_client_and_the_recording() {
    let entries = quota_tape();
    let upstream = upstream_server(entries.clone(), Pace::AtOnce).await;
    let dir = fresh_dir("record-upstream-close");
    let mut proxy = TapeServer::record(Upstream::new(&upstream.base_url()).unwrap(), &dir)
        .start()
        .await
        .unwrap();
    let mut client = Client::connect(&proxy.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    assert_eq!(
        client.next().await,
        Seen::Close(Some(1008), "Quota exceeded".into())
    );
    let (_, recorded_entries, end) = recorded(&mut proxy).await;
    assert_eq!(
        end,
        End::ServerClosed {
            code: Some(1008),
            reason: Some("Quota exceeded".into())
        }
    );
    assert_eq!(shape(&recorded_entries), shape(&entries));
}

#[tokio::test]
async fn an_unreachable_upstream_closes_1014_and_records_nothing() {
    // A port that was just free: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dir = fresh_dir("record-unreachable");
    let mut proxy = TapeServer::record(
        Upstream::new(&format!("ws://127.0.0.1:{port}")).unwrap(),
        &dir,
    )
    .start()
    .await
    .unwrap();
    let mut client = Client::connect(&proxy.live_url()).await;
    client.send(SETUP).await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_UPSTREAM),
            "reel: the upstream could not be reached".into()
        )
    );
    let report = proxy.next_report().await.unwrap();
    assert!(
        matches!(
            &report.outcome,
            Outcome::Failed(ConnectionError::Upstream { url, .. })
                if *url == format!("ws://127.0.0.1:{port}{LIVE_PATH}")
        ),
        "{report:?}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[tokio::test]
async fn no_credential_is_recorded_and_the_proxy_presents_its_own() {
    let mut upstream = upstream_server(tape_of(&session()), Pace::AtOnce).await;
    let dir = fresh_dir("record-no-key");
    let mut proxy = TapeServer::record(
        Upstream::new(&upstream.base_url())
            .unwrap()
            .with_credential(Credential::ApiKey(Secret::new("AIzaPROXYSECRET"))),
        &dir,
    )
    .start()
    .await
    .unwrap();
    let url = format!("{}?key=AIzaCLIENTSECRET", proxy.live_url());
    let mut client =
        Client::connect_with_headers(&url, &[("x-goog-api-key", "AIzaHEADERSECRET")]).await;
    client.play(&session()).await;
    client.close().await;
    let report = proxy.next_report().await.unwrap();
    assert_eq!(
        report.path.as_deref(),
        Some(&*format!("{LIVE_PATH}?key=REDACTED"))
    );
    let (path, ..) = match report.outcome {
        Outcome::Recorded { path, .. } => (path, ()),
        other => panic!("{other:?}"),
    };
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("SECRET"), "{file}");
    // The upstream saw the proxy's key (redacted in its report), not the client's.
    let upstream_report = upstream.next_report().await.unwrap();
    assert_eq!(
        upstream_report.path.as_deref(),
        Some(&*format!("{LIVE_PATH}?key=REDACTED"))
    );
}

#[tokio::test]
async fn auto_mode_records_what_no_tape_matches_then_replays_it() {
    let mut upstream = upstream_server(tape_of(&session()), Pace::AtOnce).await;
    let dir = fresh_dir("auto");
    let mut server = TapeServer::auto(
        TapeLibrary::new(),
        Upstream::new(&upstream.base_url()).unwrap(),
        &dir,
    )
    .start()
    .await
    .unwrap();
    assert_eq!(server.recorded_connections(), 0);

    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    let report = server.next_report().await.unwrap();
    let Outcome::Recorded { path, .. } = report.outcome else {
        panic!("{report:?}");
    };
    assert_eq!(path, dir.join("gemini-live-2.5-flash-1.wire.jsonl"));

    // The upstream is gone: the second session can only be a replay of the first.
    upstream.shutdown().await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    let report = server.next_report().await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Replayed {
            tape: path.display().to_string(),
            tape_conn: 1,
            frames: 4,
            end: End::ClientClosed {
                code: Some(1000),
                reason: None
            },
        }
    );
}
