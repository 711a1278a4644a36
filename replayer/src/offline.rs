//! Replaying a recording with nothing but the recording: the real session tree, configured
//! from the recorded setup, its tool calls answered with the recorded responses.
//!
//! This is what a command line can do with a wire log alone. What runs is the real tree
//! (router, lanes, phase tracking, state, telemetry) over the recorded frames; what does not
//! is the model (its outputs are the recorded inbound frames) and the application's code:
//! no tools (calls get their recorded responses, see [`RecordedToolResponses`](crate::recorded_tools::RecordedToolResponses)), no phases,
//! no callbacks. So the tool responses come out byte-identical, while state the tools or the
//! application wrote is missing from the replay, and a journal diff shows those keys.
//!
//! A log of any length replays in bounded memory when it is read once, as the command
//! line reads it: a [`crate::TapeScan`] gathers the setup, statistics and tool responses
//! as the tape's reader reads, and a journal sink of the caller's
//! ([`OfflineSinks::journal`], such as a [`crate::journal_match::StreamingJournalMatch`])
//! takes the replay's journal instead of memory.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_recorder::wire_read::read_wire_log;
//! use reel_replayer::log_stats::LogStats;
//! use reel_replayer::offline::{OfflineSinks, replay_offline};
//! use reel_replayer::recorded_tools::RecordedToolResponses;
//! use reel_replayer::Tape;
//!
//! let entries = read_wire_log("user-123.wire.jsonl")?;
//! let mut stats = LogStats::new();
//! let mut answers = RecordedToolResponses::new();
//! for entry in &entries {
//!     stats.observe(entry);
//!     answers.observe(entry);
//! }
//! let setup = stats.setup.ok_or("no setup")?;
//! let tape = Tape::from_entries(entries);
//! let callbacks = answers.into_control_callbacks();
//! let replay = replay_offline(tape, setup, callbacks, OfflineSinks::default()).await?;
//! for turn in &replay.summary.turns {
//!     println!("turn {}: {}", turn.number, turn.counts());
//! }
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use reel_actors::callbacks::ControlCallbacks;
use reel_actors::persistence::SessionPersistence;
use reel_actors::state::StateSnapshot;
use reel_actors::writer::Origin;
use reel_actors::{LiveSessionBuilder, SessionEnd};
use reel_protocol::{ApiEndpoint, SessionConfig, Setup};
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::WireRecorder;

use crate::divergence::Divergence;
use crate::harness::{ReplayError, replay_session};
use crate::outbound::CapturedFrame;
use crate::pacing::Pacing;
use crate::replay_transport::ReplayOptions;
use crate::summary::{SessionSummary, SummaryBuilder};
use crate::tape::Tape;

/// What an offline replay produced.
#[derive(Debug)]
pub struct OfflineReplay {
    /// The session, turn by turn, from the replayed events.
    pub summary: SessionSummary,
    /// The state the replay ended with.
    pub state: StateSnapshot,
    /// Every state mutation the replay wrote, in journal order: what a recorded journal is
    /// compared with, entry by entry ([`crate::journal_match`]). Empty when the journal
    /// went to a sink of the caller's ([`OfflineSinks::journal`]).
    pub journal: Vec<StateMutation>,
    /// The frames the runtime sent again (setups, tool responses), each compared with its
    /// recorded counterpart.
    pub runtime_frames: Vec<CapturedFrame>,
    /// Where the runtime's frames parted from the recorded ones.
    pub divergences: Vec<Divergence>,
    /// Recorded frames only application code produces (instruction updates, a callback's
    /// prompts), taken from the recording at their place: no application code runs here.
    pub taken_from_recording: Vec<u64>,
    /// How the replayed session ended.
    pub end: SessionEnd,
}

/// Where an offline replay's outputs go besides the [`OfflineReplay`] it returns.
#[derive(Default)]
pub struct OfflineSinks {
    /// Receives every frame the replay stamps (to count progress, or to record the
    /// replay).
    pub tap: Option<Arc<dyn WireRecorder>>,
    /// Receives the replay's journal instead of [`OfflineReplay::journal`] (which then
    /// stays empty): a journal of any length in bounded memory.
    pub journal: Option<Arc<dyn JournalSink>>,
}

impl std::fmt::Debug for OfflineSinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineSinks")
            .field("tap", &self.tap.is_some())
            .field("journal", &self.journal.is_some())
            .finish()
    }
}

/// Replays `tape` offline (see the [module docs](self)): a session configured from
/// `setup` (the recording's first setup), its tool calls answered by `answers` (the
/// recorded responses:
/// [`RecordedToolResponses::into_control_callbacks`](crate::recorded_tools::RecordedToolResponses::into_control_callbacks) or
/// [`crate::TapeScan::tool_callbacks`]), paced as fast as the tree consumes the frames,
/// and causally: the frames that followed a tool response wait until the replay has sent
/// it again, as they waited for it live — else the phase could see the turn end before the
/// answer, and the journal would differ.
pub async fn replay_offline(
    tape: Tape,
    setup: Setup,
    answers: ControlCallbacks,
    sinks: OfflineSinks,
) -> Result<OfflineReplay, ReplayError> {
    replay_offline_resumed(tape, setup, answers, sinks, None).await
}

/// The snapshot a recorded session resumed from, for its offline replay to resume from
/// it too: a backend holding it under `session_id` (`reel_fluent::seed_resumed_from` puts
/// it there from the recording's resume file), and when the recording restored it.
pub struct OfflineResume {
    /// The backend holding the snapshot.
    pub persistence: Arc<dyn SessionPersistence>,
    /// The id it is saved under.
    pub session_id: String,
    /// The session time the recording restored it at, if known (else the tape's start).
    pub restored_at_ms: Option<u64>,
}

impl std::fmt::Debug for OfflineResume {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineResume")
            .field("session_id", &self.session_id)
            .field("restored_at_ms", &self.restored_at_ms)
            .finish_non_exhaustive()
    }
}

/// [`replay_offline`] of a session that resumed from a snapshot (`resume`): the replay
/// restores it before it starts, as the recording did, so the restored state's journal
/// entries, the phase and the setup come out as recorded.
pub async fn replay_offline_resumed(
    tape: Tape,
    setup: Setup,
    answers: ControlCallbacks,
    sinks: OfflineSinks,
    resume: Option<OfflineResume>,
) -> Result<OfflineReplay, ReplayError> {
    let config = SessionConfig::from_setup(setup);
    let mut builder =
        LiveSessionBuilder::new(config, ApiEndpoint::offline()).control_callbacks(answers);
    if let Some(resume) = resume {
        builder = builder
            .persistence(resume.persistence)
            .session_id(resume.session_id);
        if let Some(ms) = resume.restored_at_ms {
            builder = builder.restored_at(ms);
        }
    }
    if let Some(tap) = sinks.tap {
        builder = builder.record_wire(tap);
    }
    let options = ReplayOptions {
        pacing: Pacing::Causal,
        without_application: true,
        ..ReplayOptions::default()
    };
    replay_to_end(builder, tape, options, sinks.journal).await
}

/// Replays `tape` through `builder` with `options` to its end (see [`crate::Replay::run_to_end`])
/// and gathers what it produced: the summary of its events, its final state, its journal
/// (into `journal` if given, else kept in memory; a journal sink set on `builder` is
/// replaced), the runtime's frames and where they parted from the recording.
pub async fn replay_to_end(
    builder: LiveSessionBuilder,
    tape: Tape,
    options: ReplayOptions,
    journal: Option<Arc<dyn JournalSink>>,
) -> Result<OfflineReplay, ReplayError> {
    let (kept, sink) = match journal {
        Some(journal) => (None, journal),
        None => {
            let kept = Arc::new(MemoryJournalSink::new());
            (Some(Arc::clone(&kept)), kept as Arc<dyn JournalSink>)
        }
    };
    let builder = builder.journal_sink(sink);
    let mut replay = replay_session(builder, tape, options).await?;
    let mut summary = SummaryBuilder::new();
    let end = replay.run_to_end(|event| summary.push(&event)).await;
    Ok(OfflineReplay {
        summary: summary.finish(),
        state: replay.handle().state().snapshot(),
        journal: kept.map(|kept| kept.entries()).unwrap_or_default(),
        runtime_frames: replay
            .outbound_frames()
            .into_iter()
            .filter(|f| f.origin == Origin::Runtime)
            .collect(),
        divergences: replay.divergences(),
        taken_from_recording: replay.taken_from_recording(),
        end,
    })
}
