//! Connection reports under a burst: more connections end than [`REPORT_BACKLOG`] reports
//! can wait unread. A server that keeps every report makes the late ones wait for the
//! reader (and its shutdown does not wait on a reader that waits for it); by default the
//! late ones are dropped, and counted.

use std::collections::BTreeSet;
use std::time::Duration;

use reel_tape_server::{REPORT_BACKLOG, RunningServer, TapeLibrary, TapeServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Connections past the backlog.
const PAST: usize = 76;

async fn server(keep_every_report: bool) -> RunningServer {
    TapeServer::replay(TapeLibrary::new())
        .keep_every_report(keep_every_report)
        .start()
        .await
        .unwrap()
}

/// `count` plain HTTP requests for a path nothing serves, one after another, each answered
/// (404) before the next; nobody reads the reports meanwhile.
async fn requests_for_nothing(server: &RunningServer, count: usize) {
    for _ in 0..count {
        let mut tcp = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        tcp.write_all(b"GET /nothing HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 Not Found\r\n"), "{answer}");
    }
}

/// The connection numbers of every report that can be read now.
fn reports_now(server: &mut RunningServer) -> BTreeSet<u64> {
    std::iter::from_fn(|| server.try_next_report())
        .map(|report| report.conn)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_keeping_every_report_loses_none_of_a_burst_and_still_shuts_down() {
    let mut server = server(true).await;
    let total = REPORT_BACKLOG + PAST;
    requests_for_nothing(&server, total).await;
    // The last connections wait for room for their reports; the shutdown takes the reports
    // while it waits for them, so it ends.
    tokio::time::timeout(Duration::from_secs(60), server.shutdown())
        .await
        .expect("the shutdown ends while reports wait for room");
    let conns = reports_now(&mut server);
    assert_eq!(conns, (1..=total as u64).collect::<BTreeSet<_>>());
    assert_eq!(server.dropped_reports(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_reports_past_the_backlog_are_dropped_and_counted() {
    let mut server = server(false).await;
    requests_for_nothing(&server, REPORT_BACKLOG + PAST).await;
    // Each report is sent after its answer: wait until every connection has sent or
    // dropped its own (a bound only for a test that would otherwise hang).
    tokio::time::timeout(Duration::from_secs(60), async {
        while server.dropped_reports() < PAST as u64 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the reports past the backlog are counted");
    assert_eq!(server.dropped_reports(), PAST as u64);
    assert_eq!(reports_now(&mut server).len(), REPORT_BACKLOG);
}
