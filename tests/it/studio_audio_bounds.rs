//! Issue 25, §4: the studio's `audio.wav` renders in bounded memory. A log whose timestamp
//! jumps (one edited `ts_ms`, or `u64::MAX`) grew the studio's in-memory WAV to 4 GB and
//! aborted the process; now the jump is refused with its place before any silence is held.

use reel::studio::call::audio;
use reel_protocol::Base64Data;
use reel_recorder::wire_log::{Direction, WireEntry};

fn audio_line(seq: u64, ts_ms: u64) -> String {
    let pcm: Vec<u8> = [500i16; 240].iter().flat_map(|s| s.to_le_bytes()).collect();
    let payload = format!(
        r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{}"}}}}]}}}}}}"#,
        Base64Data(pcm.into()).encode()
    );
    let entry = WireEntry::frame(seq, Direction::In, ts_ms, payload.into_bytes(), None, false);
    serde_json::to_string(&entry).unwrap()
}

#[test]
fn a_timestamp_jump_is_refused_with_its_place_not_rendered_into_memory() {
    let dir = std::env::temp_dir().join(format!("reel-studio-audio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let setup = WireEntry::frame(
        1,
        Direction::Out,
        1_000,
        &br#"{"setup":{}}"#[..],
        None,
        false,
    );
    for jump in [u64::MAX, 1_000 + 24 * 3_600_000] {
        let log = dir.join("jump.wire.jsonl");
        let lines = [
            serde_json::to_string(&setup).unwrap(),
            audio_line(2, 1_000),
            audio_line(3, jump),
        ];
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        assert_eq!(
            audio(&log).unwrap_err(),
            format!(
                "entry seq 3: its ts_ms jumps {} ms past the entries before it, over the \
                 1800000 ms of silence a WAV renders; the log's timestamps are damaged",
                jump - 1_000
            )
        );
    }
    // The same log without the jump plays its two chunks in sequence.
    let log = dir.join("paced.wire.jsonl");
    let lines = [
        serde_json::to_string(&setup).unwrap(),
        audio_line(2, 1_000),
        audio_line(3, 1_010),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    assert_eq!(audio(&log).unwrap().len(), 44 + 480 * 4);
    std::fs::remove_dir_all(&dir).unwrap();
}
