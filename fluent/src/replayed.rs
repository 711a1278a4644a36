//! [`ReplayedSession`]: a session running against a recording, and [`ReplayOutcome`]:
//! everything it produced, for assertions.

use std::sync::Arc;

use reel_actors::llm::Cassette;
use reel_actors::state::{State, StateSnapshot};
use reel_actors::{EventEnvelope, EventStream, Lane, LiveEvent, LiveHandle, SessionEnd};
use reel_persistence::{MemoryPersistence, SessionSnapshot};
use reel_recorder::journal::{MemoryJournalSink, StateMutation};
use reel_replayer::journal_diff::{JournalDiff, JournalFinal};
use reel_replayer::journal_match::{JournalMatch, compare_journals};
use reel_replayer::{CapturedFrame, Divergence, Replay, Verdict};
use serde::de::DeserializeOwned;

use reel_agents::{Resolutions, ResolverDrift};

use crate::llm_drift::{LlmDrift, ReplayCassette};

/// A session replaying a recording (from [`LiveBuilder::replay`](crate::LiveBuilder::replay)):
/// the recorded frames are already flowing. It has the replay harness's API — events,
/// `drained`, divergences, outbound frames, `disconnect` — and the session's handle.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use reel_fluent::Live;
///
/// let mut replay = Live::builder().text_only().replay("session.wire.jsonl").await?;
/// let mut events = replay.events(); // every event since the start
/// replay.drained().await; // every recorded frame handed over and consumed
/// assert!(replay.divergences().is_empty());
/// replay.disconnect().await;
/// while let Some(event) = events.recv().await {
///     println!("{:?} {}", event.lane, event.event.kind());
/// }
/// # Ok(())
/// # }
/// ```
pub struct ReplayedSession {
    replay: Replay,
    from_start: Option<EventStream>,
    journal: Arc<MemoryJournalSink>,
    cassette: Option<ReplayCassette>,
    snapshots: Option<(Arc<MemoryPersistence>, String)>,
    recorded_journal: Option<Vec<StateMutation>>,
    resolutions: Option<Resolutions>,
}

impl std::fmt::Debug for ReplayedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayedSession")
            .field("replay", &self.replay)
            .field("cassette", &self.cassette)
            .finish_non_exhaustive()
    }
}

impl ReplayedSession {
    pub(crate) fn new(
        replay: Replay,
        from_start: EventStream,
        journal: Arc<MemoryJournalSink>,
        cassette: Option<ReplayCassette>,
        snapshots: Option<(Arc<MemoryPersistence>, String)>,
        recorded_journal: Option<Vec<StateMutation>>,
        resolutions: Option<Resolutions>,
    ) -> Self {
        ReplayedSession {
            replay,
            from_start: Some(from_start),
            journal,
            cassette,
            snapshots,
            recorded_journal,
            resolutions,
        }
    }

    /// The session's handle: state, phase, telemetry, and sends (which are captured,
    /// not compared: see [`outbound_frames`](ReplayedSession::outbound_frames)).
    pub fn handle(&self) -> &LiveHandle {
        self.replay.handle()
    }

    /// The session's state.
    pub fn state(&self) -> &State {
        self.replay.handle().state()
    }

    /// The session's events. The first call returns a stream holding every event since
    /// the session started; later calls subscribe from now on.
    pub fn events(&mut self) -> EventStream {
        self.from_start
            .take()
            .unwrap_or_else(|| self.replay.handle().events())
    }

    /// Waits until every recorded frame has been handed to the session and consumed.
    pub async fn drained(&self) {
        self.replay.drained().await;
    }

    /// Where the replay parted from the recording, first first: a runtime frame that
    /// differs (with the JSON paths), one the recording has and the replay did not
    /// produce, or one the replay produced and the recording does not have.
    pub fn divergences(&self) -> Vec<Divergence> {
        self.replay.divergences()
    }

    /// Every frame the replayed session sent: the runtime's (setup, tool responses,
    /// instruction updates; each compared with the recording) and the application's.
    pub fn outbound_frames(&self) -> Vec<CapturedFrame> {
        self.replay.outbound_frames()
    }

    /// Every state mutation of the replay so far, in journal order.
    pub fn journal(&self) -> Vec<StateMutation> {
        self.journal.entries()
    }

    /// The journal the recording was made with, when the replay found it (see
    /// [`LiveBuilder::replay`](crate::LiveBuilder::replay)).
    pub fn recorded_journal(&self) -> Option<&[StateMutation]> {
        self.recorded_journal.as_deref()
    }

    /// The last value extractor `name` wrote (its state key), as `T`: for a typed
    /// extractor, `extracted::<T>(&extractor_name::<T>())`.
    ///
    /// ```no_run
    /// # async fn example(replay: reel_fluent::ReplayedSession) {
    /// use reel_fluent::extractor_name;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct CallerMood {
    ///     mood: String,
    /// }
    ///
    /// replay.drained().await;
    /// let mood: Option<CallerMood> = replay.extracted(&extractor_name::<CallerMood>());
    /// # }
    /// ```
    pub fn extracted<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.replay.handle().extracted(name)
    }

    /// The cassette answering the replay's out-of-band model calls, if the recording has
    /// one (opened in replay mode).
    pub fn cassette(&self) -> Option<&Cassette> {
        self.cassette.as_ref().map(ReplayCassette::cassette)
    }

    /// Where the replay's out-of-band model calls parted from the cassette: calls it has
    /// no answer for (each failed at once), calls asked more often than recorded, then the
    /// recorded calls not made — complete once the session has ended
    /// ([`finish`](ReplayedSession::finish), or [`disconnect`](ReplayedSession::disconnect)).
    /// Empty without a cassette.
    pub async fn llm_drift(&self) -> Vec<LlmDrift> {
        match &self.cassette {
            Some(cassette) => cassette.drift().await,
            None => Vec::new(),
        }
    }

    /// The snapshot the replay saved last, when the chain has persistence: a replay saves
    /// to an in-memory backend under the chain's session id (never to the chain's own).
    pub fn saved_snapshot(&self) -> Option<SessionSnapshot> {
        self.snapshots
            .as_ref()
            .and_then(|(memory, id)| memory.get(id))
    }

    /// Ends the replay (if the recording did not end the session already) and waits for
    /// the session to end.
    pub async fn disconnect(&self) -> SessionEnd {
        self.replay.disconnect().await
    }

    /// Plays the rest of the recording, ends the session, and returns everything it
    /// produced. The events are complete if [`events`](ReplayedSession::events) was not
    /// called before.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// use reel_recorder::journal::read_journal;
    ///
    /// let outcome = Live::builder().replay("session.wire.jsonl").await?.finish().await;
    /// assert!(outcome.divergences.is_empty());
    /// // `session.journal.jsonl`, beside the wire log, was read: compared entry by entry.
    /// assert!(outcome.is_clean(), "{}", outcome.verdict());
    /// assert!(outcome.journal_diff(&read_journal("session.journal.jsonl")?).is_clean());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn finish(mut self) -> ReplayOutcome {
        let mut events = self.events();
        let drive = async {
            self.replay.drained().await;
            self.replay.disconnect().await
        };
        let collect = async {
            let mut all = Vec::new();
            while let Some(event) = events.recv().await {
                all.push(event);
            }
            all
        };
        let (end, events) = tokio::join!(drive, collect);
        ReplayOutcome {
            events,
            state: self.state().snapshot(),
            journal: self.journal.entries(),
            divergences: self.replay.divergences(),
            llm_drift: self.llm_drift().await,
            snapshot: self.saved_snapshot(),
            outbound_frames: self.replay.outbound_frames(),
            end,
            recorded_journal: self.recorded_journal.take(),
            resolver_drift: self
                .resolutions
                .as_ref()
                .map(Resolutions::drift)
                .unwrap_or_default(),
        }
    }
}

/// Everything a finished replay produced.
#[derive(Debug, Clone)]
pub struct ReplayOutcome {
    /// Every event, from every lane, in publication order.
    pub events: Vec<EventEnvelope>,
    /// The state the replay ended with.
    pub state: StateSnapshot,
    /// Every state mutation, in journal order.
    pub journal: Vec<StateMutation>,
    /// Where the replay's frames parted from the recording; empty when they did not.
    pub divergences: Vec<Divergence>,
    /// Where the replay's out-of-band model calls parted from the cassette; empty when
    /// they did not (or there was no cassette).
    pub llm_drift: Vec<LlmDrift>,
    /// The snapshot the replay saved last (with persistence in the chain).
    pub snapshot: Option<SessionSnapshot>,
    /// Every frame the replayed session sent.
    pub outbound_frames: Vec<CapturedFrame>,
    /// How the session ended.
    pub end: SessionEnd,
    /// The journal the recording was made with, when the replay found one (see
    /// [`LiveBuilder::replay`](crate::LiveBuilder::replay)) or it was given
    /// ([`with_recorded_journal`](ReplayOutcome::with_recorded_journal)): what
    /// [`is_clean`](ReplayOutcome::is_clean) compares [`journal`](ReplayOutcome::journal)
    /// with, entry by entry.
    pub recorded_journal: Option<Vec<StateMutation>>,
    /// Where the replay's resolutions parted from the recorded ones (`X.resolved.jsonl`):
    /// a resolver that read other inputs, resolved a call not recorded, or did not make a
    /// recorded one; empty when they did not (or the chain has no resolutions log).
    pub resolver_drift: Vec<ResolverDrift>,
}

impl ReplayOutcome {
    /// The events of one lane, in that lane's order (the order replay reproduces).
    ///
    /// ```
    /// use reel_actors::{EventEnvelope, Lane, LiveEvent};
    /// use reel_fluent::ReplayOutcome;
    /// # fn outcome(events: Vec<EventEnvelope>) -> ReplayOutcome {
    /// #     ReplayOutcome {
    /// #         events, state: reel_actors::state::State::new().snapshot(), journal: vec![],
    /// #         divergences: vec![], llm_drift: vec![], snapshot: None, outbound_frames: vec![],
    /// #         end: reel_actors::SessionEnd { reason: "done".into(), failed: false },
    /// #         recorded_journal: None, resolver_drift: vec![],
    /// #     }
    /// # }
    /// let ended = LiveEvent::SessionEnded { reason: "done".into() };
    /// let outcome = outcome(vec![EventEnvelope { lane: Lane::Supervisor, seq: 1, event: ended.clone() }]);
    /// assert_eq!(outcome.lane(Lane::Supervisor), [ended]);
    /// assert!(outcome.lane(Lane::Fast).is_empty());
    /// ```
    pub fn lane(&self, lane: Lane) -> Vec<LiveEvent> {
        self.events
            .iter()
            .filter(|envelope| envelope.lane == lane)
            .map(|envelope| envelope.event.clone())
            .collect()
    }

    /// CLEAN: the runtime's frames all matched the recording, the out-of-band model calls
    /// all matched the cassette, and — with a [recorded journal](ReplayOutcome::recorded_journal)
    /// — the replay wrote that journal again entry by entry and ended with the same final
    /// values. The same definition as `reel replay` and `reel demo`
    /// ([`reel_replayer::verdict`]).
    pub fn is_clean(&self) -> bool {
        self.verdict().is_clean()
    }

    /// CLEAN or DRIFT, and every way the replay drifted: what
    /// [`is_clean`](ReplayOutcome::is_clean) decides on; its `Display` says why in one line.
    ///
    /// ```
    /// use reel_fluent::ReplayOutcome;
    /// use reel_recorder::journal::StateMutation;
    /// # fn outcome(recorded_journal: Option<Vec<StateMutation>>) -> ReplayOutcome {
    /// #     ReplayOutcome {
    /// #         events: vec![], state: reel_actors::state::State::new().snapshot(), journal: vec![],
    /// #         divergences: vec![], llm_drift: vec![], snapshot: None, outbound_frames: vec![],
    /// #         end: reel_actors::SessionEnd { reason: "done".into(), failed: false },
    /// #         recorded_journal, resolver_drift: vec![],
    /// #     }
    /// # }
    /// let written = StateMutation {
    ///     sequence: 1, key: "app:city".into(), old: serde_json::Value::Null,
    ///     new: "London".into(), origin: "set".into(), timestamp_ms: 1_000, delta: false,
    /// };
    /// // The recording wrote a key the replay did not.
    /// let outcome = outcome(Some(vec![written]));
    /// assert!(!outcome.is_clean());
    /// assert_eq!(
    ///     outcome.verdict().to_string(),
    ///     "DRIFT — the replay parted from the recording: the journal from entry 1 on, 1 key's final value."
    /// );
    /// ```
    pub fn verdict(&self) -> Verdict {
        let mut verdict = Verdict::new(&self.divergences);
        if let Some(recorded) = &self.recorded_journal {
            verdict = verdict
                .journal(&compare_journals(recorded, &self.journal))
                .final_state(&self.journal_diff(recorded));
        }
        let drifted: Vec<String> = self
            .resolver_drift
            .iter()
            .map(|drift| drift.resolver().to_owned())
            .collect();
        verdict
            .model_calls(self.llm_drift.len())
            .resolvers(&drifted)
    }

    /// The recorded journal against the replay's, entry by entry; `None` without a
    /// [recorded journal](ReplayOutcome::recorded_journal).
    pub fn journal_match(&self) -> Option<JournalMatch> {
        self.recorded_journal
            .as_deref()
            .map(|recorded| compare_journals(recorded, &self.journal))
    }

    /// The same outcome judged against `recorded`, the journal the recording was made with
    /// (for a recording the replay could not find it beside: one in memory, say).
    pub fn with_recorded_journal(mut self, recorded: Vec<StateMutation>) -> Self {
        self.recorded_journal = Some(recorded);
        self
    }

    /// The last value extractor `name` wrote, as `T`, in the state the replay ended with.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::{Live, extractor_name};
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct CallerMood {
    ///     mood: String,
    /// }
    ///
    /// let outcome = Live::builder().replay("call.wire.jsonl").await?.finish().await;
    /// let mood: Option<CallerMood> = outcome.extracted(&extractor_name::<CallerMood>());
    /// # Ok(())
    /// # }
    /// ```
    pub fn extracted<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.state.get(name)
    }

    /// The recorded journal's final value of each key against the state the replay ended
    /// with (clean when every key agrees).
    pub fn journal_diff(&self, recorded: &[StateMutation]) -> JournalDiff {
        JournalFinal::from_mutations(recorded.iter().cloned()).diff(self.state.iter())
    }
}
