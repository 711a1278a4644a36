//! `reel replay` over many logs: a replay farm. Teams keep hundreds of recorded sessions as
//! regression tests; this replays them all, in parallel on all cores, and says which
//! drifted.
//!
//! Inputs are files, directories (every `*.wire.jsonl` below them, in name order) and globs
//! (`'recordings/**/*.wire.jsonl'`, expanded by reel so that quoting works the same on
//! every shell). Each session is replayed exactly as `reel replay LOG` replays it (the same
//! CLEAN verdict), on one of `--jobs` worker threads, each with a runtime of its own. A bad
//! log (unreadable, not a wire log, no setup) is reported on its own line and the others
//! still run.
//!
//! Output: one line per session in input order, then a total, then the time taken (the
//! only line that varies from run to run); with `--json`, one document; with `--junit
//! FILE`, JUnit XML as well. Exit 0 when every session is clean, 1 when one drifted, 2 when
//! a log was bad input.

use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

#[cfg(feature = "s3")]
use reel::recordings::RecordingsError;
#[cfg(feature = "s3")]
use reel::recordings::object::{Bucket, Recording};
use reel::recordings::{ObjectUrl, Shard};
use reel_recorder::compressed::without_compression_suffix;
use serde_json::{Value, json};

use super::input::one_stdin;
use super::junit::{self, Case, CaseOutcome};
use super::plural;
use super::progress::Progress;
use super::replay::{ReplayArgs, replay_log};
use super::replay_report::ReplayReport;
use super::{CliError, print_stdout, print_text};

use reel::recordings::WIRE_LOG_SUFFIX;

/// How one session's replay ended.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Replayed clean.
    Clean {
        /// Server frames replayed.
        frames: u64,
        /// Model turns.
        turns: usize,
    },
    /// Drifted.
    Drift {
        /// Server frames replayed.
        frames: u64,
        /// Model turns.
        turns: usize,
        /// What drifted (`1 outbound divergence`).
        drift: String,
        /// The first divergence, in full.
        first: String,
    },
    /// Could not be replayed.
    Bad {
        /// Why.
        error: String,
    },
}

/// One session of the farm.
#[derive(Debug, Clone, PartialEq)]
struct Session {
    /// The log, as given or as found.
    path: String,
    /// Seconds its replay took.
    seconds: f64,
    /// How it ended.
    outcome: Outcome,
}

/// Replays every log `args` names, in parallel, and reports them (see the module docs).
pub fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    let found = expand(&args.logs)?;
    let named = found.len();
    let inputs: Vec<Entry> = match args.shard {
        Some(shard) => {
            let keys: Vec<String> = found.iter().map(|entry| entry.relative.clone()).collect();
            shard
                .select(&keys)
                .into_iter()
                .map(|at| found[at].clone())
                .collect()
        }
        None => found,
    };
    one_stdin(inputs.iter().map(|entry| entry.shown.as_str()))?;
    if args.journal.is_some() {
        return Err(CliError::JournalNeedsOneLog { logs: inputs.len() });
    }
    let shard = args.shard.map(|shard| (shard, named));
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    let started = Instant::now();
    let sessions = replay_all(&inputs, jobs, args.salvage, args.save_verdict);
    let seconds = started.elapsed().as_secs_f64();

    if let Some(path) = &args.junit {
        let cases: Vec<Case> = sessions.iter().map(case).collect();
        let suite = shard.map_or_else(
            || "reel replay".to_owned(),
            |(shard, _)| format!("reel replay (shard {shard})"),
        );
        let xml =
            junit::render(&cases, seconds, &suite).map_err(|source| CliError::RenderJunit {
                path: path.clone(),
                source,
            })?;
        std::fs::write(path, xml).map_err(|source| CliError::WriteJunit {
            path: path.clone(),
            source,
        })?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&to_json(&sessions, seconds, jobs, shard))?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_text(&render(&sessions, seconds, jobs, shard))?;
    }
    Ok(exit_code(&sessions))
}

/// One recording the farm replays.
#[derive(Debug, Clone)]
struct Entry {
    /// How the report names it: the path or URL as given or as found.
    shown: String,
    /// Its path relative to the directory or prefix it was found under (a file named by
    /// itself: as given): what `--shard` splits on, the same on every machine.
    relative: String,
    /// Where its bytes are.
    source: Source,
}

/// Where a recording's bytes are.
#[derive(Debug, Clone)]
enum Source {
    /// A local file (or standard input): `shown` itself.
    Local,
    /// A recording in a bucket, copied with its sidecars before its replay.
    #[cfg(feature = "s3")]
    Object(Bucket, Recording),
    /// An input that could not be listed or read: its error, reported on its line.
    Unreadable(String),
}

impl Entry {
    /// A local file named `path`, relative to its root as `relative`.
    fn local(path: String, relative: String) -> Entry {
        Entry {
            shown: path,
            relative,
            source: Source::Local,
        }
    }
}

/// One entry per recording: a file as it is, a directory as every wire log below it, a
/// glob as every path it matches, an `s3://` prefix as every wire log under it. An input
/// that names nothing stays, and fails as bad input; a directory or prefix with no wire
/// log below it is bad input ([`CliError::NoRecordings`]).
fn expand(inputs: &[String]) -> Result<Vec<Entry>, CliError> {
    let mut out = Vec::new();
    for input in inputs {
        let path = Path::new(input);
        if ObjectUrl::is_object_url(input) {
            out.extend(objects(input)?);
        } else if path.is_dir() {
            let mut found = Vec::new();
            wire_logs_below(path, &mut found);
            if found.is_empty() {
                return Err(CliError::NoRecordings { dir: input.clone() });
            }
            found.sort();
            out.extend(found.into_iter().map(|p| {
                let relative = p
                    .strip_prefix(path)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                Entry::local(p.display().to_string(), relative)
            }));
        } else if !path.exists() && input.contains(['*', '?', '[']) {
            let matched: Vec<String> = glob::glob(input)
                .map(|paths| {
                    paths
                        .filter_map(Result::ok)
                        .filter(|p| p.is_file())
                        .map(|p| p.display().to_string())
                        .collect()
                })
                .unwrap_or_default();
            if matched.is_empty() {
                out.push(Entry::local(input.clone(), input.clone()));
            } else {
                out.extend(matched.into_iter().map(|p| Entry::local(p.clone(), p)));
            }
        } else {
            out.push(Entry::local(input.clone(), input.clone()));
        }
    }
    Ok(out)
}

/// The recordings under the `s3://` URL `input` (a prefix, or one wire log). A prefix
/// with none is bad input, as a directory with none is; a URL that cannot be listed (no
/// such bucket, access refused, no such key) is one entry that fails on its line.
#[cfg(feature = "s3")]
fn objects(input: &str) -> Result<Vec<Entry>, CliError> {
    let unreadable = |error: RecordingsError| {
        vec![Entry {
            shown: input.to_owned(),
            relative: input.to_owned(),
            source: Source::Unreadable(error.to_string()),
        }]
    };
    let url = ObjectUrl::parse(input)?;
    let bucket = match Bucket::open(&url, super::s3_endpoint()) {
        Ok(bucket) => bucket,
        Err(error) => return Ok(unreadable(error)),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    match runtime.block_on(bucket.recordings(&url)) {
        Ok(found) => Ok(found
            .into_iter()
            .map(|recording| Entry {
                shown: recording.log.to_string(),
                relative: recording.relative.clone(),
                source: Source::Object(bucket.clone(), recording),
            })
            .collect()),
        Err(error @ RecordingsError::NoRecordings { .. }) => Err(error.into()),
        Err(error) => Ok(unreadable(error)),
    }
}

/// Without the `s3` feature, an `s3://` input is one entry that says so.
#[cfg(not(feature = "s3"))]
fn objects(input: &str) -> Result<Vec<Entry>, CliError> {
    Ok(vec![Entry {
        shown: input.to_owned(),
        relative: input.to_owned(),
        source: Source::Unreadable(format!(
            "{input}: this reel was built without the `s3` feature"
        )),
    }])
}

/// Every `*.wire.jsonl` file (or `*.wire.jsonl.gz`, `.zst`) below `dir`, at any depth (unreadable directories skipped).
/// A wire log's name on something that is not a regular file (a FIFO, a socket, a device,
/// a dangling symlink) is skipped with a warning on stderr: reading a FIFO with no writer
/// would wait for ever.
fn wire_logs_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            wire_logs_below(&path, out);
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| without_compression_suffix(n).ends_with(WIRE_LOG_SUFFIX))
        {
            if std::fs::metadata(&path).is_ok_and(|meta| meta.is_file()) {
                out.push(path);
            } else {
                eprintln!(
                    "reel: warning: {}: not a regular file (a FIFO, a socket, a device or a dangling link), skipped",
                    path.display()
                );
            }
        }
    }
}

/// Replays `logs` on `jobs` worker threads; the results in input order.
fn replay_all(logs: &[Entry], jobs: usize, salvage: bool, save_verdict: bool) -> Vec<Session> {
    let staging = Staging::new();
    let progress = Progress::out_of("replaying", "sessions", logs.len() as u64);
    let done = progress.counter();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Session>>> = Mutex::new(vec![None; logs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(logs.len()).max(1) {
            scope.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(entry) = logs.get(index) else {
                        return;
                    };
                    let started = Instant::now();
                    let outcome = match &runtime {
                        // A session that panics is that session's failure, not the farm's.
                        Ok(runtime) => std::panic::catch_unwind(AssertUnwindSafe(|| {
                            replay_entry(runtime, entry, index, &staging, salvage, save_verdict)
                        }))
                        .unwrap_or_else(|panic| Outcome::Bad {
                            error: format!("the replay failed: {}", panic_message(&*panic)),
                        }),
                        Err(error) => Outcome::Bad {
                            error: CliError::Runtime(std::io::Error::new(
                                error.kind(),
                                error.to_string(),
                            ))
                            .to_string(),
                        },
                    };
                    let session = Session {
                        path: entry.shown.clone(),
                        seconds: started.elapsed().as_secs_f64(),
                        outcome,
                    };
                    results.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(session);
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    progress.finish();
    results
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

/// Replays one entry: a local log as it is; a recording in a bucket once copied with its
/// sidecars to the staging directory (its errors then name the URL, not the copy).
// Without `s3`, no entry is copied, so `index` and `staging` go unused.
#[cfg_attr(not(feature = "s3"), allow(unused_variables))]
fn replay_entry(
    runtime: &tokio::runtime::Runtime,
    entry: &Entry,
    index: usize,
    staging: &Staging,
    salvage: bool,
    save_verdict: bool,
) -> Outcome {
    match &entry.source {
        Source::Local => replay_one(runtime, &entry.shown, salvage, save_verdict),
        Source::Unreadable(error) => Outcome::Bad {
            error: error.clone(),
        },
        #[cfg(feature = "s3")]
        Source::Object(bucket, recording) => {
            let dir = staging.dir.join(index.to_string());
            let fetched = runtime.block_on(bucket.fetch_recording(recording, &dir));
            let outcome = match fetched {
                Ok(local) => {
                    let local = local.display().to_string();
                    match replay_one(runtime, &local, salvage, false) {
                        Outcome::Bad { error } => Outcome::Bad {
                            error: error.replace(&local, &entry.shown),
                        },
                        other => other,
                    }
                }
                Err(error) => Outcome::Bad {
                    error: error.to_string(),
                },
            };
            // The copy has served; a farm of thousands keeps no more than its jobs' worth.
            let _ = std::fs::remove_dir_all(&dir);
            outcome
        }
    }
}

/// Where recordings from object storage are copied for their replay: a directory of this
/// process's own under the system's temporary directory, removed when the farm ends.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new() -> Staging {
        Staging {
            dir: std::env::temp_dir().join(format!("reel-replay-{}", std::process::id())),
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a panic said, when it said it with a string.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Replays one log as `reel replay LOG` does, quietly; with `save_verdict`, keeps its
/// verdict beside it (`--save-verdict`).
fn replay_one(
    runtime: &tokio::runtime::Runtime,
    path: &str,
    salvage: bool,
    save_verdict: bool,
) -> Outcome {
    let (stats, replay) = match runtime.block_on(replay_log(path, salvage, None, None)) {
        Ok(replayed) => replayed,
        Err(error) => {
            return Outcome::Bad {
                error: error.to_string(),
            };
        }
    };
    let report = ReplayReport::new(path, &stats, &replay, None);
    if save_verdict {
        super::replay::remember(path, &report, &replay);
    }
    // Frames both ways, close markers not counted: the number the studio and the single
    // report show.
    let frames = stats.frames;
    // Model turns, as the single report numbers them (not what follows the last one).
    let turns = replay
        .summary
        .turns
        .iter()
        .filter(|turn| !turn.is_lifecycle_only())
        .count();
    let verdict = report.verdict();
    if verdict.is_clean() {
        return Outcome::Clean { frames, turns };
    }
    let drift = verdict
        .drift()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let first = super::replay::first_drift(&report, &replay);
    Outcome::Drift {
        frames,
        turns,
        drift,
        first,
    }
}

/// The text report: a line per session, the total, the time.
fn render(
    sessions: &[Session],
    seconds: f64,
    jobs: usize,
    shard: Option<(Shard, usize)>,
) -> String {
    let mut out = String::new();
    for session in sessions {
        let line = match &session.outcome {
            Outcome::Clean { frames, turns } => {
                format!(
                    "  CLEAN  {}  ({}, {})",
                    session.path,
                    plural(*frames, "frame", "frames"),
                    plural(*turns as u64, "turn", "turns")
                )
            }
            Outcome::Drift {
                frames,
                turns,
                drift,
                first,
            } => format!(
                "  DRIFT  {}  ({}, {}): {drift}; first: {}",
                session.path,
                plural(*frames, "frame", "frames"),
                plural(*turns as u64, "turn", "turns"),
                first.lines().next().unwrap_or_default()
            ),
            // The error names the log already; said once, at the column.
            Outcome::Bad { error } => format!(
                "  ERROR  {}  {}",
                session.path,
                error
                    .strip_prefix(&format!("{}: ", session.path))
                    .unwrap_or(error)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let (clean, drifted, bad) = tally(sessions);
    out.push_str(&format!(
        "\n  {}: {clean} clean, {drifted} drifted, {bad} bad input\n",
        plural(sessions.len() as u64, "session", "sessions")
    ));
    if let Some((shard, named)) = shard {
        out.push_str(&format!(
            "  shard {shard} of {}\n",
            plural(named as u64, "log", "logs")
        ));
    }
    out.push_str(&format!(
        "  in {seconds:.2} s on {jobs} job{} ({:.1} sessions/s)\n",
        if jobs == 1 { "" } else { "s" },
        rate(sessions.len(), seconds)
    ));
    out
}

/// The JSON report.
fn to_json(
    sessions: &[Session],
    seconds: f64,
    jobs: usize,
    shard: Option<(Shard, usize)>,
) -> Value {
    let (clean, drifted, bad) = tally(sessions);
    let sessions: Vec<Value> = sessions
        .iter()
        .map(|s| {
            let mut value = match &s.outcome {
                Outcome::Clean { frames, turns } => {
                    json!({"verdict": "clean", "frames": frames, "turns": turns})
                }
                Outcome::Drift {
                    frames,
                    turns,
                    drift,
                    first,
                } => json!({
                    "verdict": "drift", "frames": frames, "turns": turns,
                    "drift": drift, "first_divergence": first
                }),
                Outcome::Bad { error } => json!({"verdict": "bad_input", "error": error}),
            };
            value["log"] = json!(s.path);
            value["seconds"] = json!(s.seconds);
            value
        })
        .collect();
    let mut report = json!({
        "sessions": sessions,
        "total": {"sessions": sessions.len(), "clean": clean, "drifted": drifted, "bad_input": bad},
        "seconds": seconds,
        "jobs": jobs,
    });
    if let Some((shard, named)) = shard {
        report["shard"] = json!({"index": shard.index(), "count": shard.count(), "of_logs": named});
    }
    report
}

/// A session as a JUnit test case.
fn case(session: &Session) -> Case {
    Case {
        name: session.path.clone(),
        seconds: session.seconds,
        outcome: match &session.outcome {
            Outcome::Clean { .. } => CaseOutcome::Passed,
            Outcome::Drift { drift, first, .. } => CaseOutcome::Failed {
                message: format!(
                    "{drift}; first: {}",
                    first.lines().next().unwrap_or_default()
                ),
                details: first.clone(),
            },
            Outcome::Bad { error } => CaseOutcome::Error {
                message: error.clone(),
            },
        },
    }
}

/// (clean, drifted, bad input).
fn tally(sessions: &[Session]) -> (usize, usize, usize) {
    let count = |f: fn(&Outcome) -> bool| sessions.iter().filter(|s| f(&s.outcome)).count();
    (
        count(|o| matches!(o, Outcome::Clean { .. })),
        count(|o| matches!(o, Outcome::Drift { .. })),
        count(|o| matches!(o, Outcome::Bad { .. })),
    )
}

fn rate(sessions: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        sessions as f64 / seconds
    } else {
        0.0
    }
}

/// 2 when a log was bad input, else 1 when a session drifted, else 0.
fn exit_code(sessions: &[Session]) -> ExitCode {
    let (_, drifted, bad) = tally(sessions);
    if bad > 0 {
        ExitCode::from(2)
    } else if drifted > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
