//! Issue 25, §3: nothing recorded is lost to a crash. A real process records the demo
//! session (the weather assistant against the bundled tape, at its recorded pace, over
//! loopback) into a wire log and a journal with the library's own file recorders, and prints
//! a line each time what it has handled grows; the test `kill -9`s it at a moment drawn from
//! a seeded generator, then reads both files with the real readers. They must parse, hold a
//! gap-free prefix, and hold everything the process had reported at least 100 ms before the
//! kill.
//!
//! The process is this test binary run again (`crash_child`, which does nothing unless
//! `REEL_CRASH_CHILD_DIR` names where to record). A failing run prints its seed and kill
//! delay; `REEL_CRASH_SEED=N` replays a seed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reel::demo::run::bundled_tape;
use reel::demo::weather;
use reel_actors::LiveSessionBuilder;
use reel_protocol::ApiEndpoint;
use reel_recorder::journal::{FileJournalSink, JournalSink, read_journal};
use reel_recorder::wire_log::WireRecorder;
use reel_recorder::{FileWireRecorder, read_wire_log};
use reel_tape_server::{Pace, TapeLibrary, TapeServer};

/// Where the child records, when this binary runs as the child.
const CHILD_DIR: &str = "REEL_CRASH_CHILD_DIR";
/// The prefix of the child's progress lines (the test harness prints its own lines too).
const PREFIX: &str = "reel-crash:";
/// How many processes are killed.
const KILLS: usize = 50;
/// How many run at once (the machine has two cores).
const PARALLEL: usize = 2;
/// The longest kill delay after the child said it started: the session lasts about 1.2 s.
const MAX_DELAY_MS: u64 = 1_300;
/// What a crash may lose at most.
const LOSS_BOUND: Duration = Duration::from_millis(100);

/// The child: records the demo session, printing `reel-crash: FRAMES MUTATIONS` whenever
/// the wire frames it has handled (sent or received: recorded by the transport's tap) or
/// the state mutations applied (handed to the journal) grow.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(record_demo(Path::new(&dir)));
}

async fn record_demo(dir: &Path) {
    let library = TapeLibrary::new().with_entries("weather", bundled_tape().unwrap());
    let mut server = TapeServer::replay(library)
        .pace(Pace::Recorded { speed: 1.0 })
        .start()
        .await
        .unwrap();
    let endpoint = ApiEndpoint::google_ai("")
        .without_credential()
        .with_base_url(&server.base_url());
    let wire = Arc::new(FileWireRecorder::create(dir.join("demo.wire.jsonl")).unwrap());
    let journal = Arc::new(FileJournalSink::create(dir.join("demo.journal.jsonl")).unwrap());
    let builder = LiveSessionBuilder::new(weather::config(), endpoint)
        .dispatcher(weather::tools().unwrap())
        .phases(weather::phases().unwrap())
        .record_wire(wire as Arc<dyn WireRecorder>)
        .journal_sink(journal as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    say("started");
    let handle = builder.connect().await.unwrap();
    let progress = {
        let handle = handle.clone();
        tokio::spawn(async move {
            let mut last = (0, 0);
            let mut tick = tokio::time::interval(Duration::from_millis(5));
            loop {
                tick.tick().await;
                let telemetry = handle.telemetry();
                let now = (
                    telemetry.frames_in + telemetry.frames_out,
                    handle.state().mutation_cursor(),
                );
                if now != last {
                    say(&format!("{} {}", now.0, now.1));
                    last = now;
                }
            }
        })
    };
    reel::demo::conversation::run(&handle, &mut events, Duration::from_secs(30))
        .await
        .unwrap();
    handle.disconnect().await;
    progress.abort();
    server.shutdown().await;
}

/// Prints a progress line and flushes it, straight to standard output (the test harness
/// captures `println!`).
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PREFIX} {line}");
    let _ = out.flush();
}

/// splitmix64: the kill delays, from a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// What one kill left, checked.
#[derive(Debug)]
struct Outcome {
    /// Frames and mutations reported at least [`LOSS_BOUND`] before the kill.
    required: (u64, u64),
    /// Frames and mutations in the files.
    found: (u64, u64),
}

/// Frames in the wire log at `path` (close markers are not frames): the entries must parse
/// (a torn last line is skipped by the reader) and be numbered 1, 2, 3, … without a gap.
fn frames_in(path: &Path) -> Result<u64, String> {
    if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
        return Ok(0);
    }
    let entries = read_wire_log(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (index, entry) in entries.iter().enumerate() {
        if entry.seq != index as u64 + 1 {
            return Err(format!(
                "{}: entry {} has seq {}: a gap",
                path.display(),
                index + 1,
                entry.seq
            ));
        }
    }
    Ok(entries.iter().filter(|e| !e.is_close_marker()).count() as u64)
}

/// Mutations in the journal at `path`, which must parse and be numbered 1, 2, 3, ….
fn mutations_in(path: &Path) -> Result<u64, String> {
    if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
        return Ok(0);
    }
    let mutations = read_journal(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (index, mutation) in mutations.iter().enumerate() {
        if mutation.sequence != index as u64 + 1 {
            return Err(format!(
                "{}: mutation {} has sequence {}: a gap",
                path.display(),
                index + 1,
                mutation.sequence
            ));
        }
    }
    Ok(mutations.len() as u64)
}

/// Starts a child recording into `dir`, kills it `delay` after it said it started, and
/// checks what it left.
fn kill_once(dir: &Path, delay: Duration) -> Result<Outcome, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args([
            "crash_recording::crash_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    // Each progress line with the moment it was read (never earlier than it was printed,
    // so a late read only makes the check more lenient).
    let (lines, progress) = mpsc::channel::<(Instant, Option<(u64, u64)>)>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // The harness's `test crash_child ... ` may precede the first line.
            let Some(at) = line.find(PREFIX) else {
                continue;
            };
            let rest = &line[at + PREFIX.len()..];
            let mut numbers = rest.split_whitespace().map(str::parse::<u64>);
            let parsed = match (numbers.next(), numbers.next()) {
                (Some(Ok(frames)), Some(Ok(mutations))) => Some((frames, mutations)),
                _ => None,
            };
            if lines.send((Instant::now(), parsed)).is_err() {
                break;
            }
        }
    });
    // The first line says it started; the kill comes `delay` after it.
    let started = progress
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| "the child never said it started".to_owned())?;
    assert_eq!(started.1, None, "the first line is `started`");
    std::thread::sleep(delay);
    let killed_at = Instant::now();
    // SIGKILL; an error only means it already finished.
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    let mut required = (0, 0);
    for (read_at, numbers) in progress.try_iter() {
        if let Some(numbers) = numbers
            && read_at + LOSS_BOUND <= killed_at
        {
            required = (required.0.max(numbers.0), required.1.max(numbers.1));
        }
    }
    let found = (
        frames_in(&dir.join("demo.wire.jsonl"))?,
        mutations_in(&dir.join("demo.journal.jsonl"))?,
    );
    Ok(Outcome { required, found })
}

#[test]
fn a_killed_session_keeps_everything_but_its_last_100_ms() {
    let seed = std::env::var("REEL_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x2025_1127_u64);
    let mut rng = Rng(seed);
    let delays: Vec<Duration> = (0..KILLS)
        .map(|_| Duration::from_millis(rng.next() % MAX_DELAY_MS))
        .collect();
    let base: PathBuf = std::env::temp_dir().join(format!("reel-crash-{}", std::process::id()));
    let results: Vec<(usize, Duration, Result<Outcome, String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..PARALLEL)
            .map(|worker| {
                let delays = &delays;
                let base = &base;
                scope.spawn(move || {
                    (worker..KILLS)
                        .step_by(PARALLEL)
                        .map(|run| {
                            let dir = base.join(run.to_string());
                            let outcome = kill_once(&dir, delays[run]);
                            (run, delays[run], outcome)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    let _ = std::fs::remove_dir_all(&base);

    let mut failures = Vec::new();
    let mut reached = (0, 0);
    for (run, delay, outcome) in &results {
        match outcome {
            Ok(outcome) => {
                reached = (
                    reached.0.max(outcome.required.0),
                    reached.1.max(outcome.required.1),
                );
                if outcome.found.0 < outcome.required.0 || outcome.found.1 < outcome.required.1 {
                    failures.push(format!(
                        "run {run} (kill {delay:?} after start): the files hold {:?} \
                         (frames, mutations), the process had handled {:?} at least 100 ms \
                         before the kill",
                        outcome.found, outcome.required
                    ));
                }
            }
            Err(error) => failures.push(format!("run {run} (kill {delay:?}): {error}")),
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed} (REEL_CRASH_SEED={seed}):\n{}",
        failures.join("\n")
    );
    // The kills hit the session while it recorded, not only before or after it.
    assert!(
        reached.0 >= 20 && reached.1 >= 5,
        "the kills never reached the session's frames and state writes: {reached:?}"
    );
}
