//! Figure 3 of the session tree: memory per idle session, and 1,000 concurrent sessions at
//! 20 frames/s each with their fast-lane latency.
//!
//! A plain `main` (`harness = false`). Each phase runs in a fresh child process (this
//! binary re-run with `REEL_BENCH_ROLE`), so that no phase's `VmRSS` is flattered by memory
//! an earlier phase freed; each has a tokio runtime with 2 workers and starts with 10
//! warm-up sessions before its first `VmRSS` reading (`/proc/self/status`).
//!
//! 1. **Idle memory** (in-memory link, a bench `Connector` that answers the setup and then
//!    yields nothing): `VmRSS` before and after connecting 1,000 sessions (setup answered,
//!    phase `Active`): bytes per idle session = the difference / 1,000. The sessions are
//!    then disconnected and `VmRSS` read once more (what the allocator kept).
//! 2. **1,000 sessions on loopback WebSockets**: a server in another child process
//!    (`REEL_BENCH_ROLE=server`; it shares the same 2 cores) accepts 1,000 connections from
//!    the real `WebSocketConnector`; `VmRSS` before and after connecting gives the client's
//!    cost of an idle WebSocket session. Then each session asks for 200 text frames at
//!    20 frames/s (10 s), the starts staggered by 50 µs per session over one 50 ms period.
//!    Latency per frame: from the moment the WebSocket receiver hands the frame to the
//!    transport (a wrapper around the real receiver notes it) to `on_text`, matched in
//!    order per session.
//! 3. **The same load over in-memory links**: the tree without sockets, for comparison; a
//!    feeder task per session plays the server, in the same process.
//!
//! Run with `cargo bench -p reel-actors --bench session_scale` (about 40 s).

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reel_actors::LiveHandle;
use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::FastCallbacks;
use reel_actors::transport::LinkFrame;
use serde_json::json;
use tokio::task::JoinSet;

use support::{
    Fed, FedSender, MemoryConnector, Probe, Stamps, Summary, TimedConnector, builder, cpu_time,
    load_average, loopback_endpoint, memory_builder, rss_bytes, runtime, serve_on_thread,
    summarize, wait_until,
};

/// Which part this process plays: `server`, `idle`, `websocket`, `memory`; unset: runs
/// the others in turn.
const ROLE_ENV: &str = "REEL_BENCH_ROLE";
/// The server's URL, for the `websocket` phase.
const URL_ENV: &str = "REEL_BENCH_SERVER_URL";
const SESSIONS: usize = 1_000;
const WARM_SESSIONS: usize = 10;
const HZ: u64 = 20;
const FRAMES_PER_SESSION: usize = 200; // 10 s at 20 frames/s
const CONNECT_BATCH: usize = 50;
const TARGET_P99_NS: u64 = 200_000;

async fn connect(builder: LiveSessionBuilder) -> LiveHandle {
    match builder.connect().await {
        Ok(handle) => handle,
        Err(error) => panic!("a bench session did not go live: {error}"),
    }
}

/// Connects `n` sessions built by `make(i)`, `CONNECT_BATCH` at a time, in index order.
async fn connect_all<T: Send + 'static>(
    n: usize,
    make: impl Fn(usize) -> (LiveSessionBuilder, T),
) -> Vec<(LiveHandle, T)> {
    let mut sessions = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let end = (start + CONNECT_BATCH).min(n);
        let mut batch = JoinSet::new();
        for i in start..end {
            let (builder, extra) = make(i);
            batch.spawn(async move { (i, connect(builder).await, extra) });
        }
        let mut done: Vec<(usize, LiveHandle, T)> = batch.join_all().await;
        done.sort_by_key(|(i, _, _)| *i);
        sessions.extend(done.into_iter().map(|(_, handle, extra)| (handle, extra)));
        start = end;
    }
    sessions
}

async fn disconnect_all(handles: Vec<LiveHandle>) -> usize {
    let mut set = JoinSet::new();
    for handle in handles {
        set.spawn(async move {
            tokio::time::timeout(Duration::from_secs(30), handle.disconnect())
                .await
                .is_ok_and(|end| !end.failed)
        });
    }
    set.join_all()
        .await
        .into_iter()
        .filter(|clean| *clean)
        .count()
}

struct IdleMemory {
    rss_before: u64,
    rss_idle: u64,
    rss_after_disconnect: u64,
    clean: usize,
}

async fn idle_memory() -> IdleMemory {
    let idle = |_i: usize| {
        let (connector, link) = MemoryConnector::fed(None);
        (memory_builder(connector), link)
    };
    let warm = connect_all(WARM_SESSIONS, idle).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before = rss_bytes();
    let sessions = connect_all(SESSIONS, idle).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_idle = rss_bytes();
    let (handles, links): (Vec<_>, Vec<_>) = sessions.into_iter().unzip();
    let clean = disconnect_all(handles).await;
    drop(links);
    let (warm_handles, _warm_links): (Vec<_>, Vec<_>) = warm.into_iter().unzip();
    disconnect_all(warm_handles).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    IdleMemory {
        rss_before,
        rss_idle,
        rss_after_disconnect: rss_bytes(),
        clean,
    }
}

struct Load {
    latency: Summary,
    worst_session_p99: u64,
    frames: u64,
    expected: u64,
    elapsed: Duration,
    cpu: Duration,
    rss_before: u64,
    rss_connected: u64,
    clean: usize,
}

/// The server half, in a child process: prints its URL, serves until stdin closes.
fn server_process() {
    let url = serve_on_thread();
    println!("{url}");
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

struct Server {
    child: Child,
    url: String,
}

fn this_binary() -> std::path::PathBuf {
    match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => panic!("cannot find this bench binary: {error}"),
    }
}

fn start_server() -> Server {
    let mut child = match Command::new(this_binary())
        .env(ROLE_ENV, "server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => panic!("cannot start the server process: {error}"),
    };
    let mut url = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = BufReader::new(stdout).read_line(&mut url);
    }
    let url = url.trim().to_owned();
    assert!(url.starts_with("ws://"), "the server printed its URL");
    Server { child, url }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // the server exits when its stdin closes
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebSocket session to `url` whose `on_text` and link hand-offs go to its probe.
fn timed_session(url: &str) -> (LiveSessionBuilder, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let connector = TimedConnector::new(Arc::clone(&probe));
    let callback_probe = Arc::clone(&probe);
    let fast = FastCallbacks {
        on_text: Some(Arc::new(move |_text: &str| callback_probe.called_back())),
        ..FastCallbacks::default()
    };
    let session = builder(loopback_endpoint(url), Arc::new(connector));
    (session.fast_callbacks(fast), probe)
}

async fn websocket_load(url: &str) -> Load {
    let warm = connect_all(WARM_SESSIONS, |_i| timed_session(url)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before = rss_bytes();
    let sessions = connect_all(SESSIONS, |_i| timed_session(url)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_connected = rss_bytes();

    let cpu_start = cpu_time();
    let start = Instant::now();
    for (i, (handle, _)) in sessions.iter().enumerate() {
        let delay_us = i as u64 * 50_000 / SESSIONS as u64;
        let command = format!("pace {FRAMES_PER_SESSION} {HZ} {delay_us}");
        if handle.send_text(command).is_err() {
            panic!("session {i} ended before its load started");
        }
    }
    let expected = (SESSIONS * FRAMES_PER_SESSION) as u64;
    let received = || -> u64 {
        sessions
            .iter()
            .map(|(_, probe)| probe.count.load(Ordering::Acquire))
            .sum()
    };
    let run_for = Duration::from_secs(FRAMES_PER_SESSION as u64 / HZ + 20);
    wait_until(run_for, || received() >= expected).await;
    let elapsed = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_start);
    let frames = received();

    let mut all = Vec::with_capacity(expected as usize);
    let mut worst_session_p99 = 0;
    let mut handles = Vec::with_capacity(SESSIONS);
    for (handle, probe) in sessions {
        let latencies = probe.take_latencies();
        worst_session_p99 = worst_session_p99.max(summarize(latencies.clone()).p99);
        all.extend(latencies);
        handles.push(handle);
    }
    let clean = disconnect_all(handles).await;
    disconnect_all(warm.into_iter().map(|(handle, _)| handle).collect()).await;
    Load {
        latency: summarize(all),
        worst_session_p99,
        frames,
        expected,
        elapsed,
        cpu,
        rss_before,
        rss_connected,
        clean,
    }
}

/// One probe per in-memory session: hand-off and callback times by frame index.
struct MemoryProbe {
    handed: Arc<Stamps>,
    called: Arc<Stamps>,
    count: Arc<AtomicU64>,
}

async fn memory_load() -> Load {
    let base = Instant::now();
    let frames: Arc<[LinkFrame]> = (0..FRAMES_PER_SESSION)
        .map(|i| {
            let value =
                json!({"serverContent": {"modelTurn": {"parts": [{"text": i.to_string()}]}}});
            LinkFrame::text(value.to_string())
        })
        .collect();
    let warm = connect_all(WARM_SESSIONS, |_i| {
        let (connector, link) = MemoryConnector::fed(None);
        (memory_builder(connector), link)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before = rss_bytes();
    let sessions = connect_all(SESSIONS, |_i| {
        let handed = Arc::new(Stamps::new(base, FRAMES_PER_SESSION));
        let called = Arc::new(Stamps::new(base, FRAMES_PER_SESSION));
        let count = Arc::new(AtomicU64::new(0));
        let (connector, link) = MemoryConnector::fed(Some(Arc::clone(&handed) as _));
        let (stamps, seen) = (Arc::clone(&called), Arc::clone(&count));
        let fast = FastCallbacks {
            on_text: Some(Arc::new(move |text: &str| {
                if let Ok(i) = text.parse::<usize>() {
                    stamps.record(i);
                    seen.fetch_add(1, Ordering::AcqRel);
                }
            })),
            ..FastCallbacks::default()
        };
        let probe = MemoryProbe {
            handed,
            called,
            count,
        };
        (
            memory_builder(connector).fast_callbacks(fast),
            (probe, link),
        )
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_connected = rss_bytes();

    let cpu_start = cpu_time();
    let start = Instant::now();
    let mut feeders = JoinSet::new();
    let mut probes = Vec::with_capacity(SESSIONS);
    let mut handles = Vec::with_capacity(SESSIONS);
    for (i, (handle, (probe, link))) in sessions.into_iter().enumerate() {
        let delay = Duration::from_micros(i as u64 * 50_000 / SESSIONS as u64);
        feeders.spawn(feed(link, Arc::clone(&frames), delay));
        probes.push(probe);
        handles.push(handle);
    }
    let expected = (SESSIONS * FRAMES_PER_SESSION) as u64;
    let received = || -> u64 { probes.iter().map(|p| p.count.load(Ordering::Acquire)).sum() };
    let run_for = Duration::from_secs(FRAMES_PER_SESSION as u64 / HZ + 20);
    wait_until(run_for, || received() >= expected).await;
    let elapsed = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_start);
    let frames_seen = received();
    feeders.join_all().await;

    let mut all = Vec::with_capacity(expected as usize);
    let mut worst_session_p99 = 0;
    for probe in &probes {
        let latencies: Vec<u64> = (0..FRAMES_PER_SESSION)
            .filter_map(|i| {
                let (h, c) = (probe.handed.get(i), probe.called.get(i));
                (h != 0 && c >= h).then(|| c - h)
            })
            .collect();
        worst_session_p99 = worst_session_p99.max(summarize(latencies.clone()).p99);
        all.extend(latencies);
    }
    let clean = disconnect_all(handles).await;
    let (warm_handles, _warm_links): (Vec<_>, Vec<_>) = warm.into_iter().unzip();
    disconnect_all(warm_handles).await;
    Load {
        latency: summarize(all),
        worst_session_p99,
        frames: frames_seen,
        expected,
        elapsed,
        cpu,
        rss_before,
        rss_connected,
        clean,
    }
}

/// Plays the server of one in-memory session: `frames` at `HZ` after `delay`.
async fn feed(link: FedSender, frames: Arc<[LinkFrame]>, delay: Duration) {
    tokio::time::sleep(delay).await;
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / HZ));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for (i, frame) in frames.iter().enumerate() {
        tick.tick().await;
        if link
            .send(Fed {
                index: Some(i),
                frame: frame.clone(),
            })
            .is_err()
        {
            return;
        }
    }
    // Dropping `link` leaves the link open: it closes when the session disconnects.
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn print_load(name: &str, load: &Load) {
    let secs = load.elapsed.as_secs_f64();
    println!();
    println!("{name}:");
    println!(
        "  RSS {:.1} MiB before connecting, {:.1} MiB with {SESSIONS} idle sessions: {:.1} KiB per session",
        mib(load.rss_before),
        mib(load.rss_connected),
        load.rss_connected.saturating_sub(load.rss_before) as f64 / 1024.0 / SESSIONS as f64
    );
    println!(
        "  frames: {} of {} in {:.2} s ({:.0} frames/s); bench process CPU {:.2} s ({:.0}% of one core)",
        load.frames,
        load.expected,
        secs,
        load.frames as f64 / secs,
        load.cpu.as_secs_f64(),
        100.0 * load.cpu.as_secs_f64() / secs
    );
    println!("  link hand-off → on_text   {}", load.latency);
    println!(
        "  worst per-session p99: {:.1} µs; sessions ended cleanly: {} of {SESSIONS}",
        load.worst_session_p99 as f64 / 1e3,
        load.clean
    );
}

fn verdict(load: &Load) {
    let verdict = if load.latency.p99 <= TARGET_P99_NS {
        "MET"
    } else {
        "MISSED"
    };
    println!(
        "  target p99 ≤ 200 µs: {verdict} (p50 {:.1} µs, p99 {:.1} µs)",
        load.latency.p50 as f64 / 1e3,
        load.latency.p99 as f64 / 1e3
    );
}

fn idle_phase() {
    let memory = runtime().block_on(idle_memory());
    let per_session = memory.rss_idle.saturating_sub(memory.rss_before) / SESSIONS as u64;
    println!();
    println!("idle sessions (in-memory link):");
    println!(
        "  RSS {:.1} MiB after {WARM_SESSIONS} warm-up sessions, {:.1} MiB with {SESSIONS} more idle: \
         {per_session} bytes ({:.1} KiB) per idle session",
        mib(memory.rss_before),
        mib(memory.rss_idle),
        per_session as f64 / 1024.0
    );
    println!(
        "  after disconnecting them: RSS {:.1} MiB; sessions ended cleanly: {} of {SESSIONS}",
        mib(memory.rss_after_disconnect),
        memory.clean
    );
}

fn websocket_phase() {
    let url = std::env::var(URL_ENV).unwrap_or_default();
    let load = runtime().block_on(websocket_load(&url));
    print_load(
        "1,000 sessions × 20 frames/s, loopback WebSockets (server in a child process)",
        &load,
    );
    verdict(&load);
}

fn memory_phase() {
    let load = runtime().block_on(memory_load());
    print_load(
        "1,000 sessions × 20 frames/s, in-memory links (feeders in this process)",
        &load,
    );
    verdict(&load);
}

/// Runs `role` in a fresh process of this binary and waits for it.
fn run_phase(role: &str, url: Option<&str>) {
    let mut command = Command::new(this_binary());
    command.env(ROLE_ENV, role);
    if let Some(url) = url {
        command.env(URL_ENV, url);
    }
    match command.status() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("the {role} phase failed: {status}"),
        Err(error) => panic!("cannot run the {role} phase: {error}"),
    }
}

fn main() {
    match std::env::var(ROLE_ENV).as_deref() {
        Ok("server") => server_process(),
        Ok("idle") => idle_phase(),
        Ok("websocket") => websocket_phase(),
        Ok("memory") => memory_phase(),
        _ => {
            println!(
                "session_scale: {SESSIONS} sessions, 2 workers, each phase in a fresh process; \
                 load average {}",
                load_average()
            );
            run_phase("idle", None);
            let server = start_server();
            run_phase("websocket", Some(&server.url));
            drop(server);
            run_phase("memory", None);
        }
    }
}
