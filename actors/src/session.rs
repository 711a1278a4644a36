//! [`LiveSessionBuilder`]: configure a session, spawn its tree, get a [`LiveHandle`].
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_actors::session::LiveSessionBuilder;
//! use reel_protocol::{ApiEndpoint, SessionConfig};
//!
//! let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::from_env()?);
//! let mut events = builder.subscribe(); // before anything flows: nothing is missed
//! let handle = builder.connect().await?;
//! handle.send_text("Hello!")?;
//! while let Some(event) = events.recv().await {
//!     println!("{:?}", event.event);
//! }
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_protocol::{ApiEndpoint, DecodeLimits, SessionConfig, SessionPhase};
use reel_recorder::journal::JournalSink;
use reel_recorder::wire_log::WireRecorder;
use tokio::sync::watch;

use crate::callbacks::{ControlCallbacks, FastCallbacks, Interceptors, TelemetryCallbacks};
use crate::clock::{EventClock, SharedClock, TokioClock};
use crate::control_lane::{ControlData, ControlLaneArgs};
use crate::events::{EventHub, EventStream};
use crate::extract::{DEFAULT_EXTRACTION_TIMEOUT, ExtractorSet, TurnExtractor};
use crate::fast_lane::FastLaneArgs;
use crate::handle::LiveHandle;
use crate::lane_feed::LaneProgress;
use crate::llm::{LlmInterceptor, PassThrough};
use crate::peers::Peers;
use crate::persistence::{
    PersistenceError, SessionPersistence, SessionSnapshot, SnapshotSaver, check_session_id,
};
use crate::phases::{PhaseError, PhaseMachine};
use crate::playback::PlaybackQueue;
use crate::reactive::{ReactiveConfig, ReactiveError};
use crate::recorder::{RecordQueue, RecorderArgs};
use crate::router::RouterArgs;
use crate::state::{State, StateError};
use crate::supervisor::{RestartPolicy, SessionSupervisor, SupervisorArgs};
use crate::telemetry::{TelemetryArgs, TelemetryShared};
use crate::tools::ToolDispatcher;
use crate::transport::{
    Connector, LiveTransportFactory, TransportArgs, TransportFactory, TransportOptions,
    WebSocketConnector, WireTap,
};
use crate::writer::{Origin, SessionWriter};

/// How long a Live audio session lasts, for `session:remaining_budget_ms`.
pub const DEFAULT_SESSION_BUDGET: Duration = Duration::from_secs(15 * 60);

/// A session that could not be started. The texts say what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStartError {
    /// The phases do not form a valid machine.
    #[error("invalid phases: {0}")]
    Phases(#[from] PhaseError),
    /// The watchers, computed values or temporal patterns were refused.
    #[error("invalid reactive rules: {0}")]
    Reactive(#[from] ReactiveError),
    /// A tool is declared both in the config and in the dispatcher.
    #[error(
        "tool `{name}` is declared twice: once in the session config and once in the dispatcher; keep one"
    )]
    DuplicateTool {
        /// The tool.
        name: String,
    },
    /// The actor tree could not be spawned.
    #[error("could not start the session's actors: {message}")]
    Spawn {
        /// Why.
        message: String,
    },
    /// The session ended before it was live.
    #[error("the session ended before it was live: {reason}")]
    NotLive {
        /// Why.
        reason: String,
    },
    /// Two extractors have the same name (they would write the same state key).
    #[error("two extractors are named `{name}`; each needs its own name (it is its state key)")]
    DuplicateExtractor {
        /// The name.
        name: String,
    },
    /// An extractor has an empty name.
    #[error(
        "extractor number {position} (from 1) has an empty name; name it (its name is its state key)"
    )]
    EmptyExtractorName {
        /// Its place among the extractors, from 1.
        position: usize,
    },
    /// Persistence was configured without a session id.
    #[error(
        "persistence is configured but the session has no id: call .session_id(..) so the \
         session knows which snapshot to load and save"
    )]
    MissingSessionId,
    /// The session id is invalid, or its snapshot could not be loaded.
    #[error("{0}")]
    Persistence(#[from] PersistenceError),
    /// The saved snapshot's phase is not one of the session's phases.
    #[error(
        "the snapshot of session {session_id:?} is in phase `{phase}`, which the session's \
         phases do not have; add the phase, or delete the snapshot to start afresh"
    )]
    UnknownSavedPhase {
        /// The session.
        session_id: String,
        /// The saved phase.
        phase: String,
    },
    /// The saved state could not be restored.
    #[error("could not restore the saved state: {0}")]
    RestoreState(StateError),
}

/// What [`LiveSessionBuilder::on_snapshot_restored`] runs: given the snapshot the session
/// restores, before any of its actors start; an error stops the start.
pub type RestoredHook =
    Box<dyn FnOnce(SessionSnapshot) -> BoxFuture<'static, Result<(), PersistenceError>> + Send>;

/// Everything a session is made of, before it starts.
pub struct LiveSessionBuilder {
    config: SessionConfig,
    endpoint: ApiEndpoint,
    connector: Option<Arc<dyn Connector>>,
    dispatcher: Option<ToolDispatcher>,
    fast: FastCallbacks,
    control: ControlCallbacks,
    interceptors: Interceptors,
    telemetry: TelemetryCallbacks,
    phases: Option<PhaseMachine>,
    reactive: ReactiveConfig,
    state: State,
    clock: Option<SharedClock>,
    recorder: Option<Arc<dyn WireRecorder>>,
    transport_options: TransportOptions,
    restart_policy: RestartPolicy,
    playback: Option<usize>,
    budget: Duration,
    hub: Arc<EventHub>,
    transport: Box<dyn TransportFactory>,
    extractors: Vec<Arc<dyn TurnExtractor>>,
    extraction_timeout: Duration,
    interceptor: Option<Arc<dyn LlmInterceptor>>,
    persistence: Option<Arc<dyn SessionPersistence>>,
    session_id: Option<String>,
    on_restored: Option<RestoredHook>,
}

impl LiveSessionBuilder {
    /// A session with `config` at `endpoint`, over a WebSocket.
    pub fn new(config: SessionConfig, endpoint: ApiEndpoint) -> Self {
        LiveSessionBuilder {
            config,
            endpoint,
            connector: None,
            dispatcher: None,
            fast: FastCallbacks::default(),
            control: ControlCallbacks::default(),
            interceptors: Interceptors::default(),
            telemetry: TelemetryCallbacks::default(),
            phases: None,
            reactive: ReactiveConfig::default(),
            state: State::new(),
            clock: None,
            recorder: None,
            transport_options: TransportOptions::default(),
            restart_policy: RestartPolicy::default(),
            playback: None,
            budget: DEFAULT_SESSION_BUDGET,
            hub: Arc::new(EventHub::new()),
            transport: Box::new(LiveTransportFactory),
            extractors: Vec::new(),
            extraction_timeout: DEFAULT_EXTRACTION_TIMEOUT,
            interceptor: None,
            persistence: None,
            session_id: None,
            on_restored: None,
        }
    }

    /// Tools the runtime dispatches (their declarations join the setup, sorted by name).
    pub fn dispatcher(mut self, dispatcher: ToolDispatcher) -> Self {
        self.dispatcher = Some(dispatcher);
        self
    }

    /// Fast-lane callbacks.
    pub fn fast_callbacks(mut self, callbacks: FastCallbacks) -> Self {
        self.fast = callbacks;
        self
    }

    /// Control-lane callbacks.
    pub fn control_callbacks(mut self, callbacks: ControlCallbacks) -> Self {
        self.control = callbacks;
        self
    }

    /// Hooks on what the runtime sends: tool responses, context at the turn boundary, the
    /// system instruction (see [`Interceptors`] for the rules).
    pub fn interceptors(mut self, interceptors: Interceptors) -> Self {
        self.interceptors = interceptors;
        self
    }

    /// Telemetry callbacks.
    pub fn telemetry_callbacks(mut self, callbacks: TelemetryCallbacks) -> Self {
        self.telemetry = callbacks;
        self
    }

    /// Conversation phases; the initial phase's instruction becomes the system instruction.
    pub fn phases(mut self, phases: PhaseMachine) -> Self {
        self.phases = Some(phases);
        self
    }

    /// Watchers, computed values and temporal patterns, run by the control lane on event
    /// time (see [`crate::reactive`]). Replaces any given before. Checked when the session
    /// starts: a cycle among computed values fails [`spawn`](Self::spawn) with
    /// [`SessionStartError::Reactive`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use reel_actors::LiveSessionBuilder;
    /// use reel_actors::reactive::ReactiveConfig;
    /// use reel_protocol::{ApiEndpoint, SessionConfig};
    ///
    /// let cyclic = ReactiveConfig::new()
    ///     .computed("a", &["derived:b"], |_| None)
    ///     .computed("b", &["derived:a"], |_| None);
    /// let refused = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
    ///     .reactive(cyclic)
    ///     .spawn()
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "invalid reactive rules: computed values depend on each other in a cycle: \
    ///      a -> b -> a (each depends on the next)"
    /// );
    /// # }
    /// ```
    pub fn reactive(mut self, reactive: ReactiveConfig) -> Self {
        self.reactive = reactive;
        self
    }

    /// Uses `state` (for instance one with a journal sink, or one the application already
    /// holds) instead of a fresh one.
    pub fn with_state(mut self, state: State) -> Self {
        self.state = state;
        self
    }

    /// Sends every state mutation to `sink` as well as the in-memory journal.
    pub fn journal_sink(self, sink: Arc<dyn JournalSink>) -> Self {
        self.state.set_journal_sink(sink);
        self
    }

    /// Records every frame, both directions, into `recorder`.
    pub fn record_wire(mut self, recorder: Arc<dyn WireRecorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The session clock (default: the wall clock at start, advanced by tokio time).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// What opens connections (default: a WebSocket with the web PKI roots).
    pub fn connector(mut self, connector: Arc<dyn Connector>) -> Self {
        self.connector = Some(connector);
        self
    }

    /// What stands behind the transport (default: the live transport over the connector).
    /// A replay puts a tape reader here.
    pub fn transport_factory(mut self, factory: Box<dyn TransportFactory>) -> Self {
        self.transport = factory;
        self
    }

    /// Timeouts, limits and reconnects of the transport.
    pub fn transport_options(mut self, options: TransportOptions) -> Self {
        self.transport_options = options;
        self
    }

    /// Restart limits of the supervisor.
    pub fn restart_policy(mut self, policy: RestartPolicy) -> Self {
        self.restart_policy = policy;
        self
    }

    /// Keeps model audio in a playback queue of at most `chunks` chunks, cleared on
    /// interruption ([`LiveHandle::playback`]).
    pub fn playback_buffer(mut self, chunks: usize) -> Self {
        self.playback = Some(chunks);
        self
    }

    /// How long the session is expected to last (for `session:remaining_budget_ms`).
    pub fn session_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Adds a turn extractor after the others (see [`crate::extract`]). Names must be
    /// unique and not empty: [`spawn`](Self::spawn) refuses the session otherwise.
    pub fn extractor(mut self, extractor: Arc<dyn TurnExtractor>) -> Self {
        self.extractors.push(extractor);
        self
    }

    /// How long the control lane waits for one extractor (default
    /// [`DEFAULT_EXTRACTION_TIMEOUT`]); past it the extraction fails with
    /// [`ExtractionError::TimedOut`](crate::extract::ExtractionError::TimedOut).
    pub fn extraction_timeout(mut self, timeout: Duration) -> Self {
        self.extraction_timeout = timeout;
        self
    }

    /// Passes every model the session hands out — the extractors' (wrapped once, at
    /// start), the tools' ([`ToolContext::llm`](crate::tools::ToolContext::llm)), the
    /// application's ([`LiveHandle::llm`]) — through `interceptor`, which may record or
    /// replay their calls. Without one, models are used as they are.
    pub fn llm_interceptor(mut self, interceptor: Arc<dyn LlmInterceptor>) -> Self {
        self.interceptor = Some(interceptor);
        self
    }

    /// Saves the session's snapshots to `persistence` and restores the session from its
    /// snapshot there, if any (see [`crate::persistence`]). Needs a
    /// [`session_id`](Self::session_id): [`spawn`](Self::spawn) fails with
    /// [`SessionStartError::MissingSessionId`] without one.
    pub fn persistence(mut self, persistence: Arc<dyn SessionPersistence>) -> Self {
        self.persistence = Some(persistence);
        self
    }

    /// The id the session's snapshots are saved under (see
    /// [`check_session_id`] for what is accepted).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Runs `hook` with the snapshot the session restores from its
    /// [`persistence`](Self::persistence) backend, once it is loaded and checked and before
    /// any actor starts (so before the setup is sent); not at all when there is none. The
    /// hook gets exactly what the session resumes from — no second load that could see a
    /// newer snapshot. A recording keeps it beside the wire log this way, so that a replay
    /// can resume from it too. If the hook fails, [`spawn`](Self::spawn) fails with
    /// [`SessionStartError::Persistence`] and nothing starts.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::sync::{Arc, Mutex};
    /// use reel_actors::LiveSessionBuilder;
    /// use reel_actors::persistence::{MemoryPersistence, SessionPersistence, SessionSnapshot};
    /// use reel_protocol::{ApiEndpoint, SessionConfig};
    ///
    /// let backend = Arc::new(MemoryPersistence::new());
    /// let saved = SessionSnapshot {
    ///     state: Default::default(),
    ///     phase: String::new(),
    ///     turn_count: 3,
    ///     transcript_summary: String::new(),
    ///     resume_handle: Some("h-7".into()),
    ///     saved_at: "2024-06-10T06:13:20Z".into(),
    /// };
    /// backend.save("caller-42", &saved).await.unwrap();
    /// let seen = Arc::new(Mutex::new(None));
    /// let keep = Arc::clone(&seen);
    /// let handle = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
    ///     .persistence(backend)
    ///     .session_id("caller-42")
    ///     .on_snapshot_restored(Box::new(move |snapshot| {
    ///         *keep.lock().unwrap() = Some(snapshot);
    ///         Box::pin(async { Ok(()) })
    ///     }))
    ///     .spawn()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(seen.lock().unwrap().as_ref(), Some(&saved));
    /// handle.disconnect().await;
    /// # }
    /// ```
    pub fn on_snapshot_restored(mut self, hook: RestoredHook) -> Self {
        self.on_restored = Some(hook);
        self
    }

    /// A stream of every event of the session, from its very first. Subscribe here, before
    /// `spawn`/`connect`, to be sure to miss nothing.
    pub fn subscribe(&self) -> EventStream {
        self.hub.subscribe()
    }

    /// The setup this session will send when it starts afresh: the config, plus the
    /// dispatcher's declarations and the initial phase's instruction. Checks the phases and
    /// tool names. (A session restored from a snapshot starts in the saved phase, with its
    /// instruction, and presents the saved resumption handle.)
    pub fn resolved_config(&self) -> Result<SessionConfig, SessionStartError> {
        self.config_starting_in(None)
    }

    /// [`resolved_config`](Self::resolved_config) with the instruction of `phase` (the
    /// initial one if `None`).
    fn config_starting_in(&self, phase: Option<&str>) -> Result<SessionConfig, SessionStartError> {
        let mut config = self.config.clone();
        let mut declared: Vec<String> = config
            .function_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let Some(dispatcher) = &self.dispatcher {
            for declaration in dispatcher.declarations() {
                let name = declaration.name.clone().unwrap_or_default();
                if declared.contains(&name) {
                    return Err(SessionStartError::DuplicateTool { name });
                }
                declared.push(name);
                config = config.function(declaration);
            }
        }
        if let Some(phases) = &self.phases {
            phases.check_tools(&declared)?;
            if let Some(instruction) = phases
                .phase(phase.unwrap_or(phases.initial()))
                .and_then(|p| p.instruction_for(&self.state))
            {
                config = config.system_instruction(instruction);
            }
        }
        Ok(config)
    }

    /// Starts the session's actors and returns at once; the connection opens in the
    /// background.
    pub async fn spawn(mut self) -> Result<LiveHandle, SessionStartError> {
        self.check_extractors()?;
        // Owned arguments: the builder is not `Sync`, so no borrow of it may be held
        // across an await.
        let restored = load_snapshot(self.persistence.clone(), self.session_id.clone()).await?;
        self.check_saved_phase(restored.as_ref())?;
        if let (Some(snapshot), Some(hook)) = (&restored, self.on_restored.take()) {
            hook(snapshot.clone()).await?;
        }
        let mut config = self.config_starting_in(
            restored
                .as_ref()
                .map(|snapshot| snapshot.phase.as_str())
                .filter(|phase| !phase.is_empty()),
        )?;
        let saved_handle = restored.as_ref().and_then(|s| s.resume_handle.clone());
        if let Some(handle) = &saved_handle {
            config = config.session_resume_from(handle.clone());
        }
        let reactive = Arc::new(self.reactive.build()?);
        let frame_clock: SharedClock = self
            .clock
            .clone()
            .unwrap_or_else(|| Arc::new(TokioClock::from_wall_clock()));
        let frame_clock_start = frame_clock.now_ms();
        let record_queue = self
            .recorder
            .clone()
            .map(|recorder| Arc::new(RecordQueue::new(recorder)));
        let tap = Arc::new(WireTap::new(
            frame_clock,
            record_queue
                .clone()
                .map(|queue| queue as Arc<dyn WireRecorder>),
        ));
        // Inside the tree, time is event time: see `EventClock`.
        let clock = Arc::new(EventClock::new(frame_clock_start));
        self.state.set_clock(Arc::clone(&clock) as SharedClock);
        // Restored before the control lane's data is made, so watchers take the restored
        // state as their starting point rather than as changes.
        if let Some(snapshot) = &restored {
            self.state
                .set_many(snapshot.state.clone())
                .await
                .map_err(SessionStartError::RestoreState)?;
        }
        let mut control_data = ControlData::new(self.budget, &self.state);
        if let Some(snapshot) = restored {
            control_data.resume_from(snapshot);
        }
        // What the instruction hooks compare with and build on.
        control_data.last_instruction = instruction_text(&config);
        control_data.setup_instruction = control_data.last_instruction.clone();
        control_data.base_instruction = instruction_text(&self.config);
        let interceptor: Arc<dyn LlmInterceptor> =
            self.interceptor.unwrap_or_else(|| Arc::new(PassThrough));
        let extractors = Arc::new(ExtractorSet::new(
            self.extractors,
            interceptor.as_ref(),
            self.extraction_timeout,
        ));
        let saver = match (self.persistence, self.session_id) {
            (Some(persistence), Some(id)) => Some(SnapshotSaver::start(persistence, id)),
            _ => None,
        };
        let (transcript_tx, transcript_rx) = watch::channel(Arc::from(Vec::new()));
        let peers = Arc::new(Peers::new(clock, Arc::clone(&self.hub)));
        let telemetry = Arc::new(TelemetryShared::default());
        let (phase_tx, phase_rx) = watch::channel(SessionPhase::Disconnected);
        let (resume_tx, resume_rx) = watch::channel(saved_handle);
        let (ended_tx, ended_rx) = watch::channel(None);
        let progress: [Arc<LaneProgress>; 3] = Default::default();
        let [fast_progress, control_progress, telemetry_progress] = progress.clone();
        let writer = SessionWriter::new(Arc::clone(&peers.transport), Origin::Runtime);
        let app_writer = SessionWriter::new(Arc::clone(&peers.transport), Origin::App);
        let playback = self.playback.map(PlaybackQueue::new);
        let connector = self
            .connector
            .clone()
            .unwrap_or_else(|| Arc::new(WebSocketConnector::new()));

        let fast_callbacks = Arc::new(self.fast);
        let fast_playback = playback.clone();
        let fast_peers = Arc::clone(&peers);
        let telemetry_callbacks = Arc::new(self.telemetry);
        let telemetry_shared = Arc::clone(&telemetry);
        let telemetry_peers = Arc::clone(&peers);
        let args = SupervisorArgs {
            transport: Some((
                self.transport,
                TransportArgs {
                    connector,
                    endpoint: self.endpoint,
                    config,
                    options: self.transport_options,
                    tap,
                    resume_handle: resume_rx.clone(),
                    telemetry: Arc::clone(&telemetry),
                    peers: Arc::clone(&peers),
                    lanes: progress.clone(),
                },
            )),
            router: Some(RouterArgs {
                peers: Arc::clone(&peers),
                progress,
                limits: DecodeLimits {
                    max_frame_bytes: self.transport_options.link.max_frame_bytes,
                },
                phase: phase_tx,
                resume_handle: resume_tx,
                telemetry: Arc::clone(&telemetry),
            }),
            telemetry_shared: Arc::clone(&telemetry),
            fast: Arc::new(move || FastLaneArgs {
                callbacks: Arc::clone(&fast_callbacks),
                playback: fast_playback.clone(),
                progress: Arc::clone(&fast_progress),
                peers: Arc::clone(&fast_peers),
            }),
            control: ControlLaneArgs {
                outcomes: Arc::default(),
                data: Arc::new(tokio::sync::Mutex::new(control_data)),
                callbacks: Arc::new(self.control),
                interceptors: Arc::new(self.interceptors),
                dispatcher: self.dispatcher.map(Arc::new),
                phases: self.phases.map(Arc::new),
                reactive,
                state: self.state.clone(),
                writer: writer.clone(),
                telemetry: Arc::clone(&telemetry),
                progress: control_progress,
                peers: Arc::clone(&peers),
                extractors,
                interceptor: Arc::clone(&interceptor),
                saver,
                transcript_view: Arc::new(transcript_tx),
            },
            telemetry: Arc::new(move || TelemetryArgs {
                shared: Arc::clone(&telemetry_shared),
                callbacks: Arc::clone(&telemetry_callbacks),
                progress: Arc::clone(&telemetry_progress),
                peers: Arc::clone(&telemetry_peers),
            }),
            state: self.state.clone(),
            recorder: record_queue.map(|queue| RecorderArgs {
                queue,
                telemetry: Arc::clone(&telemetry),
            }),
            policy: self.restart_policy,
            ended: ended_tx,
        };
        ractor::Actor::spawn(None, SessionSupervisor, Box::new(args))
            .await
            .map_err(|error| SessionStartError::Spawn {
                message: error.to_string(),
            })?;
        Ok(LiveHandle {
            writer: app_writer,
            hub: self.hub,
            state: self.state,
            phase: phase_rx,
            resume_handle: resume_rx,
            telemetry,
            ended: ended_rx,
            playback,
            interceptor,
            transcript: transcript_rx,
        })
    }

    /// Extractor names are their state keys: each must be unique and not empty.
    fn check_extractors(&self) -> Result<(), SessionStartError> {
        let mut seen = std::collections::BTreeSet::new();
        for (index, extractor) in self.extractors.iter().enumerate() {
            let name = extractor.name();
            if name.is_empty() {
                return Err(SessionStartError::EmptyExtractorName {
                    position: index + 1,
                });
            }
            if !seen.insert(name) {
                return Err(SessionStartError::DuplicateExtractor {
                    name: name.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Checks that the phase a snapshot was saved in is one of the session's phases.
    fn check_saved_phase(
        &self,
        snapshot: Option<&SessionSnapshot>,
    ) -> Result<(), SessionStartError> {
        if let (Some(phases), Some(snapshot)) = (&self.phases, snapshot)
            && !snapshot.phase.is_empty()
            && phases.phase(&snapshot.phase).is_none()
        {
            return Err(SessionStartError::UnknownSavedPhase {
                session_id: self.session_id.clone().unwrap_or_default(),
                phase: snapshot.phase.clone(),
            });
        }
        Ok(())
    }

    /// Starts the session and waits until it is live (setup complete), or ended.
    pub async fn connect(self) -> Result<LiveHandle, SessionStartError> {
        let handle = self.spawn().await?;
        if handle.wait_for_phase(SessionPhase::Active).await {
            return Ok(handle);
        }
        let reason = handle
            .ended()
            .map(|end| end.reason)
            .unwrap_or_else(|| "the session stopped".to_owned());
        Err(SessionStartError::NotLive { reason })
    }
}

/// The snapshot to restore, if the session persists and one was saved; checks the session
/// id.
async fn load_snapshot(
    persistence: Option<Arc<dyn SessionPersistence>>,
    session_id: Option<String>,
) -> Result<Option<SessionSnapshot>, SessionStartError> {
    let Some(persistence) = persistence else {
        return Ok(None);
    };
    let Some(id) = session_id else {
        return Err(SessionStartError::MissingSessionId);
    };
    check_session_id(&id)?;
    Ok(persistence.load(&id).await?)
}

/// The text of `config`'s system instruction, if it has one.
fn instruction_text(config: &SessionConfig) -> Option<String> {
    let content = config.setup().system_instruction.as_ref()?;
    let text: String = content
        .parts()
        .iter()
        .filter_map(|part| part.text.as_deref())
        .collect();
    Some(text)
}
