//! Running the application against a recording: the same chain builds the same session
//! tree, with only the transport swapped for one that reads the tape
//! ([`reel_replayer::replay_session`]).
//!
//! What the replay reproduces: each lane's events, the final state, the journal entry by
//! entry, and the runtime's frames (setup, tool responses, instruction updates) byte for
//! byte — any difference is a [`Divergence`](reel_replayer::Divergence). The journal the
//! recording was made with (the chain's `.journal(path)` when the replay reads the chain's
//! own `.record_wire(path)`, else `X.journal.jsonl` beside `X.wire.jsonl`) is read before
//! the replay starts, and [`ReplayOutcome::is_clean`](crate::ReplayOutcome::is_clean)
//! compares the replay's journal with it, entry by entry. What it does not
//! do: send the application's frames again (the greeting and everything sent through the
//! handle were recorded to provoke the model's answers, which come from the tape), or
//! record anything (no wire log, no journal file; the journal is kept in memory).
//!
//! MCP tools are not run: the replay declares them as the recorded setup did and answers
//! them with the recorded responses, so no MCP server is started ([`crate::recorded_mcp`]).
//!
//! Out-of-band model calls (LLM extractors, tools' and the application's models) are
//! answered from the recording's cassette — `X.cassette.json` next to `X.wire.jsonl`, or
//! the chain's `llm_cassette_at` file — in replay mode: no call reaches a model, and a call
//! the cassette does not have fails at once, naming where its request differs. Those calls,
//! and recorded calls the replay never made, are the replay's
//! [`LlmDrift`](crate::LlmDrift). Persistence runs on an in-memory backend, so a replay
//! never reads or overwrites a real snapshot; it is empty, unless the recorded session
//! resumed from a snapshot — kept as `X.resume.json` beside `X.wire.jsonl` — which the
//! replay then resumes from in the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reel_actors::llm::CassetteMode;
use reel_persistence::MemoryPersistence;
use reel_protocol::{ApiEndpoint, decode_client};
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::WireEntry;
use reel_replayer::{Pacing, RecordedConfirmations, ReplayOptions, Tape, replay_session};

use crate::builder::LiveBuilder;
use crate::error::ReplayError;
use crate::llm_drift::ReplayCassette;
use crate::recorded_journal::{self, recorded_journal_path};
use crate::recorded_mcp;
use crate::recording::Recorders;
use crate::replayed::ReplayedSession;
use crate::resume_file;

/// A recording to replay: a wire log file, a [`Tape`], or wire entries in memory.
///
/// ```
/// use reel_fluent::TapeSource;
/// use reel_replayer::Tape;
///
/// let from_file = TapeSource::from("recordings/session.wire.jsonl");
/// let from_memory = TapeSource::from(Tape::from_entries(Vec::new()));
/// # drop((from_file, from_memory));
/// ```
#[derive(Debug)]
pub enum TapeSource {
    /// A wire log file, streamed.
    Path(PathBuf),
    /// A tape already open.
    Tape(Tape),
}

impl TapeSource {
    /// The wire log file, for a recording read from one.
    fn path(&self) -> Option<&Path> {
        match self {
            TapeSource::Path(path) => Some(path),
            TapeSource::Tape(_) => None,
        }
    }

    fn open(self) -> Result<Tape, ReplayError> {
        match self {
            TapeSource::Tape(tape) => Ok(tape),
            TapeSource::Path(path) => {
                Tape::open(&path).map_err(|source| ReplayError::Tape { path, source })
            }
        }
    }
}

impl From<Tape> for TapeSource {
    fn from(tape: Tape) -> Self {
        TapeSource::Tape(tape)
    }
}

impl From<Vec<WireEntry>> for TapeSource {
    fn from(entries: Vec<WireEntry>) -> Self {
        TapeSource::Tape(Tape::from_entries(entries))
    }
}

impl From<PathBuf> for TapeSource {
    fn from(path: PathBuf) -> Self {
        TapeSource::Path(path)
    }
}

impl From<&Path> for TapeSource {
    fn from(path: &Path) -> Self {
        TapeSource::Path(path.to_owned())
    }
}

impl From<&PathBuf> for TapeSource {
    fn from(path: &PathBuf) -> Self {
        TapeSource::Path(path.clone())
    }
}

impl From<&str> for TapeSource {
    fn from(path: &str) -> Self {
        TapeSource::Path(path.into())
    }
}

impl From<String> for TapeSource {
    fn from(path: String) -> Self {
        TapeSource::Path(path.into())
    }
}

/// How [`LiveBuilder::replay`] paces the tape: causally, so the model's frames that
/// followed a tool response or an instruction update wait until the replay has produced
/// it again. This is what makes a replay with real tools exact.
pub fn default_replay_options() -> ReplayOptions {
    ReplayOptions {
        pacing: Pacing::Causal,
        ..ReplayOptions::default()
    }
}

impl LiveBuilder {
    /// Runs this application against `recording` — a wire log path, a [`Tape`] or wire
    /// entries — instead of a live API, and lets the recorded frames flow at once. Tools,
    /// phases, callbacks and state run for real; the model's side comes from the tape.
    ///
    /// MCP servers named with [`mcp`](LiveBuilder::mcp) are never started: every function
    /// the recorded setup declares that the chain's own tools and setup do not, and that a
    /// server's prefix and allow-list admit, is declared exactly as recorded and answered with the responses recorded for its calls (a
    /// [`RecordedTool`](reel_replayer::RecordedTool)), so the setup and tool response
    /// frames come out byte-identical without the server.
    ///
    /// Out-of-band model calls (an LLM extractor's, a tool's, the application's through
    /// `LiveHandle::llm`) are answered from the recording's cassette — `X.cassette.json`
    /// beside `X.wire.jsonl` when it exists, or the chain's
    /// [`llm_cassette_at`](LiveBuilder::llm_cassette_at) file — opened in replay mode
    /// whatever mode the chain names: no call reaches a model. A call the cassette does not
    /// have fails at once, and it and every recorded call never made are reported as
    /// [`LlmDrift`](crate::LlmDrift). A chain with [`llm_cassette`](LiveBuilder::llm_cassette)
    /// whose recording has no cassette beside it is refused
    /// ([`ReplayError::NoCassette`]).
    ///
    /// Persistence runs on an in-memory backend under the chain's session id, never the
    /// chain's own. It starts empty, unless the recording is a wire log file `X.wire.jsonl`
    /// with a resume file `X.resume.json` beside it (written when the recorded session
    /// resumed from a snapshot): then it holds that snapshot, and the replay resumes from
    /// it exactly as the recording did — same setup frame, same restored state and phase.
    ///
    /// The journal recorded with the wire log — the chain's [`journal`](LiveBuilder::journal)
    /// file when `recording` is the chain's own [`record_wire`](LiveBuilder::record_wire)
    /// file, else `X.journal.jsonl` beside `X.wire.jsonl` — is read before the replay starts
    /// ([`ReplayError::Journal`] if it is unreadable), and the outcome is CLEAN only if the
    /// replay writes it again entry by entry ([`ReplayOutcome::verdict`](crate::ReplayOutcome::verdict)).
    ///
    /// Events are kept from the very first: [`ReplayedSession::events`] (first call) or
    /// [`subscribe`](LiveBuilder::subscribe) before replaying see them all.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::{Live, LiveBuilder};
    ///
    /// fn assistant() -> LiveBuilder {
    ///     Live::builder().text_only().instruction("You are a weather assistant.")
    /// }
    ///
    /// // Once, live: `assistant().record_wire("session.wire.jsonl").connect_from_env()`.
    /// let outcome = assistant().replay("session.wire.jsonl").await?.finish().await;
    /// assert!(outcome.is_clean(), "{}", outcome.verdict());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn replay(
        self,
        recording: impl Into<TapeSource>,
    ) -> Result<ReplayedSession, ReplayError> {
        self.replay_with(recording, default_replay_options()).await
    }

    /// [`replay`](LiveBuilder::replay) with other pacing or timeouts (the recorded timing,
    /// for instance).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// use reel_replayer::{Pacing, ReplayOptions};
    ///
    /// let options = ReplayOptions { pacing: Pacing::Recorded { speed: 2.0 }, ..ReplayOptions::default() };
    /// let replay = Live::builder().replay_with("session.wire.jsonl", options).await?;
    /// replay.drained().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn replay_with(
        self,
        recording: impl Into<TapeSource>,
        options: ReplayOptions,
    ) -> Result<ReplayedSession, ReplayError> {
        let confirmed = self
            .plan()?
            .dispatcher
            .is_some_and(|dispatcher| !dispatcher.confirmed_tools().is_empty());
        let source = recording.into();
        let log = source.path().map(Path::to_owned);
        let mut tape = source.open()?;
        let mut discovered = Vec::new();
        // What is answered from the recording — MCP tools (whose servers a replay does not
        // start) and confirmations (nobody is asked) — is found by one scan of the tape,
        // as it is read.
        let scan = if self.mcp.is_empty() && !confirmed {
            None
        } else {
            let (scanned, scan) = recorded_mcp::scanned(tape)?;
            tape = scanned;
            Some(scan)
        };
        if let Some(scan) = scan.as_ref().filter(|_| !self.mcp.is_empty()) {
            let native = self.native_function_names()?;
            discovered.push(recorded_mcp::recorded_tools(scan, &native, &self.mcp).await?);
        }
        let mut plan = self.plan_with(&discovered, false)?;
        if let (Some(dispatcher), Some(scan), true) = (plan.dispatcher.as_mut(), &scan, confirmed) {
            dispatcher
                .set_confirmation_provider(Arc::new(RecordedConfirmations::new(Arc::clone(scan))));
        }
        let cassette = match self.llm.replay_cassette(log.as_deref())? {
            None => None,
            Some(path) => {
                let cassette = self
                    .llm
                    .open(&path, CassetteMode::Replay)
                    .map_err(|source| ReplayError::Cassette { path, source })?;
                Some(ReplayCassette::new(cassette))
            }
        };
        plan.cassette = cassette.as_ref().map(ReplayCassette::interceptor);
        let snapshots = plan.persistence.as_mut().map(|persisting| {
            let memory = Arc::new(MemoryPersistence::new());
            persisting.backend = memory.clone();
            (memory, persisting.session_id.clone())
        });
        let mut restored_at = None;
        if let (Some((memory, id)), Some(log)) = (&snapshots, &log) {
            restored_at = resume_file::seed_resumed_from(memory.as_ref(), id, log)
                .await
                .map_err(ReplayError::Resume)?
                .and_then(|resumed| resumed.restored_at_ms);
        }
        self.orchestration.bind_replay(log.as_deref())?;
        let resolutions = self.orchestration.resolutions();
        let recorded_journal = log
            .as_deref()
            .and_then(|log| recorded_journal_path(&self.recording, log))
            .map(recorded_journal::read)
            .transpose()?;
        let endpoint = tape
            .peek()
            .map(recorded_endpoint)
            .unwrap_or_else(ApiEndpoint::offline);
        let journal = Arc::new(MemoryJournalSink::new());
        let recorders = Recorders {
            wire: None,
            journal: Some(Arc::clone(&journal) as Arc<dyn JournalSink>),
            resume: None,
        };
        let mut session = plan.session_builder(endpoint, recorders);
        if let Some(ms) = restored_at {
            session = session.restored_at(ms);
        }
        let mut replay = replay_session(session, tape, options).await?;
        let from_start = replay.events();
        replay.release();
        Ok(ReplayedSession::new(
            replay,
            from_start,
            journal,
            cassette,
            snapshots,
            recorded_journal,
            resolutions,
        ))
    }
}

/// An endpoint that never connects, on the platform the recording was made on: the setup
/// is written again exactly as recorded (a Vertex AI model resource name, binary frames).
pub(crate) fn recorded_endpoint(first: &WireEntry) -> ApiEndpoint {
    let model = decode_client(&first.payload)
        .ok()
        .and_then(|message| message.setup)
        .and_then(|setup| setup.model);
    let vertex = model.as_deref().and_then(|model| {
        let rest = model.strip_prefix("projects/")?;
        let (project, rest) = rest.split_once("/locations/")?;
        let (location, _) = rest.split_once('/')?;
        Some((project.to_owned(), location.to_owned()))
    });
    match vertex {
        Some((project, location)) => ApiEndpoint::vertex(project, location, "")
            .without_credential()
            .with_base_url(ApiEndpoint::offline().base_url()),
        None => ApiEndpoint::offline(),
    }
}

#[cfg(test)]
mod tests {
    use reel_protocol::{Platform, SessionConfig};
    use reel_recorder::wire_log::Direction;

    use super::*;

    fn setup_entry(platform: &Platform) -> WireEntry {
        let payload = SessionConfig::new("gemini-live-2.5-flash").setup_frame(platform);
        WireEntry::frame(1, Direction::Out, 0, payload, None, false)
    }

    #[test]
    fn a_vertex_recording_is_replayed_on_vertex() {
        let platform = Platform::Vertex {
            project: "reel-test".into(),
            location: "europe-west4".into(),
        };
        let endpoint = recorded_endpoint(&setup_entry(&platform));
        assert_eq!(endpoint.platform(), &platform);
        assert_eq!(endpoint.base_url(), "ws://offline.invalid");
    }

    #[test]
    fn anything_else_is_replayed_on_google_ai() {
        assert_eq!(
            recorded_endpoint(&setup_entry(&Platform::GoogleAi)),
            ApiEndpoint::offline()
        );
        let not_a_setup = WireEntry::frame(1, Direction::In, 0, &b"{}"[..], None, false);
        assert_eq!(recorded_endpoint(&not_a_setup), ApiEndpoint::offline());
    }
}
