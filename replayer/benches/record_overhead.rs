//! What recording the wire costs a live session: inbound text frames per second through
//! transport → router → fast lane → `on_text`, on one session, without and with
//! `record_wire(FileWireRecorder)` writing to `target/bench-wire/record_overhead.wire.jsonl`.
//! Target: recording costs ≤ 5 % of the throughput.
//!
//! The link is in memory (`support::MemoryConnector`): its receiver answers the setup with
//! `{"setupComplete":{}}`, then yields 200,000 pre-built `serverContent` text frames (the
//! 116-byte frame of the codec bench) as fast as the transport's reader pulls them. Each
//! run is a fresh session on a tokio runtime with 2 workers: connect (not timed); the clock
//! starts when the frames are released and stops when `on_text` has counted all of them
//! (the figure); then `disconnect` (the session's end, which drains and flushes the
//! recorder) stops a second clock, so the table also shows the rate with the log complete
//! on disk.
//!
//! The two variants alternate (off/on, then on/off, …) over `--rounds` rounds (default 10)
//! after one warm-up round of each, so a change in machine load hits both alike; the
//! medians are compared.
//!
//! ```sh
//! cargo bench -p reel-replayer --bench record_overhead
//! cargo bench -p reel-replayer --bench record_overhead -- --rounds 20 --frames 400000
//! ```

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::FastCallbacks;
use reel_actors::transport::LinkFrame;
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::{FileWireRecorder, WireRecorder};
use tokio::sync::{Notify, watch};

use support::{
    MemoryConnector, TEXT_FRAME, cpu_seconds, load_average, median, runtime, target_dir,
};

/// One timed run.
#[derive(Debug, Clone, Copy)]
struct Run {
    /// From release to the last `on_text`.
    to_last_callback: Duration,
    /// From release to the session's end (log drained and flushed).
    to_end: Duration,
    /// Process CPU time (user + system) over the run, in seconds.
    cpu_s: f64,
}

struct Counter {
    seen: AtomicU64,
    target: u64,
    done: Notify,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: u64| -> u64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let frames_n = value("--frames", 200_000);
    let rounds = value("--rounds", 10) as usize;

    let dir = target_dir().join("bench-wire");
    if let Err(error) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {error}", dir.display());
    }
    let log = dir.join("record_overhead.wire.jsonl");
    let frames: Arc<[LinkFrame]> = (0..frames_n).map(|_| LinkFrame::text(TEXT_FRAME)).collect();
    let rt = runtime();

    println!(
        "{frames_n} text frames per run, {rounds} rounds after a warm-up; log: {}; load before: {}",
        log.display(),
        load_average().unwrap_or_default()
    );
    // Warm-up: one of each, not counted.
    for record in [false, true] {
        rt.block_on(run(&frames, record.then_some(log.as_path())));
    }
    let mut off = Vec::new();
    let mut on = Vec::new();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for record in order {
            let result = rt.block_on(run(&frames, record.then_some(log.as_path())));
            if record {
                check_log(&log, frames_n);
                on.push(result);
            } else {
                off.push(result);
            }
        }
    }
    println!("load after: {}", load_average().unwrap_or_default());

    let rate = |runs: &[Run], pick: fn(&Run) -> Duration| -> (f64, f64, f64) {
        let mut rates: Vec<f64> = runs
            .iter()
            .map(|r| frames_n as f64 / pick(r).as_secs_f64())
            .collect();
        let med = median(&mut rates);
        (med, rates[0], rates[rates.len() - 1])
    };
    let cpu = |runs: &[Run]| -> f64 {
        let mut per_frame: Vec<f64> = runs
            .iter()
            .map(|r| r.cpu_s / frames_n as f64 * 1e6)
            .collect();
        median(&mut per_frame)
    };
    for (what, pick) in [
        (
            "to the last on_text (the figure)",
            (|r: &Run| r.to_last_callback) as fn(&Run) -> Duration,
        ),
        ("to the session's end, log flushed", |r: &Run| r.to_end),
    ] {
        let (off_med, off_min, off_max) = rate(&off, pick);
        let (on_med, on_min, on_max) = rate(&on, pick);
        println!("{what}:");
        println!(
            "  without recording: median {off_med:.0} frames/s (min {off_min:.0}, max {off_max:.0})"
        );
        println!(
            "  with FileWireRecorder: median {on_med:.0} frames/s (min {on_min:.0}, max {on_max:.0})"
        );
        println!(
            "  overhead: {:.1} % of the throughput",
            (1.0 - on_med / off_med) * 100.0
        );
    }
    // Each round's two runs ran back to back: their ratio is the least disturbed by a
    // change in machine load between rounds.
    let mut paired: Vec<f64> = off
        .iter()
        .zip(&on)
        .map(|(off, on)| {
            (1.0 - off.to_last_callback.as_secs_f64() / on.to_last_callback.as_secs_f64()) * 100.0
        })
        .collect();
    let paired_median = median(&mut paired);
    println!(
        "paired by round (to the last on_text): median overhead {paired_median:.1} %, from {:.1} % to {:.1} %",
        paired[0],
        paired[paired.len() - 1]
    );
    println!(
        "CPU time per frame (process, user + system, to the session's end): without {:.2} µs, with {:.2} µs",
        cpu(&off),
        cpu(&on)
    );
}

/// One session: connect, release the frames, time them, disconnect.
async fn run(frames: &Arc<[LinkFrame]>, record: Option<&Path>) -> Run {
    let (go, go_rx) = watch::channel(false);
    let connector = MemoryConnector::new(go_rx, Arc::clone(frames));
    let counter = Arc::new(Counter {
        seen: AtomicU64::new(0),
        target: frames.len() as u64,
        done: Notify::new(),
    });
    let on_text = {
        let counter = Arc::clone(&counter);
        Arc::new(move |_text: &str| {
            if counter.seen.fetch_add(1, Ordering::Relaxed) + 1 == counter.target {
                counter.done.notify_one();
            }
        })
    };
    let mut builder = LiveSessionBuilder::new(
        SessionConfig::default(),
        ApiEndpoint::google_ai("bench-key"),
    )
    .connector(Arc::new(connector))
    .fast_callbacks(FastCallbacks {
        on_text: Some(on_text),
        ..FastCallbacks::default()
    });
    if let Some(path) = record {
        let recorder = match FileWireRecorder::create(path) {
            Ok(recorder) => recorder,
            Err(error) => panic!("cannot create {}: {error}", path.display()),
        };
        builder = builder.record_wire(Arc::new(recorder) as Arc<dyn WireRecorder>);
    }
    let handle = match builder.connect().await {
        Ok(handle) => handle,
        Err(error) => panic!("the bench session did not go live: {error}"),
    };
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let done = counter.done.notified();
    go.send_replace(true);
    done.await;
    let to_last_callback = started.elapsed();
    let end = handle.disconnect().await;
    let to_end = started.elapsed();
    let cpu_s = cpu_seconds() - cpu_before;
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert_eq!(counter.seen.load(Ordering::Acquire), frames.len() as u64);
    Run {
        to_last_callback,
        to_end,
        cpu_s,
    }
}

/// The recorded log has every frame: the setup, `setupComplete`, the burst, the close.
fn check_log(path: &PathBuf, frames: u64) {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(error) => panic!("cannot read {}: {error}", path.display()),
    };
    let lines = text.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(
        lines,
        frames + 3,
        "setup, setupComplete, the frames, the close"
    );
}
