//! Running the demo: the assistant's session, recorded to files, then replayed offline from
//! those files with the same tools and phases.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reel_actors::LiveSessionBuilder;
use reel_protocol::ApiEndpoint;
use reel_recorder::journal::{FileJournalSink, JournalSink, StateMutation, read_journal};
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::wire_log::{WireEntry, WireRecorder};
use reel_recorder::{FileWireRecorder, RecordError, WireLogReader, read_wire_log};
use reel_replayer::journal_diff::{JournalDiff, JournalFinal};
use reel_replayer::journal_match::{JournalMatch, compare_journals};
use reel_replayer::log_stats::LogStats;
use reel_replayer::offline::{OfflineReplay, replay_to_end};
use reel_replayer::{Pacing, ReplayError, ReplayOptions, Tape, Verdict};
use reel_tape_server::{Pace, ServeError, TapeLibrary, TapeServer};

use super::{WEATHER_TAPE, conversation, weather};

/// How long the demo waits for the model to finish a turn.
pub const TURN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the demo could not finish.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The bundled tape did not load (a build problem).
    #[error("the bundled tape is unreadable: {0}")]
    Tape(RecordError),
    /// The tape server did not start.
    #[error("the tape server did not start: {0}")]
    Serve(#[from] ServeError),
    /// A recording file could not be created or read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The recordings folder could not be created.
    #[error("cannot create {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The session could not start.
    #[error("the session could not start: {0}")]
    Start(#[from] reel_actors::SessionStartError),
    /// The conversation broke off.
    #[error("the conversation broke off: {0}")]
    Conversation(#[from] conversation::ConversationError),
    /// The replay could not start.
    #[error("the replay could not start: {0}")]
    Replay(#[from] ReplayError),
    /// The demo's tools or phases are invalid (a build problem).
    #[error("the demo assistant is misconfigured: {0}")]
    Assistant(String),
    /// A recording file did not take every write (a full disk, a file size limit): the
    /// recording is incomplete, and a replay of it would report drift that is not there.
    #[error(
        "{path}: the {what} is incomplete: {errors} of its writes failed (a full disk or a file size limit?); it is not replayed"
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// `wire log` or `journal`.
        what: &'static str,
        /// How many writes or flushes failed.
        errors: u64,
    },
}

/// The files a recorded session left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// The wire log.
    pub wire: PathBuf,
    /// The state journal.
    pub journal: PathBuf,
}

/// What replaying a recording showed.
#[derive(Debug)]
pub struct ReplayOutcome {
    /// The recording's numbers (entries, directions, duration).
    pub stats: LogStats,
    /// The replay: summary, final state, the runtime's frames and their divergences.
    pub replay: OfflineReplay,
    /// The recorded journal's final values.
    pub recorded_journal: JournalFinal,
    /// The recorded journal's final values against the replay's final state.
    pub journal_diff: JournalDiff,
    /// The recorded journal against the replay's, entry by entry.
    pub journal_match: JournalMatch,
}

impl ReplayOutcome {
    /// CLEAN or DRIFT ([`reel_replayer::verdict`]): no divergence, the journal written
    /// again entry by entry, no drifted key.
    pub fn verdict(&self) -> Verdict {
        Verdict::new(&self.replay.divergences)
            .journal(&self.journal_match)
            .final_state(&self.journal_diff)
    }

    /// Clean: see [`verdict`](ReplayOutcome::verdict).
    pub fn is_clean(&self) -> bool {
        self.verdict().is_clean()
    }
}

fn builder(endpoint: ApiEndpoint) -> Result<LiveSessionBuilder, DemoError> {
    let tools = weather::tools().map_err(|e| DemoError::Assistant(e.to_string()))?;
    let phases = weather::phases().map_err(|e| DemoError::Assistant(e.to_string()))?;
    Ok(LiveSessionBuilder::new(weather::config(), endpoint)
        .dispatcher(tools)
        .phases(phases))
}

/// The bundled tape as wire entries, read (and checked) like any wire log.
pub fn bundled_tape() -> Result<Vec<WireEntry>, DemoError> {
    let lines = JsonlReader::new(WEATHER_TAPE.as_bytes(), "assets/tapes/weather.wire.jsonl");
    WireLogReader::new(lines)
        .collect::<Result<_, _>>()
        .map_err(DemoError::Tape)
}

/// Runs the assistant's session against `endpoint`, recording its wire log and journal
/// into `dir` as `<stem>.wire.jsonl` and `<stem>.journal.jsonl`.
pub async fn record_session(
    endpoint: ApiEndpoint,
    dir: &Path,
    stem: &str,
) -> Result<Recording, DemoError> {
    std::fs::create_dir_all(dir).map_err(|source| DemoError::Folder {
        path: dir.to_owned(),
        source,
    })?;
    let recording = Recording {
        wire: dir.join(format!("{stem}.wire.jsonl")),
        journal: dir.join(format!("{stem}.journal.jsonl")),
    };
    let wire = Arc::new(FileWireRecorder::create(&recording.wire)?);
    let journal = Arc::new(FileJournalSink::create(&recording.journal)?);
    let builder = builder(endpoint)?
        .record_wire(Arc::clone(&wire) as Arc<dyn WireRecorder>)
        .journal_sink(Arc::clone(&journal) as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let handle = builder.connect().await?;
    let talked = conversation::run(&handle, &mut events, TURN_TIMEOUT).await;
    handle.disconnect().await;
    // Whatever the conversation did, a file that lost writes is the first thing to say:
    // what was recorded is not the session.
    WireRecorder::flush(wire.as_ref());
    JournalSink::flush(journal.as_ref());
    for (path, what, errors) in [
        (&recording.wire, "wire log", wire.error_count()),
        (&recording.journal, "journal", journal.error_count()),
    ] {
        if errors > 0 {
            return Err(DemoError::Write {
                path: path.clone(),
                what,
                errors,
            });
        }
    }
    talked?;
    Ok(recording)
}

/// Serves the bundled tape on loopback — at the recorded pace divided by `speed`, or at
/// once when `speed` is `None` — and runs the assistant's session against it.
pub async fn record_against_bundled_tape(
    dir: &Path,
    stem: &str,
    speed: Option<f64>,
) -> Result<Recording, DemoError> {
    let library = TapeLibrary::new().with_entries("weather", bundled_tape()?);
    let pace = match speed {
        Some(speed) => Pace::Recorded { speed },
        None => Pace::AtOnce,
    };
    let mut server = TapeServer::replay(library).pace(pace).start().await?;
    let endpoint = ApiEndpoint::google_ai("")
        .without_credential()
        .with_base_url(&server.base_url());
    let recorded = record_session(endpoint, dir, stem).await;
    server.shutdown().await;
    recorded
}

/// Replays `recording` offline with the assistant's own tools and phases and a fresh state,
/// and compares what it writes with what was recorded.
pub async fn replay_recording(recording: &Recording) -> Result<ReplayOutcome, DemoError> {
    let entries = read_wire_log(&recording.wire)?;
    let mut stats = LogStats::new();
    for entry in &entries {
        stats.observe(entry);
    }
    let recorded_journal: Vec<StateMutation> = read_journal(&recording.journal)?;
    let builder = builder(ApiEndpoint::offline())?;
    let options = ReplayOptions {
        pacing: Pacing::Causal,
        ..ReplayOptions::default()
    };
    let replay = replay_to_end(builder, Tape::from_entries(entries), options, None).await?;
    let journal_match = compare_journals(&recorded_journal, &replay.journal);
    let recorded_final = JournalFinal::from_mutations(recorded_journal.iter().cloned());
    let journal_diff = recorded_final.diff(replay.state.iter());
    Ok(ReplayOutcome {
        stats,
        replay,
        recorded_journal: recorded_final,
        journal_match,
        journal_diff,
    })
}
