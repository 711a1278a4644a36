//! `reel replay`: runs a wire log again, offline, through the real session tree, and
//! reports it turn by turn; with `--journal`, compares the recorded journal with the
//! replay's, entry by entry, and its final values with the replay's final state.
//!
//! The log is read once, streamed: a thread reads and checks it ahead of the replay, and
//! a [`TapeScan`] gathers on that thread what the replay needs besides the frames (the
//! setup, the recorded tool responses by call id, counts and times). A log of no more than
//! [`reel_replayer::tape::READ_AHEAD`] entries is read on the calling thread instead, before
//! the replay starts ([`Tape::streamed_unless_short`]): a replay farm's short sessions pay
//! for no thread and no hand-over per entry. The work itself is
//! [`reel_replayer::offline`]; the report is [`super::replay_report`]. Neither the log nor
//! the replay's journal is held in memory, so a session of any length replays in bounded
//! memory; what the report keeps grows with its turns only.
//!
//! A journal in a regular file is read twice: before the replay, to fold its final values;
//! during it, to compare it with the replay's entry by entry as the replay writes
//! ([`StreamingJournalMatch`]). A journal that cannot be read twice (standard input, a
//! pipe such as `<(cat journal)`) is read once and its entries kept in memory. That it
//! belongs to the log is checked once the log's time span is known.
//!
//! Exit codes: 0 CLEAN (no outbound divergence; the journal, if given, written again entry
//! by entry), 1 DRIFT, 2 bad input. CLEAN is [`reel_replayer::verdict`]'s definition, the
//! one `reel demo` and `ReplayOutcome::is_clean` use.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};

use reel_persistence::MemoryPersistence;
use reel_recorder::journal::{JournalSink, StateMutation};
use reel_recorder::wire_log::WireEntry;
use reel_replayer::journal_diff::JournalFinal;
use reel_replayer::journal_match::StreamingJournalMatch;
use reel_replayer::last_replay::LastReplay;
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::{OfflineReplay, OfflineResume, OfflineSinks, replay_offline_resumed};
use reel_replayer::{Tape, TapeScan};

use super::input::{WireInput, is_regular_file, one_stdin, open_journal, read_journal};
use super::progress::Progress;
use super::replay_report::{RecordedJournal, ReplayReport};
use super::time::utc_range;
use super::{CliError, print_stdout, print_text};

/// Arguments of `reel replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Where `s3://` paths are read from.
    #[command(flatten)]
    pub(super) s3: super::S3Args,
    /// The wire log (JSON lines, one entry per frame; `-`: standard input); or several,
    /// directories (every `*.wire.jsonl` below them; a directory with none is bad input)
    /// and globs (`'recordings/**/*.wire.jsonl'`), replayed in parallel with one line per
    /// session.
    #[arg(required = true, value_name = "LOG")]
    pub(super) logs: Vec<String>,
    /// The session's recorded journal (`-`: standard input): compare it with the replay's,
    /// entry by entry, and its final value of each key with the replay's final state (one
    /// log only).
    #[arg(long, value_name = "JOURNAL")]
    pub(super) journal: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
    /// A damaged log or journal (a NUL-filled tail after a power loss, a corrupt line):
    /// replay the entries before its first bad line instead of failing.
    #[arg(long)]
    pub(super) salvage: bool,
    /// Also write the results as JUnit XML to FILE: one test case per session, a drifted
    /// session as a failure with its first divergence, a bad log as an error.
    #[arg(long, value_name = "FILE")]
    pub(super) junit: Option<String>,
    /// How many sessions replay at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub(super) jobs: Option<std::num::NonZeroUsize>,
    /// Keep each log's verdict beside it (`NAME.replay.json` for `NAME.wire.jsonl`) for
    /// `reel studio`'s list. Without it, `reel replay` writes nothing but its report.
    #[arg(long)]
    pub(super) save_verdict: bool,
    /// Replay only shard I of N (from 1: `--shard 2/3`) of the logs named: the logs sorted
    /// by their path relative to the directory or `s3://` prefix given, every Nth from the
    /// Ith. Every machine given the same set makes the same split.
    #[arg(long, value_name = "I/N")]
    pub(super) shard: Option<reel::recordings::Shard>,
}

/// Replays the log and prints the report. Exit 1 when the replay drifted: an outbound
/// divergence, or a journal not written again entry by entry. With several logs, a
/// directory or a glob, or `--junit`, replays them all in parallel instead
/// ([`super::replay_farm`]).
pub fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    args.s3.apply();
    if args.logs.len() != 1
        || args.junit.is_some()
        || args.shard.is_some()
        || names_many(&args.logs[0])
    {
        return super::replay_farm::run(args);
    }
    let log = args.logs[0].clone();
    one_stdin([log.as_str()].into_iter().chain(args.journal.as_deref()))?;
    let progress = Progress::start("replaying");
    let journal = match &args.journal {
        Some(path) => {
            let (finals, matcher) = recorded_journal(path, args.salvage)?;
            Some((path.as_str(), finals, Arc::new(matcher)))
        }
        None => None,
    };
    // One thread for the tree, as each job of a replay farm has: with a worker pool, every
    // frame handed from the tape reader to the tree's actors woke another worker (a futex
    // and an eventfd write each time), which was most of the command's system time. The
    // log is still read and parsed on a thread of its own ([`Tape::streamed`]).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let sink = journal
        .as_ref()
        .map(|(_, _, matcher)| Arc::clone(matcher) as Arc<dyn JournalSink>);
    let (stats, replay) = runtime.block_on(replay_log(
        &log,
        args.salvage,
        Some(progress.counter()),
        sink,
    ))?;
    drop(runtime);
    progress.finish();

    let journal = match journal {
        Some((path, finals, matcher)) => {
            check_same_session(path, &finals, &log, &stats)?;
            let matched = matcher
                .finish()
                .map_err(|error| CliError::from_record(path, "journal", error))?;
            Some(RecordedJournal {
                path,
                finals,
                matched,
            })
        }
        None => None,
    };
    let report = ReplayReport::new(&log, &stats, &replay, journal);
    if args.save_verdict {
        remember(&log, &report, &replay);
    }
    if args.json {
        let json = serde_json::to_string_pretty(&report.to_json()?)?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_text(&report.to_string())?;
    }
    Ok(if report.verdict().is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Keeps the verdict beside the log (`X.replay.json`) for `reel studio`'s list, when asked
/// (`--save-verdict`; never by default, so replaying checked-in tapes leaves no files). A note that
/// cannot be written (a read-only directory of checked-in tapes) is only logged: the
/// replay's result is what it printed.
pub(super) fn remember(log: &str, report: &ReplayReport<'_>, replay: &OfflineReplay) {
    // Standard input or a pipe has no place beside it.
    if !is_regular_file(log) {
        return;
    }
    let path = std::path::Path::new(log);
    let Ok(size) = std::fs::metadata(path).map(|m| m.len()) else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let note = if report.verdict().is_clean() {
        LastReplay::clean(size, now)
    } else {
        LastReplay::drift(size, now, first_drift(report, replay))
    };
    if let Err(error) = note.write_beside(path) {
        tracing::debug!(log, %error, "the replay's verdict was not kept beside the log");
    }
}

/// The first divergence of a drifted replay, or what drifted when no frame did (the
/// journal, the final state).
pub(super) fn first_drift(report: &ReplayReport<'_>, replay: &OfflineReplay) -> String {
    replay.divergences.first().map_or_else(
        || {
            report
                .verdict()
                .drift()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        },
        ToString::to_string,
    )
}

/// Whether `input` names several logs: a directory, or a glob (a pattern that is not the
/// name of a file). A single path that does not exist stays one log, and fails as one. An
/// `s3://` URL goes to the farm too, which copies each recording with its sidecars.
fn names_many(input: &str) -> bool {
    if reel::recordings::ObjectUrl::is_object_url(input) {
        return true;
    }
    let path = std::path::Path::new(input);
    path.is_dir() || (!path.exists() && input.contains(['*', '?', '[']))
}

/// Replays the log at `path` offline through the real tree, reading it once (see the
/// module docs); returns its statistics and the replay. `counter` counts the entries read;
/// `journal` takes the replay's journal (without one, it is not kept).
pub(super) async fn replay_log(
    path: &str,
    salvage: bool,
    counter: Option<Arc<AtomicU64>>,
    journal: Option<Arc<dyn JournalSink>>,
) -> Result<(LogStats, OfflineReplay), CliError> {
    // Without a journal to compare with, the replay's is not kept.
    let journal = journal.unwrap_or_else(|| Arc::new(Unkept));
    let scan = TapeScan::new();
    let mut input = WireInput::open(path)?.salvaging(salvage);
    if let Some(counter) = counter {
        input = input.counting(counter);
    }
    let failed = Arc::new(Mutex::new(None));
    let entries = ScannedInput {
        input,
        scan: Arc::clone(&scan),
        failed: Arc::clone(&failed),
    };
    // A short log (a replay farm's usual session) is read here, with no reader thread and
    // no hand-over per entry; a longer one streams from a thread of its own.
    let tape = Tape::streamed_unless_short(path, entries).map_err(CliError::Runtime)?;
    if let Some(read_ahead) = tape.read_ahead() {
        scan.attach(read_ahead);
    }
    let read_error = || failed.lock().unwrap_or_else(PoisonError::into_inner).take();
    let setup = match scan.setup().await {
        Ok(setup) => setup,
        // A bad entry before the first frame the client sent is the error to report.
        Err(missing) => {
            return Err(read_error().unwrap_or_else(|| CliError::NoSetup {
                path: path.to_owned(),
                found: missing.to_string(),
            }));
        }
    };
    let sinks = OfflineSinks {
        tap: None,
        journal: Some(journal),
    };
    let resume = resumed_from(path).await?;
    // Boxed: the replay's future is tens of kilobytes (the whole tree's spawn and run);
    // held inline it would make this future as large, copied whole each time it is moved
    // (into `block_on`, into its box), which was 4 % of a farm session's instructions.
    let replayed = Box::pin(replay_offline_resumed(
        tape,
        setup,
        scan.tool_callbacks(),
        sinks,
        resume,
    ))
    .await;
    // A bad entry ends the tape where it is: the error to report, whatever the replay made
    // of the frames before it.
    if let Some(error) = read_error() {
        return Err(error);
    }
    let replay = replayed.map_err(|source| CliError::Replay {
        path: path.to_owned(),
        source,
    })?;
    let stats = scan.stats().await;
    match read_error() {
        Some(error) => Err(error),
        None => Ok((stats, replay)),
    }
}

/// The session id a resumed recording's snapshot is kept under in its replay's own
/// in-memory backend (the recording's id is not in the files, and nothing the replay
/// compares depends on it).
const RESUMED_SESSION_ID: &str = "replay";

/// The snapshot the session recorded at `path` resumed from, if it did (`X.resume.json`
/// beside `X.wire.jsonl`): read and seeded by the library's own
/// [`reel_fluent::seed_resumed_from`], so `reel replay` resumes exactly as
/// `Live::builder()…replay()` does. Standard input or a pipe has nothing beside it.
async fn resumed_from(path: &str) -> Result<Option<OfflineResume>, CliError> {
    if !is_regular_file(path) {
        return Ok(None);
    }
    let backend = Arc::new(MemoryPersistence::new());
    let resumed =
        reel_fluent::seed_resumed_from(backend.as_ref(), RESUMED_SESSION_ID, Path::new(path))
            .await
            .map_err(|source| CliError::Resume {
                path: path.to_owned(),
                source,
            })?;
    Ok(resumed.map(|resumed| OfflineResume {
        persistence: backend,
        session_id: RESUMED_SESSION_ID.to_owned(),
        restored_at_ms: resumed.restored_at_ms,
    }))
}

/// The journal sink of a replay with no recorded journal to compare with.
struct Unkept;

impl JournalSink for Unkept {
    fn record(&self, _mutation: &StateMutation) {}
}

/// The checked entries of a wire log, each shown to the scan before the replay gets it. The
/// first error ends them and is kept for the command to report.
struct ScannedInput {
    input: WireInput,
    scan: Arc<TapeScan>,
    failed: Arc<Mutex<Option<CliError>>>,
}

impl Iterator for ScannedInput {
    type Item = WireEntry;

    fn next(&mut self) -> Option<WireEntry> {
        match self.input.next() {
            Some(Ok(entry)) => {
                self.scan.observe(&entry);
                Some(entry)
            }
            Some(Err(error)) => {
                *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
                self.scan.end();
                None
            }
            None => {
                self.scan.end();
                None
            }
        }
    }
}

impl Drop for ScannedInput {
    /// Whatever stops the reading, the scan's waiters are told it ended.
    fn drop(&mut self) {
        self.scan.end();
    }
}

/// The recorded journal at `path`: its final values, and a matcher that compares it entry
/// by entry with the replay's. A regular file is read twice (the second read streams:
/// memory holds one entry); anything else once, its entries kept for the matcher.
fn recorded_journal(
    path: &str,
    salvage: bool,
) -> Result<(JournalFinal, StreamingJournalMatch), CliError> {
    if !is_regular_file(path) {
        let mut kept = Vec::new();
        let finals = read_journal(path, salvage, Some(&mut kept))?;
        let matcher = StreamingJournalMatch::new(kept.into_iter().map(Ok));
        return Ok((finals, matcher));
    }
    let finals = read_journal(path, salvage, None)?;
    // The same entries the first read checked (and salvaged, and warned about).
    let reader = open_journal(path, salvage)?;
    Ok((finals, StreamingJournalMatch::new(reader)))
}

/// Fails when the journal's mutations all fall outside the wire log's time span: it was
/// recorded in another session, and a diff against it would be noise.
fn check_same_session(
    journal_path: &str,
    journal: &JournalFinal,
    log_path: &str,
    stats: &LogStats,
) -> Result<(), CliError> {
    let (Some(journal_range), Some(first), Some(last)) =
        (journal.time_range(), stats.first_ts_ms, stats.last_ts_ms)
    else {
        return Ok(());
    };
    if journal_range.1 < first || journal_range.0 > last {
        return Err(CliError::ForeignJournal {
            journal: journal_path.to_owned(),
            journal_range: utc_range(journal_range),
            log: log_path.to_owned(),
            log_range: utc_range((first, last)),
        });
    }
    Ok(())
}
