//! Issue 12, item 2: a replay farm of 1,000 short sessions (the bundled weather tape, copied
//! under 1,000 names), replayed by the release `reel replay DIR --jobs N` for N = 1 and 2:
//! sessions per second, and how it scales from one core to two.
//!
//! Run with `cargo bench -p reel --bench replay_farm`. Each run is a fresh process; the
//! clock runs around it (start-up included). Three runs per job count.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// Sessions in the farm.
const SESSIONS: usize = 1_000;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tape = root.join("assets/tapes/weather.wire.jsonl");
    let farm = root.join("target/bench-farm");
    let _ = std::fs::remove_dir_all(&farm);
    if let Err(error) = std::fs::create_dir_all(&farm) {
        panic!("cannot make {}: {error}", farm.display());
    }
    for i in 0..SESSIONS {
        let copy = farm.join(format!("session-{i:04}.wire.jsonl"));
        if let Err(error) = std::fs::copy(&tape, &copy) {
            panic!("cannot copy the tape to {}: {error}", copy.display());
        }
    }
    let reel = env!("CARGO_BIN_EXE_reel");
    let mut best = [f64::MAX; 2];
    for jobs in [1usize, 2] {
        for run in 1..=3 {
            let started = Instant::now();
            let output = Command::new(reel)
                .arg("replay")
                .arg(&farm)
                .args(["--jobs", &jobs.to_string()])
                .output();
            let seconds = started.elapsed().as_secs_f64();
            let output = match output {
                Ok(output) => output,
                Err(error) => panic!("reel did not run: {error}"),
            };
            let stdout = String::from_utf8_lossy(&output.stdout);
            let total = format!("  {SESSIONS} sessions: {SESSIONS} clean, 0 drifted, 0 bad input");
            assert!(
                output.status.success() && stdout.contains(&total),
                "every session replays clean:\n{}",
                stdout.lines().rev().take(3).collect::<Vec<_>>().join("\n")
            );
            best[jobs - 1] = best[jobs - 1].min(seconds);
            println!(
                "replay farm: {SESSIONS} sessions, --jobs {jobs}, run {run}: {seconds:.3} s = {:.0} sessions/s",
                SESSIONS as f64 / seconds
            );
        }
    }
    println!(
        "best of 3: 1 job {:.0} sessions/s, 2 jobs {:.0} sessions/s: {:.2}x",
        SESSIONS as f64 / best[0],
        SESSIONS as f64 / best[1],
        best[0] / best[1]
    );
    let _ = std::fs::remove_dir_all(&farm);
}
