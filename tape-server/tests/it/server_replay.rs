//! Replay mode on real loopback sockets: exact frames back, recorded closes, reconnects
//! picked by their resumption handle, several recordings of one setup, recorded pace.

use crate::server_support;

use std::time::Duration;

use reel_protocol::json::PathDiff;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_tape_server::{
    CLOSE_MISMATCH, CLOSE_NO_TAPE, ClosestTape, ConnectionReport, End, Expected, Incomplete,
    Outcome, Pace, TapeLibrary, TapeServer,
};
use serde_json::json;
use server_support::*;

async fn replay_server(tapes: TapeLibrary) -> reel_tape_server::RunningServer {
    TapeServer::replay(tapes).start().await.unwrap()
}

#[tokio::test]
async fn a_tape_replays_exact_frames_for_each_client_frame() {
    let dir = fresh_dir("replay-exact");
    write_tape(&dir.join("weather.wire.jsonl"), &tape_of(&session()));
    let mut server = replay_server(TapeLibrary::open(&dir).unwrap()).await;
    assert_eq!(server.recorded_connections(), 1);
    assert_eq!(
        server.live_url(),
        format!("ws://{}{LIVE_PATH}", server.local_addr())
    );

    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()).await;
    client.close().await;

    let report = server.next_report().await.unwrap();
    assert_eq!(
        report,
        ConnectionReport {
            conn: 1,
            path: Some(LIVE_PATH.to_owned()),
            test: None,
            outcome: Outcome::Replayed {
                tape: dir.join("weather.wire.jsonl").display().to_string(),
                tape_conn: 1,
                frames: 4,
                end: End::ClientClosed {
                    code: Some(1000),
                    reason: None
                },
            },
        }
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_recorded_server_close_closes_with_its_code_and_reason() {
    let entries = quota_tape();
    let mut server = replay_server(TapeLibrary::new().with_entries("quota", entries)).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    assert_eq!(
        client.next().await,
        Seen::Close(Some(1008), "Quota exceeded".into())
    );
    assert_eq!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed {
            tape: "quota".into(),
            tape_conn: 1,
            frames: 2,
            end: End::ServerClosed {
                code: Some(1008),
                reason: Some("Quota exceeded".into())
            },
        }
    );
}

#[tokio::test]
async fn a_mismatch_closes_4001_and_reports_the_json_path() {
    let mut server = replay_server(TapeLibrary::new().with_entries("t", tape_of(&session()))).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()[..1]).await;
    client
        .send(r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Goodbye"}]}],"turnComplete":true}}"#)
        .await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_MISMATCH),
            "reel: frame 2 does not match the tape at clientContent.turns[0].parts[0].text".into()
        )
    );
    let report = server.next_report().await.unwrap();
    let Outcome::Diverged(mismatch) = &report.outcome else {
        panic!("{report:?}");
    };
    assert_eq!(mismatch.frame, 2);
    assert_eq!(mismatch.tape, "t");
    assert_eq!(
        mismatch.expected,
        Expected::Frame {
            seq: 3,
            diffs: vec![PathDiff {
                path: "clientContent.turns[0].parts[0].text".into(),
                expected: Some(json!("Hello")),
                actual: Some(json!("Goodbye")),
            }],
        }
    );
    assert_eq!(
        report.to_string(),
        "connection 1: client frame 2 does not match t (connection 1, seq 3)\n  \
         clientContent.turns[0].parts[0].text: expected \"Hello\", received \"Goodbye\""
    );
}

#[tokio::test]
async fn a_frame_past_the_end_of_the_tape_closes_4001() {
    let mut server =
        replay_server(TapeLibrary::new().with_entries("t", tape_of(&session()[..1]))).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_MISMATCH),
            "reel: frame 2 is past the end of the tape".into()
        )
    );
    let report = server.next_report().await.unwrap();
    assert!(
        matches!(&report.outcome, Outcome::Diverged(m) if m.expected == Expected::End),
        "{report:?}"
    );
}

#[tokio::test]
async fn no_matching_setup_closes_4004_and_names_the_closest_tape() {
    let mut server = replay_server(TapeLibrary::new().with_entries("t", tape_of(&session()))).await;
    let mut client = Client::connect(&server.live_url()).await;
    client
        .send(&SETUP.replace("gemini-live-2.5-flash", "gemini-2.0-flash-live"))
        .await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_NO_TAPE),
            "reel: no tape matches this setup".into()
        )
    );
    assert_eq!(
        server.next_report().await.unwrap().outcome,
        Outcome::NoTape {
            closest: Some(ClosestTape {
                tape: "t".into(),
                conn: 1,
                diffs: vec![PathDiff {
                    path: "setup.model".into(),
                    expected: Some(json!("models/gemini-live-2.5-flash")),
                    actual: Some(json!("models/gemini-2.0-flash-live")),
                }],
            }),
        }
    );
}

const RESUMABLE_SETUP: &str =
    r#"{"setup":{"model":"models/gemini-live-2.5-flash","sessionResumption":{}}}"#;
const RESUMED_SETUP: &str =
    r#"{"setup":{"model":"models/gemini-live-2.5-flash","sessionResumption":{"handle":"h-2"}}}"#;
const HANDLE: &str = r#"{"sessionResumptionUpdate":{"newHandle":"h-2","resumable":true}}"#;
const GO_AWAY: &str = r#"{"goAway":{"timeLeft":"1s"}}"#;
const WELCOME_BACK: &str =
    r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Welcome back."}]},"turnComplete":true}}"#;

/// A recorded session with a reconnect: connection 1 ends after a goAway, connection 2
/// presents the handle.
fn reconnect_tape() -> Vec<WireEntry> {
    let frame = |seq, dir, payload: &str, conn| {
        WireEntry::frame(
            seq,
            dir,
            T0 + seq * 10,
            payload.as_bytes().to_vec(),
            conn,
            false,
        )
    };
    vec![
        frame(1, Direction::Out, RESUMABLE_SETUP, None),
        frame(2, Direction::In, SETUP_COMPLETE, None),
        frame(3, Direction::In, HANDLE, None),
        frame(4, Direction::In, GO_AWAY, None),
        WireEntry::close_mark(
            5,
            T0 + 50,
            None,
            CloseMark {
                code: None,
                reason: Some("go_away".into()),
                client: true,
            },
        ),
        frame(6, Direction::Out, RESUMED_SETUP, Some(2)),
        frame(7, Direction::In, SETUP_COMPLETE, Some(2)),
        frame(8, Direction::Out, HELLO, Some(2)),
        frame(9, Direction::In, WELCOME_BACK, Some(2)),
    ]
}

#[tokio::test]
async fn a_reconnect_gets_the_connection_that_presented_its_handle() {
    let mut server = replay_server(TapeLibrary::new().with_entries("r", reconnect_tape())).await;
    assert_eq!(server.recorded_connections(), 2);

    let mut first = Client::connect(&server.live_url()).await;
    first.send(RESUMABLE_SETUP).await;
    assert_eq!(first.texts(3).await, [SETUP_COMPLETE, HANDLE, GO_AWAY]);
    first.close().await;

    let mut second = Client::connect(&server.live_url()).await;
    second.send(RESUMED_SETUP).await;
    assert_eq!(second.texts(1).await, [SETUP_COMPLETE]);
    second.send(HELLO).await;
    assert_eq!(second.texts(1).await, [WELCOME_BACK]);
    second.close().await;

    let reports = [
        server.next_report().await.unwrap(),
        server.next_report().await.unwrap(),
    ];
    assert!(
        matches!(
            &reports[0].outcome,
            Outcome::Replayed {
                tape_conn: 1,
                frames: 1,
                ..
            }
        ),
        "{reports:?}"
    );
    assert!(
        matches!(
            &reports[1].outcome,
            Outcome::Replayed {
                tape_conn: 2,
                frames: 2,
                ..
            }
        ),
        "{reports:?}"
    );
}

#[tokio::test]
async fn recordings_of_one_setup_are_told_apart_by_the_client_frames() {
    let other_turn = r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Bonjour"}]}],"turnComplete":true}}"#;
    let salut =
        r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Salut !"}]},"turnComplete":true}}"#;
    let french = vec![
        Exchange {
            client: SETUP,
            server: vec![SETUP_COMPLETE],
        },
        Exchange {
            client: other_turn,
            server: vec![salut],
        },
    ];
    let library = TapeLibrary::new()
        .with_entries("english", tape_of(&session()))
        .with_entries("french", tape_of(&french));
    let mut server = replay_server(library).await;

    let mut client = Client::connect(&server.live_url()).await;
    client.play(&french).await;
    client.close().await;
    assert!(
        matches!(&server.next_report().await.unwrap().outcome, Outcome::Replayed { tape, frames: 2, .. } if tape == "french")
    );

    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    assert!(
        matches!(&server.next_report().await.unwrap().outcome, Outcome::Replayed { tape, frames: 4, .. } if tape == "english")
    );
}

#[tokio::test(start_paused = true)]
async fn recorded_pace_is_scaled_by_the_speed() {
    let mut server = TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
        .pace(Pace::Recorded { speed: 2.0 })
        .start()
        .await
        .unwrap();
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&session()[..1]).await;
    client.send(HELLO).await;
    // Entries are 100 ms apart in the recording: 50 ms apart at speed 2.
    let start = tokio::time::Instant::now();
    let mut arrivals = Vec::new();
    for expected in [HI, THERE, TURN_COMPLETE] {
        assert_eq!(client.next().await, Seen::Text(expected.to_owned()));
        arrivals.push(start.elapsed());
    }
    assert_eq!(
        arrivals,
        [
            Duration::from_millis(50),
            Duration::from_millis(100),
            Duration::from_millis(150)
        ]
    );
    client.close().await;
    // Two of the tape's four client frames: the session ended early, and says so.
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Incomplete(Incomplete {
            frames: 2,
            total: 4,
            ..
        })
    ));
}

#[tokio::test]
async fn binary_frames_replay_as_binary() {
    let entries = vec![
        WireEntry::frame(1, Direction::Out, T0, SETUP.as_bytes().to_vec(), None, true),
        WireEntry::frame(
            2,
            Direction::In,
            T0 + 1,
            SETUP_COMPLETE.as_bytes().to_vec(),
            None,
            true,
        ),
    ];
    let mut server = replay_server(TapeLibrary::new().with_entries("vertex", entries)).await;
    let url = server.vertex_url();
    assert!(
        url.ends_with("/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent")
    );
    let mut client = Client::connect(&url).await;
    client.send_binary(SETUP.as_bytes()).await;
    assert_eq!(
        client.next().await,
        Seen::Binary(SETUP_COMPLETE.as_bytes().to_vec())
    );
    client.close().await;
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 1, .. }
    ));
}
