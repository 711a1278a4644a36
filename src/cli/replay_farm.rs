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

use reel_recorder::compressed::without_compression_suffix;
use serde_json::{Value, json};

use super::input::one_stdin;
use super::junit::{self, Case, CaseOutcome};
use super::plural;
use super::progress::Progress;
use super::replay::{ReplayArgs, replay_log};
use super::replay_report::ReplayReport;
use super::{CliError, print_stdout, print_text};

/// The name every wire log ends with, for directories.
const WIRE_LOG_SUFFIX: &str = ".wire.jsonl";

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
    let inputs = expand(&args.logs)?;
    one_stdin(inputs.iter().map(String::as_str))?;
    if args.journal.is_some() {
        return Err(CliError::JournalNeedsOneLog { logs: inputs.len() });
    }
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    let started = Instant::now();
    let sessions = replay_all(&inputs, jobs, args.salvage, args.save_verdict);
    let seconds = started.elapsed().as_secs_f64();

    if let Some(path) = &args.junit {
        let cases: Vec<Case> = sessions.iter().map(case).collect();
        let xml = junit::render(&cases, seconds).map_err(|source| CliError::RenderJunit {
            path: path.clone(),
            source,
        })?;
        std::fs::write(path, xml).map_err(|source| CliError::WriteJunit {
            path: path.clone(),
            source,
        })?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&to_json(&sessions, seconds, jobs))?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_text(&render(&sessions, seconds, jobs))?;
    }
    Ok(exit_code(&sessions))
}

/// One entry per input: a file as it is, a directory as every wire log below it, a glob as
/// every path it matches. An input that names nothing stays, and fails as bad input; a
/// directory with no wire log below it is bad input ([`CliError::NoRecordings`]).
fn expand(inputs: &[String]) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    for input in inputs {
        let path = Path::new(input);
        if path.is_dir() {
            let mut found = Vec::new();
            wire_logs_below(path, &mut found);
            if found.is_empty() {
                return Err(CliError::NoRecordings { dir: input.clone() });
            }
            found.sort();
            out.extend(found.into_iter().map(|p| p.display().to_string()));
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
                out.push(input.clone());
            } else {
                out.extend(matched);
            }
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
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
fn replay_all(logs: &[String], jobs: usize, salvage: bool, save_verdict: bool) -> Vec<Session> {
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
                    let Some(path) = logs.get(index) else {
                        return;
                    };
                    let started = Instant::now();
                    let outcome = match &runtime {
                        // A session that panics is that session's failure, not the farm's.
                        Ok(runtime) => std::panic::catch_unwind(AssertUnwindSafe(|| {
                            replay_one(runtime, path, salvage, save_verdict)
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
                        path: path.clone(),
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
fn render(sessions: &[Session], seconds: f64, jobs: usize) -> String {
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
    out.push_str(&format!(
        "  in {seconds:.2} s on {jobs} job{} ({:.1} sessions/s)\n",
        if jobs == 1 { "" } else { "s" },
        rate(sessions.len(), seconds)
    ));
    out
}

/// The JSON report.
fn to_json(sessions: &[Session], seconds: f64, jobs: usize) -> Value {
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
    json!({
        "sessions": sessions,
        "total": {"sessions": sessions.len(), "clean": clean, "drifted": drifted, "bad_input": bad},
        "seconds": seconds,
        "jobs": jobs,
    })
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
