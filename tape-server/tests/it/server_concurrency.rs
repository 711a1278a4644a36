//! Many clients at once against one server: each gets its exact frames, and bad clients
//! (garbage frames, bytes that are not HTTP, an oversize frame, a drop mid-session) end only
//! their own connection.

use crate::server_support;

use std::sync::Arc;

use reel_tape_server::{
    CLOSE_INVALID_FRAME, CLOSE_TOO_LARGE, Incomplete, Outcome, TapeLibrary, TapeServer,
};
use server_support::*;
use tokio::io::AsyncWriteExt;
use tokio::sync::Barrier;

const CLIENTS: usize = 20;
const GARBAGE_CLIENT: usize = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_clients_get_their_exact_frames_despite_a_bad_one() {
    let mut server = TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
        .max_frame_bytes(64 * 1024)
        .start()
        .await
        .unwrap();
    let url = server.live_url();
    // Every client is connected and has its setup answered before any goes on.
    let barrier = Arc::new(Barrier::new(CLIENTS + 2));
    let mut clients = Vec::new();
    for n in 0..CLIENTS {
        let url = url.clone();
        let barrier = barrier.clone();
        clients.push(tokio::spawn(async move {
            let mut client = Client::connect(&url).await;
            client.play(&session()[..1]).await;
            barrier.wait().await;
            if n == GARBAGE_CLIENT {
                client.send("\u{0}\u{1}garbage{{{").await;
                return client.next().await;
            }
            client.play(&session()[1..]).await;
            client.close().await;
            Seen::End
        }));
    }
    // An oversize frame, mid-session.
    let oversize = {
        let url = url.clone();
        let barrier = barrier.clone();
        tokio::spawn(async move {
            let mut client = Client::connect(&url).await;
            client.play(&session()[..1]).await;
            barrier.wait().await;
            client.send(&"x".repeat(100 * 1024)).await;
            client.next().await
        })
    };
    // A client that drops mid-session, without a close frame.
    let dropper = {
        let url = url.clone();
        let barrier = barrier.clone();
        tokio::spawn(async move {
            let mut client = Client::connect(&url).await;
            client.play(&session()[..1]).await;
            barrier.wait().await;
            client.drop_connection();
        })
    };
    // Bytes that are not an HTTP request at all.
    let mut raw = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    raw.write_all(b"\x16\x03\x01 definitely not http\r\n\r\n")
        .await
        .unwrap();
    drop(raw);

    for (n, client) in clients.into_iter().enumerate() {
        let seen = client.await.unwrap();
        if n == GARBAGE_CLIENT {
            assert_eq!(
                seen,
                Seen::Close(
                    Some(CLOSE_INVALID_FRAME),
                    "reel: frame 2 is not a Live client frame".into()
                )
            );
        } else {
            assert_eq!(seen, Seen::End, "client {n}");
        }
    }
    assert_eq!(
        oversize.await.unwrap(),
        Seen::Close(
            Some(CLOSE_TOO_LARGE),
            "reel: frame over the 65536-byte limit".into()
        )
    );
    dropper.await.unwrap();

    let mut replayed = 0;
    let mut invalid = 0;
    let mut too_large = 0;
    let mut gone = 0;
    let mut handshake_failed = 0;
    let mut conns = Vec::new();
    for _ in 0..CLIENTS + 3 {
        let report = server.next_report().await.unwrap();
        conns.push(report.conn);
        match report.outcome {
            Outcome::Replayed { frames: 4, .. } => replayed += 1,
            // The dropper left after its setup: the session ended early.
            Outcome::Incomplete(Incomplete {
                frames: 1,
                total: 4,
                last_matched_seq: 1,
                ..
            }) => gone += 1,
            Outcome::InvalidFrame { frame: 2, .. } => invalid += 1,
            Outcome::TooLarge {
                size: 102_400,
                limit: 65_536,
            } => too_large += 1,
            // Not HTTP: answered 400 with the reason, before any handshake.
            Outcome::Refused {
                status: 400,
                ref reason,
            } if reason == "reel: not an HTTP request (invalid token)" => handshake_failed += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(
        (replayed, invalid, too_large, gone, handshake_failed),
        (CLIENTS - 1, 1, 1, 1, 1)
    );
    conns.sort_unstable();
    assert_eq!(conns, (1..=(CLIENTS as u64 + 3)).collect::<Vec<_>>());
    server.shutdown().await;
}
