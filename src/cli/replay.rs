//! `reel replay`: runs a wire log again, offline, through the real session tree, and
//! reports it turn by turn; with `--journal`, compares the recorded journal with the
//! replay's, entry by entry, and its final values with the replay's final state.
//!
//! The log is read twice, streamed both times: first to check it and gather what the replay
//! needs (the setup, the recorded tool responses by call id, counts and times), then as the
//! tape. The work itself is [`reel_replayer::offline`]; the report is
//! [`super::replay_report`].
//!
//! The journal is read twice too: before the replay, to check that it belongs to the log
//! and fold its final values; after, to compare it with the replay's entry by entry.
//!
//! Exit codes: 0 CLEAN (no outbound divergence; the journal, if given, written again entry
//! by entry), 1 DRIFT, 2 bad input. CLEAN is [`reel_replayer::verdict`]'s definition, the
//! one `reel demo` and `ReplayOutcome::is_clean` use.

use std::process::ExitCode;

use clap::Args;
use reel_protocol::Setup;
use reel_recorder::journal::{StateMutation, open_journal};
use reel_replayer::Tape;
use reel_replayer::journal_diff::JournalFinal;
use reel_replayer::journal_match::{JournalMatch, JournalMatcher};
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::{OfflineReplay, replay_offline};
use reel_replayer::recorded_tools::RecordedToolResponses;

use super::input::{WireInput, read_journal};
use super::progress::Progress;
use super::replay_report::{RecordedJournal, ReplayReport};
use super::time::utc_range;
use super::{CliError, print_stdout};

/// Arguments of `reel replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The wire log (JSON lines, one entry per frame); or several, directories (every
    /// `*.wire.jsonl` below them) and globs (`'recordings/**/*.wire.jsonl'`), replayed in
    /// parallel with one line per session.
    #[arg(required = true, value_name = "LOG")]
    pub(super) logs: Vec<String>,
    /// The session's recorded journal: compare it with the replay's, entry by entry, and
    /// its final value of each key with the replay's final state (one log only).
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
}

/// Replays the log and prints the report. Exit 1 when the replay drifted: an outbound
/// divergence, or a journal not written again entry by entry. With several logs, a
/// directory or a glob, or `--junit`, replays them all in parallel instead
/// ([`super::replay_farm`]).
pub fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    if args.logs.len() != 1 || args.junit.is_some() || names_many(&args.logs[0]) {
        return super::replay_farm::run(args);
    }
    let log = args.logs[0].clone();
    let progress = Progress::start("reading");
    let (stats, setup, answers) = read_log(&log, args.salvage, &progress)?;
    let journal = match &args.journal {
        Some(path) => {
            let journal = read_journal(path, args.salvage)?;
            check_same_session(path, &journal, &log, &stats)?;
            Some((path.as_str(), journal))
        }
        None => None,
    };

    progress.stage("replaying");
    let tap = progress.is_visible().then(|| progress.frame_counter());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let replay = runtime.block_on(replay_tape(&log, args.salvage, setup, answers, tap))?;
    drop(runtime);
    progress.finish();

    let journal = match journal {
        Some((path, finals)) => Some(RecordedJournal {
            path,
            finals,
            matched: match_journal(path, &replay.journal, args.salvage)?,
        }),
        None => None,
    };
    let report = ReplayReport::new(&log, &stats, &replay, journal);
    if args.json {
        let json = serde_json::to_string_pretty(&report.to_json()?)?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_stdout(&report.to_string())?;
    }
    Ok(if report.verdict().is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether `input` names several logs: a directory, or a glob (a pattern that is not the
/// name of a file). A single path that does not exist stays one log, and fails as one.
fn names_many(input: &str) -> bool {
    let path = std::path::Path::new(input);
    path.is_dir() || (!path.exists() && input.contains(['*', '?', '[']))
}

/// Reads the log at `path` once, to check it and gather what the replay needs: its
/// statistics, the recorded setup, the recorded tool responses.
pub(super) fn read_log(
    path: &str,
    salvage: bool,
    progress: &Progress,
) -> Result<(LogStats, Setup, RecordedToolResponses), CliError> {
    let mut stats = LogStats::new();
    let mut answers = RecordedToolResponses::new();
    for entry in WireInput::open(path)?
        .salvaging(salvage)
        .counting(progress.counter())
    {
        let entry = entry?;
        stats.observe(&entry);
        answers.observe(&entry);
    }
    let setup = recorded_setup(path, &mut stats)?;
    Ok((stats, setup, answers))
}

/// Replays the log at `path` offline through the real tree, as its tape.
pub(super) async fn replay_tape(
    path: &str,
    salvage: bool,
    setup: Setup,
    answers: RecordedToolResponses,
    tap: Option<std::sync::Arc<dyn reel_recorder::wire_log::WireRecorder>>,
) -> Result<OfflineReplay, CliError> {
    let tape = if salvage {
        Tape::open_salvaging(path)
    } else {
        Tape::open(path)
    };
    let tape = tape.map_err(|e| CliError::from_record(path, "wire log", e))?;
    replay_offline(tape, setup, answers, tap)
        .await
        .map_err(|source| CliError::Replay {
            path: path.to_owned(),
            source,
        })
}

/// Streams the journal at `path` (read and checked once already: its torn last line, if
/// any, was warned about then) against the replay's journal, entry by entry.
fn match_journal(
    path: &str,
    replayed: &[StateMutation],
    salvage: bool,
) -> Result<JournalMatch, CliError> {
    let mut reader =
        open_journal(path).map_err(|error| CliError::from_record(path, "journal", error))?;
    if salvage {
        // The same entries the first read salvaged (it warned about them already).
        reader = reader.salvaging();
    }
    let mut matcher = JournalMatcher::new(replayed);
    for mutation in reader {
        let mutation = mutation.map_err(|error| CliError::from_record(path, "journal", error))?;
        matcher.push(&mutation);
    }
    Ok(matcher.finish())
}

/// The setup the session was configured with: the first frame the client sent.
fn recorded_setup(path: &str, stats: &mut LogStats) -> Result<Setup, CliError> {
    stats.setup.take().ok_or_else(|| CliError::NoSetup {
        path: path.to_owned(),
        found: match stats.first_outbound_seq {
            Some(seq) => format!("the first frame the client sent (seq {seq}) is not a setup"),
            None => "the client sent no frame".to_owned(),
        },
    })
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
