//! `reel replay`: runs a wire log again, offline, through the real session tree, and
//! reports it turn by turn; with `--journal`, diffs the recorded journal's final values
//! against the replay's final state.
//!
//! The log is read twice, streamed both times: first to check it and gather what the replay
//! needs (the setup, the recorded tool responses by call id, counts and times), then as the
//! tape. The work itself is [`reel_replayer::offline`]; the report is
//! [`super::replay_report`].
//!
//! Exit codes: 0 the journal matched (or none was given), 1 drift, 2 bad input.

use std::process::ExitCode;

use clap::Args;
use reel_protocol::Setup;
use reel_replayer::Tape;
use reel_replayer::journal_diff::JournalFinal;
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::replay_offline;
use reel_replayer::recorded_tools::RecordedToolResponses;

use super::input::{WireInput, read_journal};
use super::progress::Progress;
use super::replay_report::ReplayReport;
use super::time::utc_range;
use super::{CliError, print_stdout};

/// Arguments of `reel replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The wire log (JSON lines, one entry per frame).
    log: String,
    /// The session's recorded journal: diff its final value of each key against the
    /// replay's final state.
    #[arg(long, value_name = "JOURNAL")]
    journal: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// A damaged log or journal (a NUL-filled tail after a power loss, a corrupt line):
    /// replay the entries before its first bad line instead of failing.
    #[arg(long)]
    salvage: bool,
}

/// Replays the log and prints the report. Exit 1 when the journal drifted.
pub fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    let progress = Progress::start("reading");
    let mut stats = LogStats::new();
    let mut answers = RecordedToolResponses::new();
    for entry in WireInput::open(&args.log)?
        .salvaging(args.salvage)
        .counting(progress.counter())
    {
        let entry = entry?;
        stats.observe(&entry);
        answers.observe(&entry);
    }
    let setup = recorded_setup(&args.log, &mut stats)?;
    let journal = match &args.journal {
        Some(path) => {
            let journal = read_journal(path, args.salvage)?;
            check_same_session(path, &journal, &args.log, &stats)?;
            Some((path.as_str(), journal))
        }
        None => None,
    };

    progress.stage("replaying");
    let tape = if args.salvage {
        Tape::open_salvaging(&args.log)
    } else {
        Tape::open(&args.log)
    };
    let tape = tape.map_err(|e| CliError::from_record(&args.log, "wire log", e))?;
    let tap = progress.is_visible().then(|| progress.frame_counter());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let replay = runtime
        .block_on(replay_offline(tape, setup, answers, tap))
        .map_err(|source| CliError::Replay {
            path: args.log.clone(),
            source,
        })?;
    drop(runtime);
    progress.finish();

    let report = ReplayReport::new(&args.log, &stats, &replay, journal);
    if args.json {
        let json = serde_json::to_string_pretty(&report.to_json()?)?;
        print_stdout(&format!("{json}\n"))?;
    } else {
        print_stdout(&report.to_string())?;
    }
    Ok(if report.drifted() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
