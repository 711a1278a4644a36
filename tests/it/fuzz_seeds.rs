//! The fuzz targets' checked-in seeds (`fuzz/seeds/<target>/`), run through each target's
//! function as a plain test, so that the targets keep compiling and their checks keep
//! holding on stable without cargo-fuzz (see docs/RELIABILITY.md, "Fuzzing"). The
//! `tape_server` target's seeds run in `reel-replayer`'s unit tests
//! (`server::fuzzing::tests`).

use std::path::Path;

#[path = "../../fuzz/targets/frame_decoder.rs"]
mod frame_decoder;
#[path = "../../fuzz/targets/journal.rs"]
mod journal;
#[path = "../../fuzz/targets/wire_log.rs"]
mod wire_log;

/// Runs `check` on every seed of `target`; returns how many there were.
fn replay_seeds(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in &paths {
        let input = std::fs::read(path).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&input));
        assert!(outcome.is_ok(), "seed {} fails", path.display());
    }
    paths.len()
}

#[test]
fn frame_decoder_seeds() {
    assert_eq!(replay_seeds("frame_decoder", frame_decoder::run), 59);
}

#[test]
fn wire_log_seeds() {
    assert_eq!(replay_seeds("wire_log", wire_log::run), 6);
}

#[test]
fn journal_seeds() {
    assert_eq!(replay_seeds("journal", journal::run), 4);
}
