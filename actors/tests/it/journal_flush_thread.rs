//! Where a session's journal is flushed when it ends: on tokio's blocking pool when the
//! sink's flush may block (a file, a writer thread), right where the session runs when it
//! cannot (a journal in memory, as a replay keeps). A replay farm paid a hand-over to a
//! pool thread and back for every session's end before.

use crate::support;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use reel_actors::testing::ScriptedServer;
use reel_protocol::SessionConfig;
use reel_recorder::journal::{JournalSink, StateMutation};
use support::start;

/// A sink that notes the thread of each flush, and says whether its flush blocks.
struct FlushThreads {
    blocks: bool,
    flushed_on: Mutex<Vec<ThreadId>>,
    recorded: Mutex<Vec<String>>,
}

impl JournalSink for FlushThreads {
    fn record(&self, mutation: &StateMutation) {
        self.recorded.lock().unwrap().push(mutation.key.clone());
    }

    fn flush(&self) {
        self.flushed_on
            .lock()
            .unwrap()
            .push(std::thread::current().id());
    }

    fn flush_blocks(&self) -> bool {
        self.blocks
    }
}

/// Runs a session that writes one key and ends; returns the sink and the test's thread
/// (the session's: a current-thread runtime).
async fn session_with(blocks: bool) -> (Arc<FlushThreads>, ThreadId) {
    let mut server = ScriptedServer::bind().await;
    let sink = Arc::new(FlushThreads {
        blocks,
        flushed_on: Mutex::default(),
        recorded: Mutex::default(),
    });
    let journal: Arc<dyn JournalSink> = sink.clone();
    let (handle, mut conn, _setup, _events) = start(
        &mut server,
        |b| b.journal_sink(journal),
        SessionConfig::default(),
    )
    .await;
    handle.state().set("app:answer", 42).await.unwrap();
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed, "{}", end.reason);
    (sink, std::thread::current().id())
}

#[tokio::test(start_paused = true)]
async fn a_journal_whose_flush_cannot_block_is_flushed_where_the_session_runs() {
    let (sink, here) = session_with(false).await;
    assert!(
        sink.recorded
            .lock()
            .unwrap()
            .contains(&"app:answer".to_owned())
    );
    let flushed_on = sink.flushed_on.lock().unwrap().clone();
    // Every flush of the end: the supervisor's final write, and those of the children that
    // stopped rather than being aborted (how many did depends on the machine).
    assert!(!flushed_on.is_empty());
    assert_eq!(flushed_on, vec![here; flushed_on.len()]);
}

#[tokio::test(start_paused = true)]
async fn a_journal_whose_flush_may_block_is_flushed_off_the_session_thread() {
    let (sink, here) = session_with(true).await;
    let flushed_on = sink.flushed_on.lock().unwrap().clone();
    assert!(!flushed_on.is_empty());
    assert!(
        flushed_on.iter().all(|thread| *thread != here),
        "every flush ran on the blocking pool, none on the session's thread"
    );
}
