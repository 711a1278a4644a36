//! Keeping a bundled tape current: the tape is what reel records today, compared byte for
//! byte, and rewritten instead when `REEL_BLESS` is set (after an intended change).

use reel_recorder::wire_log::WireEntry;

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
