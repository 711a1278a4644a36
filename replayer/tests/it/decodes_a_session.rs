//! How many times a replay decodes the client frames of a session: the cost a replay farm
//! pays per session (issue 32 item 5). The weather tape has 7 client frames: its setup
//! (627 bytes with a tool's schema), a tool response, two context updates and three frames
//! the application sent. Each is decoded where a question needs its content, once per
//! reader of the log: the scan (the setup that configures the session, the recorded tool
//! answers) and the tape reader (the setup it compares, what a runtime frame is and what it
//! answers, the application's frames it replays). A frame's kind alone is read from its
//! top-level key, without a decode.

use std::path::Path;

use reel_protocol::client_decodes_on_this_thread;
use reel_recorder::wire_log::WireEntry;
use reel_recorder::wire_read::read_wire_log;
use reel_replayer::offline::{OfflineSinks, replay_offline};
use reel_replayer::{Tape, TapeScan};

fn weather() -> Vec<WireEntry> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/tapes/weather.wire.jsonl");
    read_wire_log(path).expect("the bundled weather tape reads")
}

/// A current-thread runtime (the test's): the scan, the tape reader and the tree all run on
/// this thread, whose decodes the counter counts.
#[tokio::test]
async fn a_replayed_weather_session_decodes_its_client_frames_nine_times() {
    let entries = weather();
    let before = client_decodes_on_this_thread();
    let scan = TapeScan::new();
    for entry in &entries {
        scan.observe(entry);
    }
    scan.end();
    let setup = scan.setup().await.expect("the tape has a setup");
    let replay = replay_offline(
        Tape::from_entries(entries),
        setup,
        scan.tool_callbacks(),
        OfflineSinks::default(),
    )
    .await
    .expect("the replay runs");
    let decodes = client_decodes_on_this_thread() - before;
    assert_eq!(replay.divergences, []);
    assert_eq!(replay.summary.turns.len(), 4);
    // The scan: the setup once, the tool response once. The tape reader: the setup it
    // compares with its own, the tool response and the two context updates once each, the
    // three application frames once each. Before issue 32 item 5's cut: 21.
    assert_eq!(decodes, 2 + (1 + 1 + 2 + 3));
}
