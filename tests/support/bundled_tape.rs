//! Keeping a bundled tape current: the tape is what reel records today, compared byte for
//! byte, and rewritten instead when `REEL_BLESS` is set (after an intended change).

use reel_protocol::decode_client;
use reel_recorder::wire_log::{Direction, Source, WireEntry};

/// Checks that `entries`, written as a wire log, are `bundled` (the text of
/// `assets/tapes/{file}`); with `REEL_BLESS` set, writes them there instead.
pub fn check_or_bless(file: &str, entries: &[WireEntry], bundled: &str) {
    let tape: String = entries
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap() + "\n")
        .collect();
    if std::env::var_os("REEL_BLESS").is_some() {
        let path = format!("{}/assets/tapes/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(path, &tape).unwrap();
        return;
    }
    assert_eq!(
        tape, bundled,
        "assets/tapes/{file} is stale: re-bless it with REEL_BLESS=1"
    );
}

/// The context frames the runtime sent on a recording (its own `clientContent`, not the
/// application's): each frame's turns' first texts and whether it completed the turn.
pub fn context_frames(entries: &[WireEntry]) -> Vec<(Vec<String>, bool)> {
    entries
        .iter()
        .filter(|e| e.dir == Direction::Out && e.source == Some(Source::Runtime))
        .filter_map(|e| decode_client(&e.payload).ok()?.client_content)
        .map(|content| {
            let turns = content
                .turns
                .unwrap_or_default()
                .iter()
                .map(|t| t.parts()[0].text.clone().unwrap_or_default())
                .collect();
            (turns, content.turn_complete == Some(true))
        })
        .collect()
}
