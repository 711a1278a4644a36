//! Issue 32 items 1 and 2: N concurrent voice sessions in one process on 2 workers, what
//! each costs in memory, the fast lane's latency under that load, and (with `--record`)
//! what recording every session's wire log and journal costs.
//!
//! A plain `main` (`harness = false`), not criterion: this is a load test of one long run
//! per N, whose figures are percentiles over millions of frames and `VmRSS` deltas, not a
//! tight loop criterion could time. Each N runs in a fresh child process (this binary
//! re-run with `REEL_BENCH_ROLE=run`), so no N's `VmRSS` is flattered or burdened by memory
//! an earlier one freed.
//!
//! Each session is a real tree (`LiveSessionBuilder::connect`) over an in-memory link
//! (`support::MemoryConnector`, fed through its queue), with input transcription on and
//! a trivial `echo` tool registered. Once all are connected, pacers on the tokio clock (real
//! time: this is a load test) play both sides of every call, each 20 ms:
//!
//! - the model: one 20 ms 24 kHz audio frame (960 bytes of PCM, base64 in a
//!   `serverContent.modelTurn` frame) handed to the session's link;
//! - the application: one 20 ms 16 kHz chunk (640 bytes) through `LiveHandle::send_audio`,
//!   which the session writes to the link as `realtimeInput`;
//! - every 50th tick (each second) an `inputTranscription` frame; every 3,000th (each
//!   minute) a `toolCall` frame, which the session answers with a `toolResponse`.
//!
//! The sessions are spread over 50 groups (`--phases N`: N), each ticking 0.4 ms after the
//! previous, so the load is even over the 20 ms period rather than one burst; each group's
//! pacers walk a table of the group's own sessions. Each group has two pacer tasks,
//! one a side: a session's chunk from the application comes half a tick after its frame
//! from the model, as two independent streams do, so no session is woken once for both.
//!
//! **One runtime a core** (`--cores K`, [`shards`]): instead of the benches' runtime of two
//! workers, K current-thread runtimes on threads of their own, session `i` and its pacers on
//! runtime `i % K` — one process, sharded by core.
//!
//! **The floor** (`--floor`, [`floor`]): the same harness, link and callbacks, but each
//! session one plain task that decodes and encodes with the session's own codec and nothing
//! else — what no runtime could go below here; the tree's cost over the workload's is the
//! difference. `--floor-with stamp,route,…` (or `all`) adds the tree's per-frame guarantees
//! to the floor one at a time, each in its leanest one-task form ([`floor::Guarantees`]), to
//! price them at scale (decision 0089).
//!
//! **Latency** (as `fast_lane_latency` measures it): from the moment the link's receiver
//! hands a model audio frame to the transport to the session's `on_audio` callback. The
//! frame's sequence number is the first byte of its PCM; the receiver writes the hand-off
//! time in the session's ring of 256 slots at that index, the callback reads it back. The
//! latencies go into one log-linear histogram (16 steps per power of two: ≤ 6.25 % error)
//! shared by all sessions, each thread counting into its own copy of the buckets (as every
//! count the harness keeps a frame: `benches/shared/per_thread.rs`). A second histogram
//! times from the pacer's send to the callback (it includes the wait for the link's reader
//! task to be scheduled). Both time steady
//! streaming, from the end of the streaming's first second ([`WARM_UP`]): the pacers start
//! every session's streaming in the same 20 ms, so that second holds every session's first
//! frames, first chunk and first state writes at once, as no fleet's calls start; its own
//! figures are printed on a line of their own ("while starting"), not hidden (decision 0097).
//!
//! **Events lost** counts every frame both ways: model audio frames handed over against
//! `on_audio` calls; transcriptions against `on_input_transcript`; application chunks sent
//! against `realtimeInput` frames written to the link; tool calls against `toolResponse`
//! frames. It must be 0.
//!
//! **Memory**: `VmRSS` after 10 warm-up sessions and all the harness's own per-session
//! state (allocated before the first reading), then with N idle sessions (connected, setup
//! answered), then at the end of the streaming period: the deltas / N.
//!
//! **Idle CPU**: the process's CPU over 3 s with every session connected and nothing
//! streaming (what timers and ticks cost), printed after the idle memory reading.
//!
//! **Recording** (`--record`): each session writes its wire log
//! (`record_wire(FileWireRecorder)`) and its journal (`journal_sink(FileJournalSink)`) into
//! a temporary directory under `target/`; the write amplification is the bytes of those
//! files after the sessions end / the wire bytes both ways.
//!
//! ```sh
//! cargo bench -p reel-actors --bench many_sessions                       # 1k, 2k, 5k, 10k; 20 s each
//! cargo bench -p reel-actors --bench many_sessions -- --sessions 2000 --seconds 30
//! cargo bench -p reel-actors --bench many_sessions -- --sessions 1000,2000 --record
//! cargo bench -p reel-actors --bench many_sessions -- --sessions 10000 --floor
//! cargo bench -p reel-actors --bench many_sessions -- --sessions 10000 --floor-with stamp,route
//! cargo bench -p reel-actors --bench many_sessions -- --sessions 4000,5000,6000 --huge-pages
//! cargo bench --profile fleet -p reel-actors --bench many_sessions -- --sessions 4000 --huge-pages
//! ```
//!
//! **Huge pages** (`--huge-pages`): each run's process starts with glibc's tunables set so
//! that malloc backs its heaps with transparent huge pages (`HUGE_PAGE_TUNABLES`; the
//! kernel's mode must be `madvise` or `always`); every run prints how much of its heap was
//! huge-page backed while streaming, so the condition is read, not assumed. At thousands of
//! sessions a tick touches each session's structures cold, and with 4 KiB pages most of those
//! touches also miss the TLB (decision 0094).
//!
//! **Cold lines a session-tick** (`--tick-ms`, `scripts/fleet-lines`): under valgrind's
//! simulated caches, with the pacers' tick stretched so that the fifty-times-slower process
//! still gets each session's frames one at a time, two runs of different lengths give what
//! one session-tick costs in cache lines fetched cold, instructions and instruction-cache
//! misses: counts that do not move with the machine's load, to price a change to the tree's
//! layout in minutes where its CPU needs pairs of runs across hours.
//!
//! **What an idle session holds, site by site**: with `REEL_BENCH_EXIT_IDLE` set, the run
//! role exits right after its idle reading with every session live, so a heap profiler's
//! figures at exit are the idle sessions' (`docs/bench-log/fleet.md`, "Cut 3"):
//!
//! ```sh
//! REEL_BENCH_EXIT_IDLE=1 REEL_BENCH_ROLE=run valgrind --tool=dhat \
//!     target/release/deps/many_sessions-… --sessions 100 --seconds 1
//! ```

mod support;

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reel_actors::LiveHandle;
use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::FastCallbacks;
use reel_actors::transport::LinkFrame;
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::FileWireRecorder;
use reel_recorder::journal::FileJournalSink;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;
use tokio::task::JoinSet;

use support::{
    Fed, FedSender, LinkCounters, MemoryConnector, PerThread, anon_huge_bytes, cpu_time,
    load_average, rss_bytes, runtime, transparent_huge_pages,
};

#[path = "../../benches/shared/histogram.rs"]
mod histogram;
use histogram::Histogram;
#[path = "../../benches/shared/fleet_options.rs"]
mod fleet_options;
#[path = "fleet/shards.rs"]
mod shards;
use shards::Shards;
#[path = "fleet/floor.rs"]
mod floor;
use floor::{FloorSession, Guarantees};

const ROLE_ENV: &str = "REEL_BENCH_ROLE";
/// Set (to anything), the run role exits as soon as the idle reading is taken, leaving every
/// session live: under `valgrind --tool=dhat` the heap at exit is the idle sessions'.
const EXIT_IDLE_ENV: &str = "REEL_BENCH_EXIT_IDLE";

/// glibc's tunables, read once as a process starts.
const HUGE_PAGE_TUNABLES_ENV: &str = "GLIBC_TUNABLES";

/// What `--huge-pages` gives each run's process (decision 0094): `hugetlb=1` has malloc
/// advise the kernel to back its heaps with transparent huge pages (`MADV_HUGEPAGE`, so it
/// works with the kernel's `madvise` mode as well as `always`), and a 64 MiB `top_pad`
/// grows each heap by whole huge pages' worth at a time: without it the worker threads'
/// arenas grow a few pages at a time, and almost none of them is ever huge-page backed.
const HUGE_PAGE_TUNABLES: &str = "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864";

/// Whether this process started with [`HUGE_PAGE_TUNABLES`].
fn huge_page_tunables_set() -> bool {
    std::env::var(HUGE_PAGE_TUNABLES_ENV).is_ok_and(|value| value.contains("malloc.hugetlb=1"))
}

const WARM_SESSIONS: usize = 10;
/// How long the connected sessions are left idle, their CPU measured, before streaming.
const IDLE_CPU_WINDOW: Duration = Duration::from_secs(3);
const CONNECT_BATCH: usize = 100;
/// One tick: 20 ms of audio each way.
const TICK: Duration = Duration::from_millis(20);
/// The longest tick `--tick-ms` takes.
const MAX_TICK_MS: u64 = 10_000;
/// Ticks between transcriptions (1 s) and between tool calls (60 s).
const TRANSCRIPT_EVERY: u64 = 50;
const TOOL_CALL_EVERY: u64 = 3_000;
/// The streaming's first stretch, timed apart from the rest (decision 0097): every session's
/// first frames and first state writes fall in the same 20 ms, as no fleet's calls do.
const WARM_UP: Duration = Duration::from_secs(1);
/// Pacer tasks a side (`--phases`' default): the sessions are dealt round-robin, each
/// pacer a tick / 50 after the last.
const PACERS: usize = 50;
/// The most pacers a side `--phases` takes.
const MAX_PHASES: usize = 2_000;
/// The most runtimes `--cores` starts.
const MAX_CORES: u64 = 64;
/// Slots of a session's hand-off ring (5.12 s of frames at 50/s).
const RING: usize = 256;
/// 20 ms of 24 kHz PCM16 (model audio) and of 16 kHz PCM16 (the application's).
const MODEL_PCM_BYTES: usize = 960;
const APP_PCM_BYTES: usize = 640;
const TARGET_P99_NS: u64 = 5_000_000;
const TARGET_P999_NS: u64 = 20_000_000;
const TARGET_IDLE_BYTES: f64 = 64.0 * 1024.0;
const TARGET_STREAMING_BYTES: f64 = 256.0 * 1024.0;

// ---------------------------------------------------------------------------------------
// Frames.
// ---------------------------------------------------------------------------------------

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (k, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `frame` with its bytes made static: the harness's frames live as long as the process
/// (leaked once at the start of a run), so handing one to a session is a copy of a pointer,
/// not an atomic on a reference count every session's frame of that tick shares. Cloned
/// from one shared `Bytes`, each frame's count was bumped by every session a pacer feeds
/// and dropped by their readers on the other core: a line thrown between the two cores
/// hundreds of thousands of times a second, which is the harness's cost, not the
/// session's — a socket's frame is its reader's own.
fn leaked(frame: LinkFrame) -> LinkFrame {
    LinkFrame {
        kind: frame.kind,
        bytes: leaked_bytes(&frame.bytes),
    }
}

/// `bytes`' content as static bytes (see [`leaked`]).
fn leaked_bytes(bytes: &[u8]) -> Bytes {
    Bytes::from_static(Box::leak(bytes.to_vec().into_boxed_slice()))
}

/// The model's 20 ms audio frame whose PCM starts with `seq` (a ring index).
fn model_audio_frame(seq: u8) -> LinkFrame {
    let mut pcm = vec![0u8; MODEL_PCM_BYTES];
    for (i, byte) in pcm.iter_mut().enumerate() {
        *byte = (i % 251) as u8;
    }
    pcm[0] = seq;
    let value = json!({"serverContent": {"modelTurn": {"parts": [
        {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": base64(&pcm)}}
    ]}}});
    LinkFrame::text(value.to_string())
}

fn transcript_frame() -> LinkFrame {
    LinkFrame::text(
        json!({"serverContent": {"inputTranscription": {"text": "I'd like to check my order"}}})
            .to_string(),
    )
}

fn tool_call_frame() -> LinkFrame {
    LinkFrame::text(
        json!({"toolCall": {"functionCalls": [
            {"id": "call-1", "name": "echo", "args": {"order": "A-1042"}}
        ]}})
        .to_string(),
    )
}

struct Frames {
    audio: Vec<LinkFrame>,
    transcript: LinkFrame,
    tool_call: LinkFrame,
    app_pcm: Bytes,
}

// ---------------------------------------------------------------------------------------
// One session and what the bench keeps of it.
// ---------------------------------------------------------------------------------------

/// The harness's per-session state, allocated before the first `VmRSS` reading: each ring
/// index's send and hand-off times side by side (nanoseconds since [`now_ns`]'s start, 0 =
/// not yet), in one allocation.
///
/// One allocation, not a probe pointing at two arrays of stamps: a pacer's send, the link's
/// hand-off and the callback's reading each chased two pointers to their slot, three cold
/// lines one after the other a frame, and the send and the hand-off of a frame were two
/// lines. Nothing else: the counts a frame bumps are the run's, a copy a thread ([`Counted`]),
/// and the clock's start is the process's, so a frame reads no line of the probe but its
/// ring index's. That is the harness's cost, not the session's (`docs/bench-log/fleet.md`).
#[repr(C, align(64))]
struct Probe {
    /// `[sent, handed]` by ring index.
    times: [[AtomicU64; 2]; RING],
}

/// Which of a ring index's two times.
const SENT: usize = 0;
const HANDED: usize = 1;

impl Probe {
    fn new() -> Self {
        Probe {
            times: std::array::from_fn(|_| [AtomicU64::new(0), AtomicU64::new(0)]),
        }
    }

    /// Writes `now` (a [`now_ns`] reading) as ring index `index`'s time `which` ([`SENT`] or
    /// [`HANDED`]).
    fn record(&self, index: usize, which: usize, now: u64) {
        if let Some(slot) = self.times.get(index).and_then(|pair| pair.get(which)) {
            slot.store(now, Ordering::Release);
        }
    }

    /// Ring index `index`'s time `which` (0 if never written).
    fn time(&self, index: usize, which: usize) -> u64 {
        self.times
            .get(index)
            .and_then(|pair| pair.get(which))
            .map_or(0, |slot| slot.load(Ordering::Acquire))
    }
}

impl support::HandOff for Probe {
    fn handed(&self, index: usize) {
        self.record(index, HANDED, now_ns());
    }
}

/// The process's clock start for the probes' times: one line every core reads and none
/// writes once set.
static START: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since [`START`] (at least 1: 0 means "not yet" in a [`Probe`]).
fn now_ns() -> u64 {
    support::nanos_since(*START.get_or_init(Instant::now))
}

/// What a group of sessions' links and callbacks counted, added up over the threads that
/// counted it: the measured sessions have one, the warm-up's theirs.
#[derive(Default)]
struct Counted {
    link: Arc<LinkCounters>,
    seen: PerThread<Seen>,
}

/// One thread's count of the fast callbacks that ran.
#[derive(Default)]
struct Seen {
    audio: AtomicU64,
    transcripts: AtomicU64,
}

impl Counted {
    /// Model audio frames and transcriptions the callbacks saw.
    fn seen(&self) -> (u64, u64) {
        self.seen.each().fold((0, 0), |(audio, transcripts), seen| {
            (
                audio + seen.audio.load(Ordering::Acquire),
                transcripts + seen.transcripts.load(Ordering::Acquire),
            )
        })
    }
}

struct Shared {
    /// Steady streaming, from [`WARM_UP`] after the pacers start: the figures the row
    /// reports and the targets are judged on.
    handoff: Histogram,
    from_send: Histogram,
    /// The first [`WARM_UP`] of the streaming, printed beside the steady figures.
    starting_handoff: Histogram,
    starting_from_send: Histogram,
    /// Which histograms the callbacks time into ([`Timing`]): connect-time frames are not
    /// timed.
    timing: AtomicU8,
}

/// What the fast callbacks time into, as a [`Shared::timing`] value.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Timing {
    /// Connecting and idle: nothing is timed.
    Off = 0,
    /// The streaming's first [`WARM_UP`].
    Starting = 1,
    /// Steady streaming.
    Steady = 2,
}

impl Shared {
    fn time(&self, timing: Timing) {
        self.timing.store(timing as u8, Ordering::Release);
    }

    /// The hand-off and from-send histograms a frame timed now goes into, if any.
    fn timing_into(&self) -> Option<(&Histogram, &Histogram)> {
        let timing = self.timing.load(Ordering::Relaxed);
        if timing == Timing::Starting as u8 {
            Some((&self.starting_handoff, &self.starting_from_send))
        } else if timing == Timing::Steady as u8 {
            Some((&self.handoff, &self.from_send))
        } else {
            None
        }
    }
}

struct Session {
    side: Side,
    link: FedSender,
    probe: Arc<Probe>,
}

/// What the application holds of a session: a tree's handle, or a floor session.
enum Side {
    Tree(LiveHandle),
    Floor(FloorSession),
}

impl Side {
    /// Hands the application's chunk over; `false` if the session refused it.
    fn send_audio(&self, pcm: Bytes) -> bool {
        match self {
            Side::Tree(handle) => handle.send_audio(pcm).is_ok(),
            Side::Floor(floor) => floor.send_audio(pcm),
        }
    }
}

fn echo_tools() -> ToolDispatcher {
    let mut tools = ToolDispatcher::new();
    let registered = tools.register(SimpleTool::new(
        "echo",
        "Answers its arguments.",
        None,
        |args, _ctx| async move { Ok(json!({"echo": args})) },
    ));
    if let Err(error) = registered {
        panic!("the echo tool does not register: {error}");
    }
    tools
}

/// The application's callbacks of a session whose harness state is `probe`: they count
/// what arrives and time each model audio frame.
fn probe_callbacks(
    probe: &Arc<Probe>,
    shared: &Arc<Shared>,
    tally: &Arc<Counted>,
) -> FastCallbacks {
    let (audio_probe, audio_shared, audio_tally) =
        (Arc::clone(probe), Arc::clone(shared), Arc::clone(tally));
    let transcript_tally = Arc::clone(tally);
    FastCallbacks {
        on_audio: Some(Arc::new(move |pcm: &Bytes| {
            audio_tally
                .seen
                .mine()
                .audio
                .fetch_add(1, Ordering::Relaxed);
            let Some((handoff, from_send)) = audio_shared.timing_into() else {
                return;
            };
            let Some(&seq) = pcm.first() else { return };
            let now = now_ns();
            let handed = audio_probe.time(usize::from(seq), HANDED);
            let sent = audio_probe.time(usize::from(seq), SENT);
            if handed != 0 {
                handoff.record(now.saturating_sub(handed));
            }
            if sent != 0 {
                from_send.record(now.saturating_sub(sent));
            }
        })),
        on_input_transcript: Some(Arc::new(move |_text: &str, _finished: bool| {
            transcript_tally
                .seen
                .mine()
                .transcripts
                .fetch_add(1, Ordering::Relaxed);
        })),
        ..FastCallbacks::default()
    }
}

fn session_builder(
    probe: &Arc<Probe>,
    (shared, tally): (&Arc<Shared>, &Arc<Counted>),
    record: Option<&PathBuf>,
    i: usize,
) -> (LiveSessionBuilder, FedSender) {
    let (connector, link) =
        MemoryConnector::fed_counted(Some(Arc::clone(probe) as _), Arc::clone(&tally.link));
    let config = SessionConfig::new("bench-model").input_transcription();
    let mut builder = LiveSessionBuilder::new(config, ApiEndpoint::google_ai("bench-key"))
        .connector(Arc::new(connector))
        .dispatcher(echo_tools())
        .fast_callbacks(probe_callbacks(probe, shared, tally));
    if let Some(dir) = record {
        let wire = match FileWireRecorder::create(dir.join(format!("s{i}.wire.jsonl"))) {
            Ok(wire) => wire,
            Err(error) => panic!("cannot create session {i}'s wire log: {error}"),
        };
        let journal = match FileJournalSink::create(dir.join(format!("s{i}.journal.jsonl"))) {
            Ok(journal) => journal,
            Err(error) => panic!("cannot create session {i}'s journal: {error}"),
        };
        builder = builder
            .record_wire(Arc::new(wire))
            .journal_sink(Arc::new(journal));
    }
    (builder, link)
}

// ---------------------------------------------------------------------------------------
// The run of one N, in a child process.
// ---------------------------------------------------------------------------------------

struct Options {
    sessions: Vec<usize>,
    seconds: u64,
    record: bool,
    /// Run the workload's floor ([`floor`]) instead of the tree, keeping these of the
    /// tree's guarantees (`--floor-with`; none with `--floor`).
    floor: Option<Guarantees>,
    /// Back the heap with transparent huge pages (`--huge-pages`): each run's process gets
    /// [`HUGE_PAGE_TUNABLES`] (decision 0094).
    huge_pages: bool,
    /// The pacers' period (`--tick-ms`; [`TICK`] unless profiling).
    tick: Duration,
    /// Pacers a side (`--phases`; [`PACERS`] by default): the instants of a tick at which
    /// the sessions' frames arrive, each pacer's sessions' together.
    phases: usize,
    /// One current-thread runtime a core, sessions sharded over them (`--cores K`; 0: the
    /// benches' runtime of two workers).
    cores: usize,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        sessions: vec![1_000, 2_000, 5_000, 10_000],
        seconds: 20,
        record: false,
        floor: None,
        huge_pages: false,
        tick: TICK,
        phases: PACERS,
        cores: 0,
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
            "--record" => options.record = true,
            "--tick-ms" => {
                let value = args.next().ok_or("--tick-ms needs a value, e.g. 400")?;
                options.tick = tick(&value)?;
            }
            "--huge-pages" => options.huge_pages = true,
            "--phases" => {
                let value = args.next().ok_or("--phases needs a value, e.g. 200")?;
                options.phases = phases(&value)?;
            }
            "--cores" => {
                let value = args.next().ok_or("--cores needs a value, e.g. 2")?;
                options.cores = bounded("--cores", &value, 1..=MAX_CORES)? as usize;
            }
            "--floor" => {
                options.floor.get_or_insert_with(Guarantees::default);
            }
            "--floor-with" => {
                let value = args
                    .next()
                    .ok_or("--floor-with needs a list, e.g. stamp,route (or all)")?;
                options.floor = Some(Guarantees::parse(&value)?);
            }
            "--bench" => {} // cargo bench passes it
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.cores > 0 && !options.phases.is_multiple_of(options.cores) {
        return Err(format!(
            "--cores {} must divide the phases ({}): a pacer's sessions share a shard",
            options.cores, options.phases
        ));
    }
    if options.floor.is_some() && options.record {
        return Err("--floor has no tree to record: use one or the other".to_owned());
    }
    Ok(options)
}

/// The pacers' period from `--tick-ms`: for profiling under valgrind, which runs the
/// process some fifty times slower, a longer tick keeps each session's frames arriving one
/// at a time, as they do at 20 ms without it (the bench log's "cold lines a session-tick").
/// Every rate the workload has is counted in ticks, so the mix stays the same.
fn tick(value: &str) -> Result<Duration, String> {
    bounded("--tick-ms", value, 1..=MAX_TICK_MS).map(Duration::from_millis)
}

/// The pacers a side from `--phases`: how many instants of a tick the sessions' frames
/// arrive at (a pacer's sessions' frames come together). Independent calls' ticks fall
/// anywhere in 20 ms; 50 instants put 200 sessions' frames in one at 10,000 sessions.
fn phases(value: &str) -> Result<usize, String> {
    bounded("--phases", value, 1..=MAX_PHASES as u64).map(|phases| phases as usize)
}

/// The value of option `flag`, a whole number in `range`.
fn bounded(flag: &str, value: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    let n: u64 = value
        .parse()
        .map_err(|error| format!("{flag} {value}: {error}"))?;
    if !range.contains(&n) {
        return Err(format!(
            "{flag} {value}: must be {} to {}",
            range.start(),
            range.end()
        ));
    }
    Ok(n)
}

/// What one run measured; printed as one `ROW` line for the parent's table.
#[derive(Default)]
struct Row {
    sessions: usize,
    record: bool,
    /// The floor's guarantees when the floor ran (`None`: the tree).
    floor: Option<Guarantees>,
    p50: u64,
    p99: u64,
    p999: u64,
    max: u64,
    send_p99: u64,
    send_p999: u64,
    timed: u64,
    lost: u64,
    idle_bytes: f64,
    streaming_bytes: f64,
    cpu_percent: f64,
    wire_bytes: u64,
    written_bytes: u64,
    load_before: String,
    load_after: String,
    /// The process's anonymous memory in transparent huge pages at the streaming reading.
    huge_bytes: u64,
    /// Whether the run asked for huge pages (`--huge-pages`).
    huge_pages: bool,
}

/// Connects the sessions `i < n` with `i % of == shard` (all of them with `(0, 1)`), each
/// with its number.
async fn connect_all(
    n: usize,
    probes: &[Arc<Probe>],
    (shared, tally): (&Arc<Shared>, &Arc<Counted>),
    record: Option<&PathBuf>,
    (floor, (shard, of)): (Option<Guarantees>, (usize, usize)),
) -> Vec<(usize, Session)> {
    let mine = |i: &usize| *i % of.max(1) == shard;
    if let Some(kept) = floor {
        return probes
            .iter()
            .take(n)
            .enumerate()
            .filter(|(i, _)| mine(i))
            .map(|(i, probe)| {
                let (link, model) = support::fed_queue();
                let side = Side::Floor(FloorSession::spawn(
                    link.clone(),
                    model,
                    Arc::clone(probe) as _,
                    Arc::clone(&tally.link),
                    probe_callbacks(probe, shared, tally),
                    kept,
                ));
                let session = Session {
                    side,
                    link,
                    probe: Arc::clone(probe),
                };
                (i, session)
            })
            .collect();
    }
    let mut sessions = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let end = (start + CONNECT_BATCH).min(n);
        let mut batch = JoinSet::new();
        for (i, probe) in probes.iter().enumerate().take(end).skip(start) {
            if !mine(&i) {
                continue;
            }
            let (builder, link) = session_builder(probe, (shared, tally), record, i);
            let probe = Arc::clone(probe);
            batch.spawn(async move {
                match builder.connect().await {
                    Ok(handle) => (
                        i,
                        Session {
                            side: Side::Tree(handle),
                            link,
                            probe,
                        },
                    ),
                    Err(error) => panic!("session {i} did not go live: {error}"),
                }
            });
        }
        let mut done = batch.join_all().await;
        done.sort_by_key(|(i, _)| *i);
        sessions.extend(done);
        start = end;
    }
    sessions
}

/// [`connect_all`] run by a task on the runtime's workers, as a server builds a session for
/// each call it accepts, rather than on the thread that runs the bench's `block_on`: there,
/// each connecting session's task (its `connect` future, 13.7 KiB) and its builder were
/// allocated in that thread's own malloc arena, between the long-lived parts of the sessions
/// before it, which cost 8 KiB of RSS a session that no session holds (fleet.md, "Cut 3").
///
/// With `shards`, each shard connects its own sessions (session `i` on shard `i % K`), so
/// their tasks are that shard's.
async fn connect_on_a_worker(
    n: usize,
    probes: &[Arc<Probe>],
    (shared, tally): (&Arc<Shared>, &Arc<Counted>),
    record: Option<&PathBuf>,
    (floor, shards): (Option<Guarantees>, Option<&Shards>),
) -> Vec<(usize, Session)> {
    let of = shards.map_or(1, Shards::count);
    let mut connecting = Vec::new();
    for shard in 0..of {
        let (probes, shared, tally, record) = (
            probes.to_vec(),
            Arc::clone(shared),
            Arc::clone(tally),
            record.cloned(),
        );
        let connect = async move {
            let kept = (floor, (shard, of));
            connect_all(n, &probes, (&shared, &tally), record.as_ref(), kept).await
        };
        connecting.push(match shards {
            Some(shards) => Box::pin(shards.run(shard, connect)) as BoxFuture<'static, _>,
            None => Box::pin(async move {
                match tokio::spawn(connect).await {
                    Ok(sessions) => sessions,
                    Err(error) => panic!("the sessions did not connect: {error}"),
                }
            }),
        });
    }
    let mut sessions: Vec<(usize, Session)> = futures_util::future::join_all(connecting)
        .await
        .into_iter()
        .flatten()
        .collect();
    sessions.sort_by_key(|(i, _)| *i);
    sessions
}

/// What the pacers sent.
#[derive(Default)]
struct Sent {
    audio_in: AtomicU64,
    app_audio: AtomicU64,
    transcripts: AtomicU64,
    tool_calls: AtomicU64,
    /// Ticks a pacer ran late by more than a whole tick.
    late_ticks: AtomicU64,
}

/// Which side of the calls a pacer plays.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Play {
    /// The model: audio frames, transcriptions and tool calls into the sessions' links.
    Model,
    /// The application: its 20 ms chunks through `send_audio`.
    App,
}

/// Plays `play`'s side of the sessions of `group` (each with its number) for `ticks` ticks.
async fn pace(
    group: Arc<Vec<(usize, Session)>>,
    frames: Arc<Frames>,
    sent: Arc<Sent>,
    (play, offset): (Play, Duration),
    (period, ticks): (Duration, u64),
) {
    let start = tokio::time::Instant::now() + offset;
    let mut tick = tokio::time::interval_at(start, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    // Counted here and added to the shared counts once, at the end: a count every pacer
    // bumps a frame would be one more line thrown between the two cores (see [`leaked`]).
    let mut mine = Tally::default();
    for k in 0..ticks {
        let due = tick.tick().await;
        if due.elapsed() > period {
            mine.late_ticks += 1;
        }
        let ring = (k % RING as u64) as usize;
        for &(i, ref session) in group.iter() {
            if play == Play::App {
                if session.side.send_audio(frames.app_pcm.clone()) {
                    mine.app_audio += 1;
                }
                continue;
            }
            // Each session's transcription and tool call fall on their own tick.
            let phase = (i as u64 * 7919) % TOOL_CALL_EVERY;
            session.probe.record(ring, SENT, now_ns());
            let fed = Fed {
                index: Some(ring),
                frame: frames.audio[ring].clone(),
            };
            if session.link.send(fed).is_ok() {
                mine.audio_in += 1;
            }
            if (k + phase).is_multiple_of(TRANSCRIPT_EVERY) {
                let fed = Fed {
                    index: None,
                    frame: frames.transcript.clone(),
                };
                if session.link.send(fed).is_ok() {
                    mine.transcripts += 1;
                }
            }
            if (k + phase).is_multiple_of(TOOL_CALL_EVERY) {
                let fed = Fed {
                    index: None,
                    frame: frames.tool_call.clone(),
                };
                if session.link.send(fed).is_ok() {
                    mine.tool_calls += 1;
                }
            }
        }
    }
    mine.add_to(&sent);
}

/// What one pacer sent, added to [`Sent`] when it ends.
#[derive(Default)]
struct Tally {
    audio_in: u64,
    app_audio: u64,
    transcripts: u64,
    tool_calls: u64,
    late_ticks: u64,
}

impl Tally {
    fn add_to(&self, sent: &Sent) {
        sent.audio_in.fetch_add(self.audio_in, Ordering::Relaxed);
        sent.app_audio.fetch_add(self.app_audio, Ordering::Relaxed);
        sent.transcripts
            .fetch_add(self.transcripts, Ordering::Relaxed);
        sent.tool_calls
            .fetch_add(self.tool_calls, Ordering::Relaxed);
        sent.late_ticks
            .fetch_add(self.late_ticks, Ordering::Relaxed);
    }
}

/// Ends every session: how many ended cleanly.
async fn disconnect_all(sides: Vec<Side>) -> usize {
    let mut set = JoinSet::new();
    for side in sides {
        set.spawn(async move {
            match side {
                Side::Tree(handle) => {
                    tokio::time::timeout(Duration::from_secs(60), handle.disconnect())
                        .await
                        .is_ok_and(|end| !end.failed)
                }
                Side::Floor(floor) => floor.close().await,
            }
        });
    }
    set.join_all().await.into_iter().filter(|c| *c).count()
}

fn dir_bytes(dir: &PathBuf) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0)
}

/// `target/` (the bench binary is `target/release/deps/many_sessions-…`).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    this_binary()
        .ancestors()
        .nth(3)
        .map_or_else(std::env::temp_dir, PathBuf::from)
}

async fn run(
    n: usize,
    seconds: u64,
    record: bool,
    floor: Option<Guarantees>,
    huge_pages: bool,
    (period, phases, cores): (Duration, usize, usize),
) -> Row {
    let load_before = load_average();
    let shared = Arc::new(Shared {
        handoff: Histogram::new(),
        from_send: Histogram::new(),
        starting_handoff: Histogram::new(),
        starting_from_send: Histogram::new(),
        timing: AtomicU8::new(Timing::Off as u8),
    });
    let frames = Arc::new(Frames {
        audio: (0..RING)
            .map(|seq| leaked(model_audio_frame(seq as u8)))
            .collect(),
        transcript: leaked(transcript_frame()),
        tool_call: leaked(tool_call_frame()),
        app_pcm: leaked_bytes(&[0u8; APP_PCM_BYTES]),
    });
    let dir = record.then(|| {
        let dir = target_dir()
            .join("bench-many-sessions")
            .join(format!("run-{}", std::process::id()));
        if let Err(error) = std::fs::create_dir_all(&dir) {
            panic!("cannot create {}: {error}", dir.display());
        }
        dir
    });
    let make_probe = |_| Arc::new(Probe::new());
    let (warm_tally, tally) = (Arc::new(Counted::default()), Arc::new(Counted::default()));
    let warm_probes: Vec<Arc<Probe>> = (0..WARM_SESSIONS).map(make_probe).collect();
    let warm_dir = dir.as_ref().map(|d| d.join("warm"));
    if let Some(warm_dir) = &warm_dir {
        let _ = std::fs::create_dir_all(warm_dir);
    }
    let warm = connect_on_a_worker(
        WARM_SESSIONS,
        &warm_probes,
        (&shared, &warm_tally),
        warm_dir.as_ref(),
        (floor, None),
    )
    .await;
    // The harness's per-session state, before the first reading.
    let probes: Vec<Arc<Probe>> = (0..n).map(make_probe).collect();
    let sent = Arc::new(Sent::default());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = rss_bytes();

    let shards = (cores > 0).then(|| Shards::start(cores));
    let sessions = connect_on_a_worker(
        n,
        &probes,
        (&shared, &tally),
        dir.as_ref(),
        (floor, shards.as_ref()),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let rss_idle = rss_bytes();
    println!(
        "  {n} sessions connected: RSS {:.1} → {:.1} MiB ({:.1} KiB per idle session)",
        mib(rss_before),
        mib(rss_idle),
        rss_idle.saturating_sub(rss_before) as f64 / 1024.0 / n as f64
    );
    // What connected sessions cost with nothing streaming (timers, ticks): the process's
    // CPU over a few idle seconds.
    let idle_cpu_start = cpu_time();
    tokio::time::sleep(IDLE_CPU_WINDOW).await;
    let idle_cpu = cpu_time().saturating_sub(idle_cpu_start);
    println!(
        "  idle for {:.0} s: {:.1} % CPU",
        IDLE_CPU_WINDOW.as_secs_f64(),
        100.0 * idle_cpu.as_secs_f64() / IDLE_CPU_WINDOW.as_secs_f64()
    );
    if std::env::var_os(EXIT_IDLE_ENV).is_some() {
        // For a heap profiler: what is live at exit is what the idle sessions (and the
        // harness) hold — DHAT's "at end" figures, site by site.
        std::process::exit(0);
    }

    // Stream. Each pacer's sessions in a table of its own, in the order it feeds them: the
    // harness's table read as it is walked, a line for several sessions, while what each
    // session holds stays where it was allocated (every 50th session a pacer's).
    let mut groups: Vec<Vec<(usize, Session)>> = (0..phases).map(|_| Vec::new()).collect();
    for (i, session) in sessions {
        if let Some(group) = groups.get_mut(i % phases) {
            group.push((i, session));
        }
    }
    let groups: Vec<Arc<Vec<(usize, Session)>>> = groups.into_iter().map(Arc::new).collect();
    let ticks = seconds * 1_000 / period.as_millis().max(1) as u64;
    shared.time(Timing::Starting);
    let cpu_start = cpu_time();
    let started = Instant::now();
    // On the shards, each pacer runs where its sessions are (`--cores` divides the phases, so
    // a group's sessions are all on shard `p % K`).
    let mut pacers: Vec<BoxFuture<'static, ()>> = Vec::new();
    for (p, group) in groups.iter().enumerate() {
        let offset = period * p as u32 / phases as u32;
        // A call's two directions are not in step: the application's chunk of a session
        // comes half a tick after the model's frame, so no session is woken once for both.
        for play in [(Play::Model, offset), (Play::App, offset + period / 2)] {
            let pacer = pace(
                Arc::clone(group),
                Arc::clone(&frames),
                Arc::clone(&sent),
                play,
                (period, ticks),
            );
            pacers.push(match &shards {
                Some(shards) => Box::pin(shards.run(p, pacer)),
                None => {
                    let pacer = tokio::spawn(pacer);
                    Box::pin(async move {
                        if let Err(error) = pacer.await {
                            panic!("a pacer failed: {error}");
                        }
                    })
                }
            });
        }
    }
    // The steady figures from the end of the warm-up (a run no longer than it has none); the
    // streaming reading 1 s before the end.
    let reading_at = Duration::from_secs(seconds.saturating_sub(1).max(1));
    let mut waited = Duration::ZERO;
    if Duration::from_secs(seconds) > WARM_UP {
        tokio::time::sleep(WARM_UP).await;
        shared.time(Timing::Steady);
        waited = WARM_UP;
    }
    tokio::time::sleep(reading_at.saturating_sub(waited)).await;
    let rss_streaming = rss_bytes();
    let huge_bytes = anon_huge_bytes();
    futures_util::future::join_all(pacers).await;
    let streamed = started.elapsed();
    // Wait (at most 30 s) for every frame to arrive.
    let expect_audio = sent.audio_in.load(Ordering::Acquire);
    let expect_transcripts = sent.transcripts.load(Ordering::Acquire);
    let seen = |tally: &Counted| -> (u64, u64, u64, u64) {
        let (audio, transcripts) = tally.seen();
        (
            audio,
            transcripts,
            tally.link.realtime_out(),
            tally.link.tool_responses_out(),
        )
    };
    let expect_app = sent.app_audio.load(Ordering::Acquire);
    let expect_tools = sent.tool_calls.load(Ordering::Acquire);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (audio, transcripts, app, tools) = seen(&tally);
        let done = audio >= expect_audio
            && transcripts >= expect_transcripts
            && app >= expect_app
            && tools >= expect_tools;
        if done || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cpu = cpu_time().saturating_sub(cpu_start);
    let drained = started.elapsed();
    let (audio, transcripts, app, tools) = seen(&tally);
    let lost = expect_audio.saturating_sub(audio)
        + expect_transcripts.saturating_sub(transcripts)
        + expect_app.saturating_sub(app)
        + expect_tools.saturating_sub(tools);
    let wire_bytes = tally.link.bytes_in() + tally.link.bytes_out();
    println!(
        "  streamed {:.2} s (+{:.2} s to drain); frames: model audio {audio}/{expect_audio}, \
         transcriptions {transcripts}/{expect_transcripts}, app audio {app}/{expect_app}, \
         tool calls answered {tools}/{expect_tools}; pacer ticks late by > {} ms: {}",
        streamed.as_secs_f64(),
        drained.saturating_sub(streamed).as_secs_f64(),
        period.as_millis(),
        sent.late_ticks.load(Ordering::Relaxed)
    );
    println!(
        "  timed in steady streaming, from {} s after it began (its first second: the line \
         after the next two):",
        WARM_UP.as_secs()
    );
    println!(
        "  hand-off → on_audio: n={} p50={} p99={} p99.9={} max={}",
        shared.handoff.count(),
        ms(shared.handoff.percentile(50.0)),
        ms(shared.handoff.percentile(99.0)),
        ms(shared.handoff.percentile(99.9)),
        ms(shared.handoff.max()),
    );
    println!(
        "  pacer send → on_audio: p50={} p99={} p99.9={} max={}",
        ms(shared.from_send.percentile(50.0)),
        ms(shared.from_send.percentile(99.0)),
        ms(shared.from_send.percentile(99.9)),
        ms(shared.from_send.max()),
    );
    println!(
        "  while starting (the first {} s, every session's first frames at once): hand-off \
         n={} p99={} p99.9={} max={}; from the pacer's send p99={} p99.9={} max={}",
        WARM_UP.as_secs(),
        shared.starting_handoff.count(),
        ms(shared.starting_handoff.percentile(99.0)),
        ms(shared.starting_handoff.percentile(99.9)),
        ms(shared.starting_handoff.max()),
        ms(shared.starting_from_send.percentile(99.0)),
        ms(shared.starting_from_send.percentile(99.9)),
        ms(shared.starting_from_send.max()),
    );

    // Each session ended on the shard it lives on (all on this runtime without shards).
    let of = shards.as_ref().map_or(1, Shards::count);
    let mut sides: Vec<Vec<Side>> = (0..of).map(|_| Vec::new()).collect();
    for group in groups {
        match Arc::try_unwrap(group) {
            Ok(group) => {
                for (i, session) in group {
                    if let Some(shard) = sides.get_mut(i % of) {
                        shard.push(session.side);
                    }
                }
            }
            Err(_) => panic!("a pacer still holds its sessions"),
        }
    }
    let mut clean = 0;
    for (k, shard) in sides.into_iter().enumerate() {
        clean += match &shards {
            Some(shards) => shards.run(k, disconnect_all(shard)).await,
            None => disconnect_all(shard).await,
        };
    }
    disconnect_all(warm.into_iter().map(|(_, s)| s.side).collect()).await;
    let written_bytes = dir.as_ref().map_or(0, dir_bytes);
    if let Some(dir) = &dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    println!("  sessions ended cleanly: {clean} of {n}");
    println!(
        "  heap in transparent huge pages while streaming: {:.1} of {:.1} MiB (THP mode {}; \
         GLIBC_TUNABLES {})",
        mib(huge_bytes),
        mib(rss_streaming),
        transparent_huge_pages(),
        std::env::var("GLIBC_TUNABLES").unwrap_or_else(|_| "unset".to_owned()),
    );
    Row {
        sessions: n,
        record,
        floor,
        p50: shared.handoff.percentile(50.0),
        p99: shared.handoff.percentile(99.0),
        p999: shared.handoff.percentile(99.9),
        max: shared.handoff.max(),
        send_p99: shared.from_send.percentile(99.0),
        send_p999: shared.from_send.percentile(99.9),
        timed: shared.handoff.count(),
        lost,
        idle_bytes: rss_idle.saturating_sub(rss_before) as f64 / n as f64,
        streaming_bytes: rss_streaming.saturating_sub(rss_before) as f64 / n as f64,
        cpu_percent: 100.0 * cpu.as_secs_f64() / drained.as_secs_f64(),
        wire_bytes,
        written_bytes,
        load_before,
        load_after: load_average(),
        huge_bytes,
        huge_pages,
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ms(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.0} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

impl Row {
    /// What ran: the tree, recording or not, or the floor with the guarantees it kept.
    fn run(&self) -> String {
        let run = match (self.floor, self.record) {
            (Some(kept), _) if kept == Guarantees::default() => "floor".to_owned(),
            (Some(kept), _) => format!("floor + {}", kept.label()),
            (None, true) => "tree, recording".to_owned(),
            (None, false) => "tree".to_owned(),
        };
        if self.huge_pages {
            format!("{run}, huge pages")
        } else {
            run
        }
    }

    fn to_line(&self) -> String {
        format!(
            "ROW {} {} {} {} {} {} {} {} {} {} {:.0} {:.0} {:.1} {} {} {} {} {} {} {}",
            self.sessions,
            u8::from(self.record),
            self.p50,
            self.p99,
            self.p999,
            self.max,
            self.send_p99,
            self.send_p999,
            self.timed,
            self.lost,
            self.idle_bytes,
            self.streaming_bytes,
            self.cpu_percent,
            self.wire_bytes,
            self.written_bytes,
            self.load_before,
            self.load_after,
            self.floor.map_or_else(
                || "tree".to_owned(),
                |kept| format!("floor:{}", kept.label())
            ),
            self.huge_bytes,
            u8::from(self.huge_pages),
        )
    }

    fn from_line(line: &str) -> Option<Row> {
        let words: Vec<&str> = line.strip_prefix("ROW ")?.split_whitespace().collect();
        let int = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        let float = |i: usize| words.get(i).and_then(|w| w.parse::<f64>().ok());
        Some(Row {
            sessions: usize::try_from(int(0)?).ok()?,
            record: int(1)? == 1,
            p50: int(2)?,
            p99: int(3)?,
            p999: int(4)?,
            max: int(5)?,
            send_p99: int(6)?,
            send_p999: int(7)?,
            timed: int(8)?,
            lost: int(9)?,
            idle_bytes: float(10)?,
            streaming_bytes: float(11)?,
            cpu_percent: float(12)?,
            wire_bytes: int(13)?,
            written_bytes: int(14)?,
            load_before: (*words.get(15)?).to_owned(),
            load_after: (*words.get(16)?).to_owned(),
            floor: match *words.get(17)? {
                "tree" => None,
                word => {
                    let list = word.strip_prefix("floor:")?;
                    Some(Guarantees::parse(if list == "-" { "" } else { list }).ok()?)
                }
            },
            huge_bytes: int(18).unwrap_or(0),
            huge_pages: int(19) == Some(1),
        })
    }
}

fn print_table(rows: &[Row], seconds: u64, tick: Duration) {
    println!();
    // At a profiling pace (`--tick-ms`) every rate is its tick's, not a call's.
    let workload = if tick == TICK {
        "20 ms audio both ways, a transcription a second, a tool call a minute".to_owned()
    } else {
        format!(
            "20 ms of audio both ways every {} ms (--tick-ms: not real time), a transcription \
             every {TRANSCRIPT_EVERY} ticks, a tool call every {TOOL_CALL_EVERY}",
            tick.as_millis()
        )
    };
    println!(
        "many_sessions: 2 workers, in-memory links, {workload}; {seconds} s per N; latencies \
         timed from {} s after the streaming began (decision 0097)",
        WARM_UP.as_secs()
    );
    println!(
        "| N | run | p50 | p99 | p99.9 | max | p99 / p99.9 from the pacer's send | timed frames | lost | KiB idle | KiB streaming | CPU | write amp. | load before → after | MiB in huge pages |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        let amp = if row.record && row.wire_bytes > 0 {
            format!("{:.2}", row.written_bytes as f64 / row.wire_bytes as f64)
        } else {
            "—".to_owned()
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {:.1} | {:.1} | {:.0} % | {} | {} → {} | {:.0} |",
            row.sessions,
            row.run(),
            ms(row.p50),
            ms(row.p99),
            ms(row.p999),
            ms(row.max),
            ms(row.send_p99),
            ms(row.send_p999),
            row.timed,
            row.lost,
            row.idle_bytes / 1024.0,
            row.streaming_bytes / 1024.0,
            row.cpu_percent,
            amp,
            row.load_before,
            row.load_after,
            mib(row.huge_bytes),
        );
    }
    println!();
    for row in rows {
        let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
        println!(
            "N={} {}: p99 ≤ 5 ms {}; p99.9 ≤ 20 ms {}; none lost {}; ≤ 64 KiB idle {}; ≤ 256 KiB streaming {}",
            row.sessions,
            row.run(),
            // A run that timed nothing in steady streaming (a second or less) meets no
            // latency target.
            verdict(row.timed > 0 && row.p99 <= TARGET_P99_NS),
            verdict(row.timed > 0 && row.p999 <= TARGET_P999_NS),
            verdict(row.lost == 0),
            verdict(row.idle_bytes <= TARGET_IDLE_BYTES),
            verdict(row.streaming_bytes <= TARGET_STREAMING_BYTES),
        );
        if row.timed == 0 {
            println!(
                "  (no frame timed in steady streaming: a run must stream longer than {} s)",
                WARM_UP.as_secs()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Calibration: what the tree's building blocks cost alone, for the memory breakdown.
// ---------------------------------------------------------------------------------------

/// A ractor actor that does nothing: what one actor costs before its state.
struct IdleActor;

impl ractor::Actor for IdleActor {
    type Msg = u64;
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ractor::ActorRef<u64>,
        _args: (),
    ) -> Result<(), ractor::ActorProcessingErr> {
        Ok(())
    }
}

/// `VmRSS` per idle ractor actor and per idle tokio task (waiting on a `Notify`), each
/// over 10,000; printed as `CALIBRATE actor_bytes task_bytes`.
async fn calibrate() {
    const COUNT: usize = 10_000;
    let warm = ractor::Actor::spawn(None, IdleActor, ()).await;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_bytes();
    let mut actors = Vec::with_capacity(COUNT);
    for _ in 0..COUNT {
        match ractor::Actor::spawn(None, IdleActor, ()).await {
            Ok((actor, handle)) => actors.push((actor, handle)),
            Err(error) => panic!("an idle actor did not start: {error}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let with_actors = rss_bytes();
    let notify = Arc::new(tokio::sync::Notify::new());
    let mut tasks = Vec::with_capacity(COUNT);
    for _ in 0..COUNT {
        let notify = Arc::clone(&notify);
        tasks.push(tokio::spawn(async move { notify.notified().await }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let with_tasks = rss_bytes();
    let actor_bytes = with_actors.saturating_sub(before) / COUNT as u64;
    let task_bytes = with_tasks.saturating_sub(with_actors) / COUNT as u64;
    println!("CALIBRATE {actor_bytes} {task_bytes}");
    // A journal writer's queue is a `sync_channel` of `JOURNAL_CAPACITY` slots, allocated
    // and stamped at once: each slot holds a mutation (the job enum around it is no
    // smaller) and a stamp.
    let slot = std::mem::size_of::<reel_recorder::journal::StateMutation>() + 8;
    println!(
        "SIZES journal_queue_bytes={} state_mutation={} wire_entry={}",
        slot * reel_actors::state::JOURNAL_CAPACITY,
        std::mem::size_of::<reel_recorder::journal::StateMutation>(),
        std::mem::size_of::<reel_recorder::WireEntry>(),
    );
    for task in &tasks {
        task.abort();
    }
    for (actor, handle) in actors {
        actor.stop(None);
        let _ = handle.await;
    }
}

fn this_binary() -> PathBuf {
    match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => panic!("cannot find this bench binary: {error}"),
    }
}

fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("many_sessions: {message}");
            eprintln!(
                "usage: many_sessions [--sessions N[,N…]] [--seconds S] [--huge-pages] \
                 [--tick-ms MS] [--phases N] [--cores K] \
                 [--record | --floor | --floor-with stamp,route,phase,telemetry,backpressure,guard|all]"
            );
            std::process::exit(2);
        }
    };
    if std::env::var(ROLE_ENV).as_deref() == Ok("calibrate") {
        runtime().block_on(calibrate());
        return;
    }
    if std::env::var(ROLE_ENV).as_deref() == Ok("run") {
        let n = options.sessions.first().copied().unwrap_or(1_000);
        if options.huge_pages && !huge_page_tunables_set() {
            // glibc reads its tunables once, as the process starts: run again with them.
            let status = Command::new(this_binary())
                .args(std::env::args().skip(1))
                .env(HUGE_PAGE_TUNABLES_ENV, HUGE_PAGE_TUNABLES)
                .status();
            match status {
                Ok(status) => std::process::exit(status.code().unwrap_or(1)),
                Err(error) => panic!("cannot run N={n} again with huge pages: {error}"),
            }
        }
        if options.huge_pages && transparent_huge_pages() == "never" {
            eprintln!(
                "many_sessions: --huge-pages, but the kernel's transparent huge pages are \
                 `never`: the run's heap will have none (its row says how much it had)"
            );
        }
        println!(
            "N={n}, record {}{}:",
            if options.record { "on" } else { "off" },
            match options.floor {
                Some(kept) if kept == Guarantees::default() => ", the floor (no tree)".to_owned(),
                Some(kept) => format!(", the floor keeping {}", kept.label()),
                None => String::new(),
            }
        );
        let row = runtime().block_on(run(
            n,
            options.seconds,
            options.record,
            options.floor,
            options.huge_pages,
            (options.tick, options.phases, options.cores),
        ));
        println!("{}", row.to_line());
        return;
    }
    println!(
        "many_sessions: N = {:?}, {} s each, recording {}; each N in a fresh process; load average {}",
        options.sessions,
        options.seconds,
        if options.record { "on" } else { "off" },
        load_average()
    );
    let mut rows = Vec::new();
    for &n in &options.sessions {
        let mut command = Command::new(this_binary());
        command.env(ROLE_ENV, "run").args([
            "--sessions",
            &n.to_string(),
            "--seconds",
            &options.seconds.to_string(),
        ]);
        if options.record {
            command.arg("--record");
        }
        if let Some(kept) = options.floor {
            command.args(["--floor-with", &kept.label().replace('-', "")]);
        }
        if options.tick != TICK {
            command.args(["--tick-ms", &options.tick.as_millis().to_string()]);
        }
        if options.phases != PACERS {
            command.args(["--phases", &options.phases.to_string()]);
        }
        if options.cores > 0 {
            command.args(["--cores", &options.cores.to_string()]);
        }
        if options.huge_pages {
            command
                .arg("--huge-pages")
                .env(HUGE_PAGE_TUNABLES_ENV, HUGE_PAGE_TUNABLES);
        }
        let output = match command.stderr(std::process::Stdio::inherit()).output() {
            Ok(output) => output,
            Err(error) => panic!("cannot run N={n}: {error}"),
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        for line in stdout.lines() {
            if let Some(row) = Row::from_line(line) {
                rows.push(row);
            } else {
                println!("{line}");
            }
        }
        if !output.status.success() {
            println!("N={n}: the run failed ({})", output.status);
        }
    }
    print_table(&rows, options.seconds, options.tick);
    if options.floor.is_some() {
        return; // the calibration below breaks down a tree's memory: the floor has none
    }
    let calibration = Command::new(this_binary())
        .env(ROLE_ENV, "calibrate")
        .output()
        .ok()
        .and_then(|output| {
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            for line in text.lines().filter(|l| l.starts_with("SIZES ")) {
                println!("{line}");
            }
            let line = text
                .lines()
                .find_map(|l| l.strip_prefix("CALIBRATE "))?
                .to_owned();
            let mut words = line.split_whitespace().map(str::parse::<u64>);
            Some((words.next()?.ok()?, words.next()?.ok()?))
        });
    match calibration {
        Some((actor, task)) => println!(
            "calibration (10,000 each, alone): an idle ractor actor {actor} B of RSS, an idle \
             tokio task {task} B; a session without `on_usage` is 2 actors (supervisor, \
             transport) and 5 tasks (store, fast lane, control lane, router, the link's \
             reader; 6 recording; decision 0079): {} B (KiB {:.1}) of its idle cost is \
             actors and empty tasks alone",
            2 * actor + 5 * task,
            (2 * actor + 5 * task) as f64 / 1024.0
        ),
        None => println!("calibration: did not run"),
    }
}
