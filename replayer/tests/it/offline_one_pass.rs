//! An offline replay that reads its log once: the tape's reader gathers the setup and the
//! recorded tool responses as it reads ([`TapeScan`]), so a tool call waits until the
//! reader has come to its response, which may be far past the read-ahead (audio keeps
//! streaming while the tool runs). Each replay here is compared with the same log replayed
//! from memory with every response known up front.

use std::path::Path;
use std::sync::Arc;

use reel_recorder::wire_log::{Direction, WireEntry};
use reel_recorder::wire_read::read_wire_log;
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::{OfflineReplay, OfflineSinks, replay_offline};
use reel_replayer::recorded_tools::RecordedToolResponses;
use reel_replayer::replay_transport::CONSUMED_WINDOW;
use reel_replayer::tape::READ_AHEAD;
use reel_replayer::{Tape, TapeScan};

/// Audio chunks streamed while the weather tape's tool runs: past the reader's read-ahead
/// and the replay's consumption window together.
const STREAMED: usize = 2 * (READ_AHEAD + CONSUMED_WINDOW);

fn weather() -> Vec<WireEntry> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/tapes/weather.wire.jsonl");
    read_wire_log(path).expect("the bundled weather tape reads")
}

fn audio(ts_ms: u64) -> WireEntry {
    let payload = r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAAAA=="}}]}}}"#;
    WireEntry::frame(0, Direction::In, ts_ms, payload.as_bytes(), None, false)
}

fn server(ts_ms: u64, payload: &str) -> WireEntry {
    WireEntry::frame(
        0,
        Direction::In,
        ts_ms,
        payload.as_bytes().to_vec(),
        None,
        false,
    )
}

fn is_tool_call(entry: &WireEntry) -> bool {
    entry.payload.starts_with(b"{\"toolCall\"")
}

/// `entries` with `insert` put right after the tool call, numbered again.
fn with_after_call(entries: Vec<WireEntry>, insert: Vec<WireEntry>) -> Vec<WireEntry> {
    let at = entries
        .iter()
        .position(is_tool_call)
        .expect("the weather tape calls a tool")
        + 1;
    let mut out = entries;
    out.splice(at..at, insert);
    for (i, entry) in out.iter_mut().enumerate() {
        entry.seq = i as u64 + 1;
    }
    out
}

/// Replays `entries` read once through a streamed tape and a scan.
async fn replay_streamed(entries: Vec<WireEntry>) -> (LogStats, OfflineReplay) {
    let scan = TapeScan::new();
    let observer = Arc::clone(&scan);
    let ender = Arc::clone(&scan);
    let source = entries
        .into_iter()
        .inspect(move |entry| observer.observe(entry))
        .chain(std::iter::from_fn(move || {
            ender.end();
            None
        }));
    let tape = Tape::streamed("streamed", source).expect("the reader thread starts");
    scan.attach(tape.read_ahead().expect("a streamed tape reads ahead"));
    let setup = scan.setup().await.expect("the tape has a setup");
    let replay = replay_offline(tape, setup, scan.tool_callbacks(), OfflineSinks::default())
        .await
        .expect("the replay runs");
    (scan.stats().await, replay)
}

/// Replays `entries` from memory, every response and the statistics gathered first.
async fn replay_from_memory(entries: Vec<WireEntry>) -> (LogStats, OfflineReplay) {
    let mut stats = LogStats::new();
    let mut answers = RecordedToolResponses::new();
    for entry in &entries {
        stats.observe(entry);
        answers.observe(entry);
    }
    let setup = stats.setup.clone().expect("the tape has a setup");
    let replay = replay_offline(
        Tape::from_entries(entries),
        setup,
        answers.into_control_callbacks(),
        OfflineSinks::default(),
    )
    .await
    .expect("the replay runs");
    (stats, replay)
}

fn assert_same(streamed: &(LogStats, OfflineReplay), memory: &(LogStats, OfflineReplay)) {
    assert_eq!(streamed.0, memory.0);
    let (a, b) = (&streamed.1, &memory.1);
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.runtime_frames, b.runtime_frames);
    assert_eq!(a.divergences, b.divergences);
    assert_eq!(a.taken_from_recording, b.taken_from_recording);
    assert_eq!(a.journal, b.journal);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_far_past_the_read_ahead_answers_its_call() {
    let streamed: Vec<WireEntry> = (0..STREAMED as u64)
        .map(|i| audio(1_748_768_400_540 + i))
        .collect();
    let entries = with_after_call(weather(), streamed);
    let response_seq = entries
        .iter()
        .find(|e| e.dir == Direction::Out && e.payload.starts_with(b"{\"toolResponse\""))
        .map(|e| e.seq)
        .expect("the response is recorded");
    assert_eq!(response_seq, 11 + STREAMED as u64);

    let one_pass = replay_streamed(entries.clone()).await;
    let (stats, replay) = &one_pass;
    assert_eq!(stats.inbound, 15 + STREAMED as u64);
    assert!(replay.divergences.is_empty(), "{:?}", replay.divergences);
    let answered: Vec<(Option<u64>, bool)> = replay
        .runtime_frames
        .iter()
        .filter(|f| f.bytes.starts_with(b"{\"toolResponse\""))
        .map(|f| (f.recorded_seq, f.identical))
        .collect();
    assert_eq!(answered, [(Some(response_seq), true)]);
    let tool_turn = &replay.summary.turns[1];
    assert_eq!(tool_turn.tool_calls.len(), 1);
    assert!(
        tool_turn.counts().contains(&format!("audio×{STREAMED}")),
        "{}",
        tool_turn.counts()
    );
    assert_same(&one_pass, &replay_from_memory(entries).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_far_on_gets_no_answer_and_holds_nothing_up() {
    let mut inserted: Vec<WireEntry> = (0..STREAMED as u64)
        .map(|i| audio(1_748_768_400_540 + i))
        .collect();
    inserted.push(server(
        1_748_768_400_600,
        r#"{"toolCallCancellation":{"ids":["fc-1"]}}"#,
    ));
    let entries: Vec<WireEntry> = with_after_call(weather(), inserted)
        .into_iter()
        .filter(|e| !(e.dir == Direction::Out && e.payload.starts_with(b"{\"toolResponse\"")))
        .enumerate()
        .map(|(i, e)| WireEntry {
            seq: i as u64 + 1,
            ..e
        })
        .collect();

    let one_pass = replay_streamed(entries.clone()).await;
    let replay = &one_pass.1;
    assert!(replay.divergences.is_empty(), "{:?}", replay.divergences);
    assert!(
        !replay
            .runtime_frames
            .iter()
            .any(|f| f.bytes.starts_with(b"{\"toolResponse\"")),
        "a cancelled call is not answered"
    );
    assert_same(&one_pass, &replay_from_memory(entries).await);
}
