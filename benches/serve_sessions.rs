//! Issue 32 item 1, its second half: N voice sessions of reel's own client tree over
//! loopback WebSockets against `reel serve`, a real child process on a free loopback port.
//!
//! A plain `main` (`harness = false`), like `actors/benches/many_sessions.rs`: one long run
//! per N, percentiles over millions of frames, CPU and `VmRSS` read from `/proc`.
//!
//! **The tape.** The bench writes a wire log of a voice call of `--seconds` S seconds into
//! `target/bench-serve/`: the setup reel's client sends (`SessionConfig::setup_frame`, input
//! transcription on) and `setupComplete`; then, every 20 ms, the client's 20 ms of 16 kHz
//! audio (640 bytes of PCM, as `LiveHandle::send_audio` writes it) followed by the model's
//! 20 ms of 24 kHz audio (960 bytes, a `serverContent.modelTurn` frame), and once a second
//! an `inputTranscription`. Byte `0` of each tick's PCM (both ways) is the tick's number
//! modulo 256: that is how a frame is matched with its send.
//!
//! **The server.** For each N, `reel serve --tape TAPE --json --port 0` (the release
//! binary, strict matching, frames sent at once) in a fresh child process; its `ready`
//! line gives the URL. Each client frame must match the tape, so the server parses and
//! compares every chunk it receives, and answers it with the model's frame.
//!
//! **The client.** This binary again (`REEL_BENCH_ROLE=client`, a fresh process per N so no
//! N inherits memory another freed) on a tokio runtime of 2 workers: N real session trees
//! (`LiveSessionBuilder::connect`, the real `WebSocketConnector`, wrapped to note when the
//! receiver hands each model audio frame to the transport), connected 50 at a time. Then
//! 50 pacer tasks on the tokio clock (real time) send each session's chunk every 20 ms,
//! staggered 0.4 ms apart over the period; the server answers each at once. Figures:
//!
//! - **fast-lane latency**: the link's hand-off of a model audio frame → `on_audio`, as
//!   `fast_lane_latency` and `many_sessions` time it; and the round trip, `send_audio` →
//!   the answer's `on_audio` (through the client's tree, the socket, the server and back);
//!   each in a log-linear histogram (≤ 6.25 % bucket error);
//! - **events lost**: model audio frames and transcriptions the tape has for the chunks
//!   sent, against `on_audio` and `on_input_transcript` calls; the chunks sent against the
//!   frames the server matched (its `connection` reports, `frames_matched`, after the
//!   sessions disconnect); and any connection the server did not report `replayed`;
//! - **CPU** of the client and of the server over the streaming period (`/proc/PID/stat`,
//!   utime + stime; 100 % = one core), and a session-tick's share of it;
//! - **memory per session**: the client's `VmRSS` with N idle sessions and at the end of
//!   the streaming, less its `VmRSS` after 10 warm-up sessions, / N; the server's likewise
//!   (before the first connection, with N connected, at the end).
//!
//! ```sh
//! cargo bench -p reel --bench serve_sessions                            # 1,000 and 2,000; 15 s
//! cargo bench -p reel --bench serve_sessions -- --sessions 2000 --seconds 30
//! ```
//!
//! Each process holds a socket a session: both children start through `sh`, which raises
//! their soft `ulimit -n` to the hard one; the client stops with a message naming both when
//! the limit is under N plus a few dozen (decision 0078). The server's standard output is
//! read on a thread from its start: an unread pipe would stall the server's report printer,
//! and with it every connection ending past 1,024 unprinted reports (before session 17 it
//! dropped their reports; the figure names any that are missing).
//!
//! Also printed: the CPU a session-tick takes in each process (CPU time / chunks sent), the
//! figure the load moves least; 2 cores hold N sessions at 50 ticks/s while it is under
//! 2 / (50 · N) seconds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reel_actors::callbacks::FastCallbacks;
use reel_actors::transport::{
    Connector, LinkError, LinkEvent, LinkHalves, LinkOptions, LinkReceiver, WebSocketConnector,
};
use reel_actors::{LiveHandle, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, Blob, ConnectRequest, SessionConfig, encode_audio_input};
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::{Value, json};
use tokio::task::JoinSet;

#[path = "shared/histogram.rs"]
mod histogram;
use histogram::Histogram;
#[path = "shared/fleet_options.rs"]
mod fleet_options;
#[path = "shared/proc_stats.rs"]
mod proc_stats;
use proc_stats::{cpu_time_of, load_average, rss_bytes_of};

const ROLE_ENV: &str = "REEL_BENCH_ROLE";
const URL_ENV: &str = "REEL_BENCH_SERVER_URL";
const PID_ENV: &str = "REEL_BENCH_SERVER_PID";
const SESSIONS_ENV: &str = "REEL_BENCH_SESSIONS";
const SECONDS_ENV: &str = "REEL_BENCH_SECONDS";
const WARM_SESSIONS: usize = 10;
const CONNECT_BATCH: usize = 50;
/// One tick: 20 ms of audio each way.
const TICK: Duration = Duration::from_millis(20);
const TICKS_PER_SECOND: u64 = 50;
/// Ticks between transcriptions (1 s).
const TRANSCRIPT_EVERY: u64 = 50;
const PACERS: usize = 50;
const RING: usize = 256;
const MODEL_PCM_BYTES: usize = 960;
const APP_PCM_BYTES: usize = 640;
const MODEL: &str = "bench-model";
const TARGET_P99_NS: u64 = 5_000_000;
const TARGET_P999_NS: u64 = 20_000_000;

// ---------------------------------------------------------------------------------------
// The tape.
// ---------------------------------------------------------------------------------------

/// The client's 20 ms chunk of tick `tick`.
fn app_pcm(tick: u64) -> Vec<u8> {
    let mut pcm: Vec<u8> = (0..APP_PCM_BYTES).map(|i| (i % 241) as u8).collect();
    pcm[0] = (tick % RING as u64) as u8;
    pcm
}

/// The model's 20 ms audio frame of tick `tick` (its PCM base64 as the protocol writes it).
fn model_audio_frame(tick: u64) -> Vec<u8> {
    let mut pcm: Vec<u8> = (0..MODEL_PCM_BYTES).map(|i| (i % 251) as u8).collect();
    pcm[0] = (tick % RING as u64) as u8;
    let blob = match serde_json::to_value(Blob::new("audio/pcm;rate=24000", pcm)) {
        Ok(blob) => blob,
        Err(error) => panic!("a blob does not serialize: {error}"),
    };
    json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": blob}]}}})
        .to_string()
        .into_bytes()
}

fn transcript_frame(second: u64) -> Vec<u8> {
    json!({"serverContent": {"inputTranscription": {"text": format!("second {second} of the call")}}})
        .to_string()
        .into_bytes()
}

fn session_config() -> SessionConfig {
    SessionConfig::new(MODEL).input_transcription()
}

fn endpoint(url: &str) -> ApiEndpoint {
    ApiEndpoint::google_ai("bench-key").with_base_url(url)
}

/// Writes the voice call of `ticks` ticks to `path`.
fn write_tape(path: &Path, ticks: u64) {
    let file = match std::fs::File::create(path) {
        Ok(file) => file,
        Err(error) => panic!("cannot create the tape {}: {error}", path.display()),
    };
    let mut out = std::io::BufWriter::new(file);
    let mut seq = 0u64;
    let start_ms = 1_780_000_000_000u64;
    let mut line = |dir: Direction, ts_ms: u64, payload: Vec<u8>| {
        seq += 1;
        let entry = WireEntry::frame(seq, dir, ts_ms, payload, None, false);
        let written = serde_json::to_writer(&mut out, &entry)
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n"));
        if let Err(error) = written {
            panic!("cannot write the tape {}: {error}", path.display());
        }
    };
    let setup = session_config().setup_frame(endpoint("ws://127.0.0.1:1").platform());
    line(Direction::Out, start_ms, setup);
    line(
        Direction::In,
        start_ms + 1,
        br#"{"setupComplete":{}}"#.to_vec(),
    );
    for tick in 0..ticks {
        let ts = start_ms + 20 + tick * 20;
        line(Direction::Out, ts, encode_audio_input(&app_pcm(tick)));
        line(Direction::In, ts + 1, model_audio_frame(tick));
        if tick % TRANSCRIPT_EVERY == TRANSCRIPT_EVERY - 1 {
            line(
                Direction::In,
                ts + 2,
                transcript_frame(tick / TRANSCRIPT_EVERY),
            );
        }
    }
    if let Err(error) = out.flush() {
        panic!("cannot write the tape {}: {error}", path.display());
    }
}

// ---------------------------------------------------------------------------------------
// The client: timing the real WebSocket link.
// ---------------------------------------------------------------------------------------

/// Per session: when each model audio frame was handed over and each chunk sent, by ring
/// index (nanoseconds since the run's base), and what arrived.
struct Probe {
    handed: Vec<AtomicU64>,
    sent: Vec<AtomicU64>,
    audio_seen: AtomicU64,
    transcripts_seen: AtomicU64,
}

impl Probe {
    fn new() -> Self {
        Probe {
            handed: (0..RING).map(|_| AtomicU64::new(0)).collect(),
            sent: (0..RING).map(|_| AtomicU64::new(0)).collect(),
            audio_seen: AtomicU64::new(0),
            transcripts_seen: AtomicU64::new(0),
        }
    }
}

struct Shared {
    base: Instant,
    handoff: Histogram,
    round_trip: Histogram,
    measuring: AtomicBool,
}

impl Shared {
    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The ring index of a model audio frame: byte 0 of its PCM, read from the first two
/// characters of its base64 (`"data":"XY…`). `None` for any other frame.
fn model_audio_index(frame: &[u8]) -> Option<usize> {
    const HEAD: &[u8] = br#"{"serverContent":{"modelTurn""#;
    const DATA: &[u8] = br#""data":""#;
    if !frame.starts_with(HEAD) {
        return None;
    }
    let at = frame.windows(DATA.len()).position(|w| w == DATA)? + DATA.len();
    let value = |c: u8| -> Option<u8> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let first = value(*frame.get(at)?)?;
    let second = value(*frame.get(at + 1)?)?;
    Some(usize::from((first << 2) | (second >> 4)))
}

/// The real WebSocket connector, its receiver noting each model audio frame's hand-off.
struct TimedConnector {
    inner: WebSocketConnector,
    probe: Arc<Probe>,
    shared: Arc<Shared>,
}

impl Connector for TimedConnector {
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let connecting = self.inner.connect(request, options);
        let (probe, shared) = (Arc::clone(&self.probe), Arc::clone(&self.shared));
        Box::pin(async move {
            let (sender, inner) = connecting.await?;
            let receiver: Box<dyn LinkReceiver> = Box::new(TimedReceiver {
                inner,
                probe,
                shared,
            });
            Ok((sender, receiver))
        })
    }
}

struct TimedReceiver {
    inner: Box<dyn LinkReceiver>,
    probe: Arc<Probe>,
    shared: Arc<Shared>,
}

impl LinkReceiver for TimedReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        let event = std::task::ready!(self.inner.poll_recv(cx));
        if let Some(LinkEvent::Frame(frame)) = &event
            && let Some(index) = model_audio_index(&frame.bytes)
            && let Some(slot) = self.probe.handed.get(index)
        {
            slot.store(self.shared.now(), Ordering::Relaxed);
        }
        Poll::Ready(event)
    }
}

fn session_builder(url: &str, probe: &Arc<Probe>, shared: &Arc<Shared>) -> LiveSessionBuilder {
    let connector = TimedConnector {
        inner: WebSocketConnector::new(),
        probe: Arc::clone(probe),
        shared: Arc::clone(shared),
    };
    let (audio_probe, audio_shared) = (Arc::clone(probe), Arc::clone(shared));
    let transcript_probe = Arc::clone(probe);
    let fast = FastCallbacks {
        on_audio: Some(Arc::new(move |pcm: &Bytes| {
            audio_probe.audio_seen.fetch_add(1, Ordering::Relaxed);
            if !audio_shared.measuring.load(Ordering::Relaxed) {
                return;
            }
            let Some(&index) = pcm.first() else { return };
            let now = audio_shared.now();
            let index = usize::from(index);
            let handed = audio_probe.handed[index].load(Ordering::Relaxed);
            let sent = audio_probe.sent[index].load(Ordering::Relaxed);
            if handed != 0 {
                audio_shared.handoff.record(now.saturating_sub(handed));
            }
            if sent != 0 {
                audio_shared.round_trip.record(now.saturating_sub(sent));
            }
        })),
        on_input_transcript: Some(Arc::new(move |_text: &str, _finished: bool| {
            transcript_probe
                .transcripts_seen
                .fetch_add(1, Ordering::Relaxed);
        })),
        ..FastCallbacks::default()
    };
    LiveSessionBuilder::new(session_config(), endpoint(url))
        .connector(Arc::new(connector))
        .fast_callbacks(fast)
}

async fn connect_all(url: &str, probes: &[Arc<Probe>], shared: &Arc<Shared>) -> Vec<LiveHandle> {
    let mut handles = Vec::with_capacity(probes.len());
    for (batch_start, batch) in probes.chunks(CONNECT_BATCH).enumerate() {
        let mut set = JoinSet::new();
        for (k, probe) in batch.iter().enumerate() {
            let i = batch_start * CONNECT_BATCH + k;
            let builder = session_builder(url, probe, shared);
            set.spawn(async move {
                match builder.connect().await {
                    Ok(handle) => (i, handle),
                    Err(error) => panic!("session {i} did not go live: {error}"),
                }
            });
        }
        let mut done = set.join_all().await;
        done.sort_by_key(|(i, _)| *i);
        handles.extend(done.into_iter().map(|(_, handle)| handle));
    }
    handles
}

/// What every pacer shares: the sessions, their chunks, the clock and the counters.
#[derive(Clone)]
struct Pacing {
    sessions: Arc<Vec<(LiveHandle, Arc<Probe>)>>,
    chunks: Arc<Vec<Bytes>>,
    shared: Arc<Shared>,
    ticks: u64,
    sent: Arc<AtomicU64>,
    late: Arc<AtomicU64>,
}

/// Sends the chunks of the sessions `group` for `pacing.ticks` ticks, starting `offset`
/// into the period; counts what it sent.
async fn pace(pacing: Pacing, group: Vec<usize>, offset: Duration) {
    let Pacing {
        sessions,
        chunks,
        shared,
        ticks,
        sent,
        late,
    } = pacing;
    let start = tokio::time::Instant::now() + offset;
    let mut tick = tokio::time::interval_at(start, TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    for k in 0..ticks {
        let due = tick.tick().await;
        if due.elapsed() > TICK {
            late.fetch_add(1, Ordering::Relaxed);
        }
        let ring = (k % RING as u64) as usize;
        for &i in &group {
            let Some((handle, probe)) = sessions.get(i) else {
                continue;
            };
            probe.sent[ring].store(shared.now(), Ordering::Relaxed);
            if handle.send_audio(chunks[ring].clone()).is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The client process: connects, streams, prints one `CLIENT key=value …` line.
fn client() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let url = var(URL_ENV);
    let server_pid = var(PID_ENV);
    let n: usize = var(SESSIONS_ENV).parse().unwrap_or(0);
    let seconds: u64 = var(SECONDS_ENV).parse().unwrap_or(0);
    if url.is_empty() || server_pid.is_empty() || n == 0 || seconds == 0 {
        panic!("the client role needs {URL_ENV}, {PID_ENV}, {SESSIONS_ENV} and {SECONDS_ENV}");
    }
    let ticks = seconds * TICKS_PER_SECOND;
    let nofile = open_file_limit().unwrap_or(0);
    // A socket a session, the warm-up ones, and the runtime's own descriptors.
    let needed = (n + WARM_SESSIONS + 64) as u64;
    if nofile < needed {
        eprintln!(
            "serve sessions: {n} sessions need about {needed} open files; this process may open {nofile} (ulimit -n, raised to the hard limit): raise the hard limit or run fewer"
        );
        std::process::exit(3);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    };
    runtime.block_on(async move {
        let shared = Arc::new(Shared {
            base: Instant::now(),
            handoff: Histogram::new(),
            round_trip: Histogram::new(),
            measuring: AtomicBool::new(false),
        });
        // Warm-up sessions (not streamed: the tape's client would not match a second
        // time round), then everything the harness holds per session, before the baseline.
        let warm_probes: Vec<Arc<Probe>> = (0..WARM_SESSIONS).map(|_| Arc::new(Probe::new())).collect();
        let warm = connect_all(&url, &warm_probes, &shared).await;
        let probes: Vec<Arc<Probe>> = (0..n).map(|_| Arc::new(Probe::new())).collect();
        let chunks: Arc<Vec<Bytes>> =
            Arc::new((0..RING as u64).map(|t| Bytes::from(app_pcm(t))).collect());
        let client_base = rss_bytes_of("self");
        let server_base = rss_bytes_of(&server_pid);

        let connect_started = Instant::now();
        let handles = connect_all(&url, &probes, &shared).await;
        let connect_seconds = connect_started.elapsed().as_secs_f64();
        let client_idle = rss_bytes_of("self");
        let server_idle = rss_bytes_of(&server_pid);

        let sessions: Arc<Vec<(LiveHandle, Arc<Probe>)>> =
            Arc::new(handles.into_iter().zip(probes.iter().cloned()).collect());
        let sent = Arc::new(AtomicU64::new(0));
        let late = Arc::new(AtomicU64::new(0));
        let load_before = load_average();
        let (client_cpu0, server_cpu0) = (cpu_time_of("self"), cpu_time_of(&server_pid));
        let started = Instant::now();
        shared.measuring.store(true, Ordering::Relaxed);
        let pacing = Pacing {
            sessions: Arc::clone(&sessions),
            chunks: Arc::clone(&chunks),
            shared: Arc::clone(&shared),
            ticks,
            sent: Arc::clone(&sent),
            late: Arc::clone(&late),
        };
        let mut pacers = JoinSet::new();
        for p in 0..PACERS {
            let group: Vec<usize> = (p..n).step_by(PACERS).collect();
            let offset = TICK * p as u32 / PACERS as u32;
            pacers.spawn(pace(pacing.clone(), group, offset));
        }
        pacers.join_all().await;
        // The sessions are taken back from their `Arc` below: no pacer's copy may remain.
        drop(pacing);
        let streamed = started.elapsed().as_secs_f64();
        // The answers to the last chunks: wait (on the counters, up to a minute) for every
        // model frame the tape has for a chunk sent, so none is counted lost for being late.
        let expected_audio = sent.load(Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(60);
        while probes.iter().map(|p| p.audio_seen.load(Ordering::Relaxed)).sum::<u64>() < expected_audio
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let drained = started.elapsed().as_secs_f64() - streamed;
        let (client_cpu1, server_cpu1) = (cpu_time_of("self"), cpu_time_of(&server_pid));
        let wall = started.elapsed().as_secs_f64();
        let load_after = load_average();
        let client_streaming = rss_bytes_of("self");
        let server_streaming = rss_bytes_of(&server_pid);
        shared.measuring.store(false, Ordering::Relaxed);

        let audio_seen: u64 = probes.iter().map(|p| p.audio_seen.load(Ordering::Relaxed)).sum();
        let transcripts_seen: u64 = probes
            .iter()
            .map(|p| p.transcripts_seen.load(Ordering::Relaxed))
            .sum();
        // The tape has a transcription after every 50th chunk.
        let transcripts_expected = n as u64 * (ticks / TRANSCRIPT_EVERY);
        let per = |after: u64, before: u64| after.saturating_sub(before) as f64 / n as f64 / 1024.0;
        let percent = |after: Duration, before: Duration| {
            (after.saturating_sub(before)).as_secs_f64() / wall * 100.0
        };

        let mut closing = JoinSet::new();
        let sessions = match Arc::try_unwrap(sessions) {
            Ok(sessions) => sessions,
            Err(_) => panic!("a pacer still holds the sessions"),
        };
        for (handle, _) in sessions.into_iter().chain(warm.into_iter().map(|h| (h, Arc::new(Probe::new())))) {
            closing.spawn(async move {
                tokio::time::timeout(Duration::from_secs(60), handle.disconnect())
                    .await
                    .is_ok_and(|end| !end.failed)
            });
        }
        let closed = closing.join_all().await.into_iter().filter(|c| *c).count();

        println!(
            "CLIENT n={n} ticks={ticks} connect_s={connect_seconds:.2} streamed_s={streamed:.2} drain_s={drained:.2} \
             p50={} p99={} p999={} max={} rt_p50={} rt_p99={} rt_p999={} rt_max={} timed={} \
             sent={} audio_expected={expected_audio} audio_seen={audio_seen} \
             transcripts_expected={transcripts_expected} transcripts_seen={transcripts_seen} late_ticks={} \
             client_idle_kib={:.1} client_streaming_kib={:.1} server_idle_kib={:.1} server_streaming_kib={:.1} \
             client_cpu={:.1} server_cpu={:.1} closed={closed} nofile={nofile} load_before={load_before} load_after={load_after}",
            shared.handoff.percentile(50.0),
            shared.handoff.percentile(99.0),
            shared.handoff.percentile(99.9),
            shared.handoff.max(),
            shared.round_trip.percentile(50.0),
            shared.round_trip.percentile(99.0),
            shared.round_trip.percentile(99.9),
            shared.round_trip.max(),
            shared.handoff.count(),
            sent.load(Ordering::Relaxed),
            late.load(Ordering::Relaxed),
            per(client_idle, client_base),
            per(client_streaming, client_base),
            per(server_idle, server_base),
            per(server_streaming, server_base),
            percent(client_cpu1, client_cpu0),
            percent(server_cpu1, server_cpu0),
        );
    });
}

// ---------------------------------------------------------------------------------------
// The parent: the tape, the server, one client per N, the table.
// ---------------------------------------------------------------------------------------

struct Options {
    sessions: Vec<usize>,
    seconds: u64,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        sessions: vec![1_000, 2_000],
        seconds: 15,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sessions" => {
                let value = args
                    .next()
                    .ok_or("--sessions needs a value, e.g. 1000,2000")?;
                options.sessions = fleet_options::sessions(&value)?;
            }
            "--seconds" => {
                let value = args.next().ok_or("--seconds needs a value")?;
                options.seconds = fleet_options::seconds(&value)?;
            }
            "--bench" => {} // cargo bench passes it
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// `program` run through `sh` with its soft open-file limit (`ulimit -n`) raised to the
/// hard one: each process holds a socket a session. (No `setrlimit` here: the workspace
/// forbids `unsafe`, and the shell's builtin does the same for the process it `exec`s.)
fn with_open_file_limit(program: &Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(r#"ulimit -n "$(ulimit -Hn)" && exec "$0" "$@""#)
        .arg(program);
    command
}

/// This process's soft limit on open files (`/proc/self/limits`), `None` if unreadable.
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `reel serve` replaying `tape`, and its `ready` line's `base_url`.
fn start_server(tape: &Path) -> (Child, BufReader<ChildStdout>, String) {
    let mut child = match with_open_file_limit(Path::new(env!("CARGO_BIN_EXE_reel")))
        .args(["serve", "--json", "--port", "0", "--tape"])
        .arg(tape)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => panic!("reel serve did not start: {error}"),
    };
    let Some(stdout) = child.stdout.take() else {
        panic!("reel serve's standard output is not piped");
    };
    let mut stdout = BufReader::new(stdout);
    let mut ready = String::new();
    if stdout.read_line(&mut ready).unwrap_or(0) == 0 {
        let _ = child.kill();
        panic!("reel serve ended before it was ready");
    }
    let ready: Value = serde_json::from_str(&ready).unwrap_or_default();
    let Some(url) = ready["base_url"].as_str() else {
        let _ = child.kill();
        panic!("reel serve's ready line has no base_url: {ready}");
    };
    (child, stdout, url.to_owned())
}

/// What the server's `connection` reports said.
#[derive(Default)]
struct ServerReports {
    replayed: u64,
    /// Connections that ended `incomplete` with their setup matched and nothing more: the
    /// warm-up sessions, which send no audio.
    setup_only: u64,
    /// Connections whose report never came (see [`read_lines`]).
    missing: u64,
    other: Vec<String>,
    frames_matched: u64,
}

/// The server's standard output, line by line, read on a thread from its start: `reel
/// serve --json` prints a report as each connection ends, and a server whose output is not
/// read blocks on its pipe and, past 1,024 waiting reports, holds the connections ending
/// then until it prints again.
fn read_lines(stdout: BufReader<ChildStdout>) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// How long the server may be silent, once the client has ended, before the reports it has
/// not printed are counted missing.
const REPORT_WAIT: Duration = Duration::from_secs(30);

/// Reads `expected` connection reports (the client disconnects every session before it
/// ends; at most [`REPORT_WAIT`] of silence), then stops the server.
fn server_reports(
    mut server: Child,
    lines: &mpsc::Receiver<String>,
    expected: usize,
) -> ServerReports {
    let mut reports = ServerReports::default();
    let mut seen = 0;
    while seen < expected {
        let Ok(line) = lines.recv_timeout(REPORT_WAIT) else {
            break;
        };
        let report: Value = serde_json::from_str(&line).unwrap_or_default();
        if report["event"] != "connection" {
            continue;
        }
        seen += 1;
        reports.frames_matched += report["frames_matched"].as_u64().unwrap_or(0);
        if report["outcome"] == "replayed" {
            reports.replayed += 1;
        } else if report["outcome"] == "incomplete" && report["frames_matched"] == 1 {
            reports.setup_only += 1;
        } else if reports.other.len() < 3 {
            reports.other.push(line.clone());
        } else {
            reports.other.push(String::new());
        }
    }
    reports.missing = (expected - seen) as u64;
    let _ = server.kill();
    let _ = server.wait();
    reports
}

fn field(line: &str, key: &str) -> f64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

fn run(tape: &Path, n: usize, seconds: u64) -> Option<String> {
    let (server, stdout, url) = start_server(tape);
    let lines = read_lines(stdout);
    let this = match std::env::current_exe() {
        Ok(path) => path,
        Err(error) => panic!("cannot find this bench's binary: {error}"),
    };
    let output = with_open_file_limit(&this)
        .env(ROLE_ENV, "client")
        .env(URL_ENV, &url)
        .env(PID_ENV, server.id().to_string())
        .env(SESSIONS_ENV, n.to_string())
        .env(SECONDS_ENV, seconds.to_string())
        .stderr(Stdio::inherit())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => panic!("the client did not run: {error}"),
    };
    let stdout_text = String::from_utf8_lossy(&output.stdout);
    let Some(line) = stdout_text.lines().find(|l| l.starts_with("CLIENT ")) else {
        eprintln!(
            "serve sessions: {n}: the client failed ({}):\n{stdout_text}",
            output.status
        );
        let mut server = server;
        drop(lines);
        let _ = server.kill();
        let _ = server.wait();
        return None;
    };
    let reports = server_reports(server, &lines, n + WARM_SESSIONS);
    let ticks = field(line, "ticks") as u64;
    let sent = field(line, "sent") as u64;
    // The server matched the setup and every chunk of the streamed sessions; the warm-up
    // sessions sent their setup only.
    let reported = (n + WARM_SESSIONS) as u64 - reports.missing;
    let chunks_matched = reports.frames_matched.saturating_sub(reported);
    let audio_lost = field(line, "audio_expected") as u64
        - (field(line, "audio_seen") as u64).min(field(line, "audio_expected") as u64);
    let transcripts_lost =
        (field(line, "transcripts_expected") as u64)
            .saturating_sub(field(line, "transcripts_seen") as u64);
    // With reports missing, the server's side is checked only for the connections it
    // reported: the chunks it matched are not compared with all that were sent.
    let chunks_lost = if reports.missing == 0 {
        sent.saturating_sub(chunks_matched)
    } else {
        0
    };
    // Every streamed session sent the tape's every chunk, so the server reports it
    // `replayed`; the warm-up sessions sent their setup only (`incomplete`, 1 frame).
    let not_replayed = ((n as u64).saturating_sub(reports.replayed)
        + (WARM_SESSIONS as u64).saturating_sub(reports.setup_only))
    .saturating_sub(reports.missing);
    let unsent = n as u64 * ticks - sent;
    let lost = audio_lost + transcripts_lost + chunks_lost + unsent;
    println!("{line}");
    println!(
        "serve sessions: {n} sessions, {seconds} s, over loopback WebSockets against reel serve ({url})"
    );
    println!(
        "  hand-off → on_audio: n={} p50={} p99={} p99.9={} max={}",
        field(line, "timed"),
        time(field(line, "p50")),
        time(field(line, "p99")),
        time(field(line, "p999")),
        time(field(line, "max"))
    );
    println!(
        "  send_audio → answer's on_audio (round trip through reel serve): p50={} p99={} p99.9={} max={}",
        time(field(line, "rt_p50")),
        time(field(line, "rt_p99")),
        time(field(line, "rt_p999")),
        time(field(line, "rt_max"))
    );
    println!(
        "  lost: {lost} (model audio {audio_lost}, transcriptions {transcripts_lost}, chunks the server did not match {chunks_lost}, chunks not sent {unsent}); connections not replayed: {not_replayed}"
    );
    if reports.missing > 0 {
        println!(
            "  server reports missing: {} of {} (reel serve keeps every report: a missing one is a defect); its matching checked for the other {reported}: {chunks_matched} chunks matched",
            reports.missing,
            n + WARM_SESSIONS
        );
    }
    for other in reports.other.iter().filter(|o| !o.is_empty()) {
        println!("    {other}");
    }
    println!(
        "  CPU over the streaming: client {:.1} %, server {:.1} % (100 % = one core); streamed {:.2} s (+{:.2} s drain)",
        field(line, "client_cpu"),
        field(line, "server_cpu"),
        field(line, "streamed_s"),
        field(line, "drain_s")
    );
    // CPU a session-tick (a chunk out, its model frame in, a fiftieth of a transcription):
    // what the load does not move much, unlike the latencies.
    let wall = field(line, "streamed_s") + field(line, "drain_s");
    let per_tick = |percent: f64| percent / 100.0 * wall / sent.max(1) as f64 * 1e6;
    println!(
        "  CPU a session-tick: client {:.1} µs, server {:.1} µs ({:.2} cores for {n} sessions at 50 ticks/s)",
        per_tick(field(line, "client_cpu")),
        per_tick(field(line, "server_cpu")),
        (per_tick(field(line, "client_cpu")) + per_tick(field(line, "server_cpu")))
            * n as f64
            * TICKS_PER_SECOND as f64
            / 1e6
    );
    println!(
        "  memory per session: client {:.1} KiB idle, {:.1} KiB streaming; server {:.1} KiB idle, {:.1} KiB streaming",
        field(line, "client_idle_kib"),
        field(line, "client_streaming_kib"),
        field(line, "server_idle_kib"),
        field(line, "server_streaming_kib")
    );
    println!(
        "  connect {:.2} s; pacer ticks late by over a tick: {}; open-file limit {}; load {} → {}",
        field(line, "connect_s"),
        field(line, "late_ticks"),
        field(line, "nofile"),
        line.split("load_before=")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("?"),
        line.split("load_after=").nth(1).unwrap_or("?")
    );
    let p99 = field(line, "p99") as u64;
    let p999 = field(line, "p999") as u64;
    println!(
        "  against the issue's targets (p99 ≤ 5 ms, p99.9 ≤ 20 ms, none lost): p99 {}, p99.9 {}, lost {}",
        if p99 <= TARGET_P99_NS {
            "met"
        } else {
            "missed"
        },
        if p999 <= TARGET_P999_NS {
            "met"
        } else {
            "missed"
        },
        if reports.missing > 0 {
            "unverified on the server's side (reports missing)"
        } else if lost == 0 && not_replayed == 0 {
            "none: met"
        } else {
            "missed"
        }
    );
    Some(line.to_owned())
}

fn main() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        client();
        return;
    }
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("serve_sessions: {message}");
            std::process::exit(2);
        }
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-serve");
    if let Err(error) = std::fs::create_dir_all(&dir) {
        panic!("cannot make {}: {error}", dir.display());
    }
    let tape = dir.join(format!("voice-{}s.wire.jsonl", options.seconds));
    write_tape(&tape, options.seconds * TICKS_PER_SECOND);
    for &n in &options.sessions {
        let _ = run(&tape, n, options.seconds);
    }
}
