//! Replay of a long synthetic session through the full tree: `replay_session` with
//! `Tape::open` on a wire log file, default pacing (`AsFastAsConsumed`), no event
//! subscriber. Targets: ≥ 200,000 frames/s end to end, and peak memory under 100 MB whatever
//! the log's length.
//!
//! The tapes (`target/bench-tapes/synthetic-<N>min.wire.jsonl`, see
//! `support::write_synthetic_tape`) are written once and reused. Each replay runs in a
//! child process of its own, so its `VmHWM` (peak RSS, from `/proc/self/status`) is that
//! replay's alone; the parent prints one line per run. For each length the first run is
//! cold (the tape dropped from the page cache first, with GNU `dd iflag=nocache`, so it
//! is read from disk), the next `--runs` (default 2) warm.
//!
//! ```sh
//! cargo bench -p reel-replayer --bench replay_long                   # 10 and 120 minutes
//! cargo bench -p reel-replayer --bench replay_long -- --minutes 2    # a short one
//! cargo bench -p reel-replayer --bench replay_long -- --runs 5       # more warm runs
//! cargo bench -p reel-replayer --bench replay_long -- --keep-events  # also: the stream kept
//! ```
//!
//! The clock runs from `Tape::open` to `Replay::drained` (open, spawn, handshake, release,
//! every frame handed over and consumed by every lane). The replay builder carries the
//! session's tool, so the recorded tool responses are produced again and compared byte for
//! byte; the run fails if any divergence is reported.
//!
//! `replay_session` keeps an event stream from the session's start for `Replay::events`;
//! with no subscriber wanted, the bench takes it and drops it before releasing the tape.
//! `--keep-events` also runs the replays with that stream kept and never read, to show
//! what it costs.

mod support;

use std::process::Command;
use std::time::Instant;

use reel_replayer::{ReplayOptions, Tape, replay_session};

use support::{load_average, proc_status_kib, replay_builder, runtime, synthetic_tape};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--replay-one") {
        let Some(path) = args.get(at + 1) else {
            panic!("--replay-one needs a path");
        };
        let keep_events = args.iter().any(|a| a == "--keep-events");
        replay_one(path, keep_events);
        return;
    }
    let minutes: Vec<u64> = match args.iter().position(|a| a == "--minutes") {
        Some(at) => args
            .get(at + 1)
            .map(|list| {
                list.split(',')
                    .map(|m| m.parse().unwrap_or_else(|_| panic!("bad minutes: {m}")))
                    .collect()
            })
            .unwrap_or_default(),
        None => vec![10, 120],
    };
    let runs = match args.iter().position(|a| a == "--runs") {
        Some(at) => args.get(at + 1).and_then(|n| n.parse().ok()).unwrap_or(2),
        None => 2,
    };
    let keep_events = args.iter().any(|a| a == "--keep-events");

    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => panic!("cannot find this bench's executable: {error}"),
    };
    for &m in &minutes {
        let started = Instant::now();
        let (path, counts) = synthetic_tape(m);
        println!(
            "tape {m} min: {} ({} entries, {} server frames of which {} audio and {} tool calls, {} runtime frames, {:.1} MB; ready in {:.1} s)",
            path.display(),
            counts.entries,
            counts.inbound,
            counts.audio,
            counts.tool_calls,
            counts.outbound,
            counts.bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
    }
    let mut variants = vec![false];
    if keep_events {
        variants.push(true);
    }
    for keep in variants {
        for &m in &minutes {
            let (path, _) = synthetic_tape(m);
            // A cold run first (the tape read from disk), then the warm runs.
            let cold = drop_from_page_cache(&path);
            for run in 0..runs + usize::from(cold) {
                let mut command = Command::new(&exe);
                command.arg("--replay-one").arg(&path);
                if keep {
                    command.arg("--keep-events");
                }
                let before = load_average().unwrap_or_default();
                let output = match command.output() {
                    Ok(output) => output,
                    Err(error) => panic!("cannot run the replay child: {error}"),
                };
                let stdout = String::from_utf8_lossy(&output.stdout);
                let stderr = String::from_utf8_lossy(&output.stderr);
                if !output.status.success() {
                    panic!("replay of {m} min failed: {stdout}{stderr}");
                }
                let what = if keep {
                    "events stream kept"
                } else {
                    "no subscriber"
                };
                let cache = if cold && run == 0 { "cold" } else { "warm" };
                println!(
                    "replay {m:>3} min ({what}, {cache}): {} [load before: {before}]",
                    stdout.trim()
                );
            }
        }
    }
}

/// Drops `path` from the page cache (GNU `dd`'s `nocache`, which advises the kernel to
/// drop the file's cached pages), so the next replay reads it from disk. Returns whether
/// that worked; without it every run is warm.
fn drop_from_page_cache(path: &std::path::Path) -> bool {
    let mut input = std::ffi::OsString::from("if=");
    input.push(path);
    let dropped = Command::new("dd")
        .arg(input)
        .args(["iflag=nocache", "count=0", "status=none"])
        .status()
        .is_ok_and(|status| status.success());
    if !dropped {
        println!("(cannot drop the tape from the page cache with dd: every run is warm)");
    }
    dropped
}

/// Replays `path` once and prints frames/s and peak RSS.
fn replay_one(path: &str, keep_events: bool) {
    let rt = runtime();
    let baseline_kib = proc_status_kib("VmHWM").unwrap_or(0);
    let (frames, elapsed, divergences, outbound) = rt.block_on(async {
        let started = Instant::now();
        let tape = match Tape::open(path) {
            Ok(tape) => tape,
            Err(error) => panic!("cannot open {path}: {error}"),
        };
        let mut replay =
            match replay_session(replay_builder(), tape, ReplayOptions::default()).await {
                Ok(replay) => replay,
                Err(error) => panic!("the replay did not start: {error}"),
            };
        // The stream of every event since the start: kept (and never read) only to show
        // what an unread stream costs.
        let kept = keep_events.then(|| replay.events());
        if !keep_events {
            drop(replay.events());
        }
        replay.release();
        replay.drained().await;
        let elapsed = started.elapsed();
        let frames = replay.handle().telemetry().frames_in;
        let divergences = replay.divergences();
        let outbound = replay.outbound_frames().len();
        let end = replay.disconnect().await;
        assert_eq!(end.reason, "closed with code 1000: client disconnect");
        drop(kept);
        (frames, elapsed, divergences, outbound)
    });
    if let Some(first) = divergences.first() {
        panic!("{} divergences; the first: {first}", divergences.len());
    }
    let secs = elapsed.as_secs_f64();
    let hwm_kib = proc_status_kib("VmHWM").unwrap_or(0);
    println!(
        "{frames} frames in {secs:.2} s = {:.0} frames/s; VmHWM {:.1} MB (before the replay {:.1} MB); runtime frames produced and identical: {outbound}; divergences: 0",
        frames as f64 / secs,
        hwm_kib as f64 * 1024.0 / 1e6,
        baseline_kib as f64 * 1024.0 / 1e6,
    );
}
