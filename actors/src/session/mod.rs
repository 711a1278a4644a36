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
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::journal::JournalSink;
use reel_recorder::wire_log::WireRecorder;

use crate::audio::{JitterConfig, VadConfig};
use crate::callbacks::{ControlCallbacks, FastCallbacks, Interceptors, TelemetryCallbacks};
use crate::clock::SharedClock;
use crate::events::{EventHub, EventStream};
use crate::extract::TurnExtractor;
use crate::handle::LiveHandle;
use crate::llm::LlmInterceptor;
use crate::persistence::{
    PersistenceError, RestoredSnapshot, SessionClaim, SessionPersistence, SessionSnapshot,
    check_session_id,
};
use crate::phases::PhaseMachine;
use crate::reactor::StateReactor;
use crate::state::State;
use crate::supervisor::RestartPolicy;
use crate::tools::ToolDispatcher;
use crate::transport::{Connector, LiveTransportFactory, TransportFactory, TransportOptions};

mod error;
mod options;
mod spawn;

pub use error::SessionStartError;
pub use options::SessionOptions;

/// How long an awaited callback may take by default; see
/// [`LiveSessionBuilder::callback_timeout`].
pub const DEFAULT_CALLBACK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the lanes may take to drain by default; see
/// [`LiveSessionBuilder::shutdown_timeout`]. Longer than the callback timeout, so one hung
/// callback times out (and is reported) before the lane is cut short.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a Live audio session lasts, for `session:remaining_budget_ms`.
pub const DEFAULT_SESSION_BUDGET: Duration = Duration::from_secs(15 * 60);

/// What [`LiveSessionBuilder::on_snapshot_restored`] runs: given the snapshot the session
/// restores and the session time it restores it at, before any of its actors start; an
/// error stops the start.
pub type RestoredHook =
    Box<dyn FnOnce(RestoredSnapshot) -> BoxFuture<'static, Result<(), PersistenceError>> + Send>;

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
    reactor: Option<Box<dyn StateReactor>>,
    gate: Option<Box<dyn crate::govern::ToolGate>>,
    state: State,
    clock: Option<SharedClock>,
    recorder: Option<Arc<dyn WireRecorder>>,
    options: SessionOptions,
    fault_hook: Option<Arc<dyn crate::fault::FaultHook>>,
    disk: crate::disk::Disk,
    hub: Arc<EventHub>,
    transport: Box<dyn TransportFactory>,
    extractors: Vec<Arc<dyn TurnExtractor>>,
    interceptor: Option<Arc<dyn LlmInterceptor>>,
    persistence: Option<Arc<dyn SessionPersistence>>,
    session_id: Option<String>,
    on_restored: Option<RestoredHook>,
    restored_at: Option<u64>,
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
            reactor: None,
            gate: None,
            state: State::new(),
            clock: None,
            recorder: None,
            options: SessionOptions::default(),
            fault_hook: None,
            disk: crate::disk::Disk::default(),
            hub: Arc::new(EventHub::new()),
            transport: Box::new(LiveTransportFactory),
            extractors: Vec::new(),
            interceptor: None,
            persistence: None,
            session_id: None,
            on_restored: None,
            restored_at: None,
        }
    }

    /// Every tree-level setting at once (see [`SessionOptions`]), in place of those given
    /// before; the setters below change one of them each.
    pub fn options(mut self, options: SessionOptions) -> Self {
        self.options = options;
        self
    }

    /// The tree-level settings the session will start with.
    pub fn session_options(&self) -> &SessionOptions {
        &self.options
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

    /// The session's [`StateReactor`]: rules the control lane runs at each state commit
    /// point and after the events it handles, on event time (see [`crate::reactor`]).
    /// Replaces any given before. Watchers, computed values and temporal patterns are the
    /// `reel-reactive` crate's: a checked `ReactiveConfig` (`Reactive`) is a reactor.
    ///
    /// ```
    /// use reel_actors::LiveSessionBuilder;
    /// use reel_actors::reactor::StateReactor;
    /// use reel_protocol::{ApiEndpoint, SessionConfig};
    ///
    /// /// A reactor that reacts to nothing: every method has a default.
    /// #[derive(Debug)]
    /// struct Quiet;
    /// impl StateReactor for Quiet {}
    ///
    /// let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
    ///     .reactor(Box::new(Quiet));
    /// # let _ = builder;
    /// ```
    pub fn reactor(mut self, reactor: Box<dyn StateReactor>) -> Self {
        self.reactor = Some(reactor);
        self
    }

    /// Governs the session's tool calls and turn boundaries with `gate` (see
    /// [`crate::govern`]): asked before each call the dispatcher would run, told the state,
    /// the responses and the cancellations in the session's order. `reel-fluent`'s
    /// `govern`/`observe` give a flow's monitor here.
    pub fn gate(mut self, gate: Box<dyn crate::govern::ToolGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Uses `state` (for instance one with a journal sink, or one the application already
    /// holds) instead of a fresh one.
    pub fn with_state(mut self, state: State) -> Self {
        self.state = state;
        self
    }

    /// Sends every state mutation to `sink` as well as the in-memory journal. A sink that
    /// does I/O ([`JournalSink::does_io`], e.g. a `FileJournalSink`) is put behind a
    /// [`JournalWriter`](crate::state::JournalWriter), so its writes run on the process's
    /// disk writer threads, never on the state's write path or a tokio worker.
    pub fn journal_sink(self, sink: Arc<dyn JournalSink>) -> Self {
        let sink = if sink.does_io() {
            Arc::new(crate::state::JournalWriter::new(sink)) as Arc<dyn JournalSink>
        } else {
            sink
        };
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
        self.options.transport = options;
        self
    }

    /// How phases steer the model (see [`crate::conversation::SteeringMode`]).
    pub fn steering_mode(mut self, mode: crate::conversation::SteeringMode) -> Self {
        self.options.steering = mode;
        self
    }

    /// When a turn boundary's context is sent (see
    /// [`crate::conversation::ContextDelivery`]).
    pub fn context_delivery(mut self, delivery: crate::conversation::ContextDelivery) -> Self {
        self.options.context_delivery = delivery;
        self
    }

    /// Restart limits of the supervisor.
    pub fn restart_policy(mut self, policy: RestartPolicy) -> Self {
        self.options.restart_policy = policy;
        self
    }

    /// Keeps model audio in a playback queue of at most `chunks` chunks, cleared on
    /// interruption ([`LiveHandle::playback`]).
    pub fn playback_buffer(mut self, chunks: usize) -> Self {
        self.options.playback_buffer = Some(chunks);
        self
    }

    /// Keeps model audio in an adaptive jitter buffer the application's player pulls
    /// frames from ([`LiveHandle::jitter_buffer`]): it pre-buffers to a target that follows
    /// the arrival jitter, is cleared on interruption, and reports its depth, target,
    /// underruns and drops in [`LiveHandle::telemetry`]. Works beside
    /// [`LiveSessionBuilder::playback_buffer`]. A config that cannot work stops the start
    /// with [`SessionStartError::Jitter`].
    pub fn jitter_buffer(mut self, config: JitterConfig) -> Self {
        self.options.jitter_buffer = Some(config);
        self
    }

    /// Client-side voice activity detection: turns the server's off in the setup
    /// (`automaticActivityDetection.disabled`), and runs the audio the application sends
    /// ([`LiveHandle::send_audio`]) through a [`VoiceActivityDetector`], which sends
    /// `activityStart` before each utterance's audio and `activityEnd` after it (see
    /// [`ActivityGate`]). A config that cannot work stops the start with
    /// [`SessionStartError::ClientVad`].
    ///
    /// [`VoiceActivityDetector`]: crate::audio::VoiceActivityDetector
    /// [`ActivityGate`]: crate::audio::ActivityGate
    pub fn client_vad(mut self, config: VadConfig) -> Self {
        self.options.client_vad = Some(config);
        self
    }

    /// How long an awaited callback or hook (`on_tool_call`, `before_tool_response`,
    /// `on_interrupted`, blocking callbacks, phase hooks) may take before the control lane
    /// goes on without it and reports a `SessionError::CallbackTimeout` (default 10 s).
    pub fn callback_timeout(mut self, timeout: Duration) -> Self {
        self.options.callback_timeout = timeout;
        self
    }

    /// How long the lanes may take to finish their backlog once the connection is over
    /// (default 15 s). Past it the session ends anyway and the lanes still busy are stopped,
    /// so [`LiveHandle::disconnect`](crate::LiveHandle::disconnect) returns within the
    /// transport's close timeout plus this, whatever a callback does.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.options.shutdown_timeout = timeout;
        self
    }

    /// Installs a fault injector for simulators and tests: the router, the lanes,
    /// telemetry, the state store and the recorder call it before each item they handle
    /// (see [`crate::fault`]).
    pub fn fault_hook(mut self, hook: Arc<dyn crate::fault::FaultHook>) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    /// Runs the session's disk work (the Recorder's writes, the journal's flushes) on a
    /// simulator's disk instead of tokio's blocking pool: on the session's runtime, after
    /// the latency `disk` gives each piece (see [`crate::disk`]). For simulators and tests.
    pub fn simulated_disk(mut self, disk: Arc<dyn crate::disk::SimulatedDisk>) -> Self {
        self.disk = crate::disk::Disk::Simulated(disk);
        self
    }

    /// How long the session is expected to last (for `session:remaining_budget_ms`).
    pub fn session_budget(mut self, budget: Duration) -> Self {
        self.options.session_budget = budget;
        self
    }

    /// Adds a turn extractor after the others (see [`crate::extract`]). Names must be
    /// unique and not empty: [`spawn`](Self::spawn) refuses the session otherwise.
    pub fn extractor(mut self, extractor: Arc<dyn TurnExtractor>) -> Self {
        self.extractors.push(extractor);
        self
    }

    /// How long the control lane waits for one extractor (default
    /// [`DEFAULT_EXTRACTION_TIMEOUT`](crate::extract::DEFAULT_EXTRACTION_TIMEOUT)); past
    /// it the extraction fails with
    /// [`ExtractionError::TimedOut`](crate::extract::ExtractionError::TimedOut).
    pub fn extraction_timeout(mut self, timeout: Duration) -> Self {
        self.options.extraction_timeout = timeout;
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
    /// newer snapshot — and the session time the restored state is stamped with. A
    /// recording keeps both beside the wire log this way, so that a replay can resume from
    /// the snapshot too, at the same time ([`restored_at`](Self::restored_at)). If the hook fails, [`spawn`](Self::spawn) fails with
    /// [`SessionStartError::Persistence`] and nothing starts.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::sync::{Arc, Mutex};
    /// use reel_actors::LiveSessionBuilder;
    /// use reel_actors::clock::ManualClock;
    /// use reel_actors::persistence::{RestoredSnapshot, SessionPersistence, SessionSnapshot};
    /// use reel_persistence::MemoryPersistence;
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
    ///     .clock(Arc::new(ManualClock::new(1_718_000_000_000)))
    ///     .on_snapshot_restored(Box::new(move |restored| {
    ///         *keep.lock().unwrap() = Some(restored);
    ///         Box::pin(async { Ok(()) })
    ///     }))
    ///     .spawn()
    ///     .await
    ///     .unwrap();
    /// let restored = RestoredSnapshot { snapshot: saved, restored_at_ms: 1_718_000_000_000 };
    /// assert_eq!(seen.lock().unwrap().as_ref(), Some(&restored));
    /// handle.disconnect().await;
    /// # }
    /// ```
    pub fn on_snapshot_restored(mut self, hook: RestoredHook) -> Self {
        self.on_restored = Some(hook);
        self
    }

    /// Stamps the state restored from the saved snapshot with session time `ms` (epoch
    /// milliseconds) instead of the session clock's reading at the start. A replay of a
    /// resumed session passes the time the recording restored it at
    /// ([`RestoredSnapshot::restored_at_ms`], kept beside the wire log): the journal entries
    /// of the restore then come out equal, however long the recorded connect took. Without
    /// a snapshot to restore it does nothing.
    pub fn restored_at(mut self, ms: u64) -> Self {
        self.restored_at = Some(ms);
        self
    }

    /// A stream of every event of the session, from its very first. Subscribe here, before
    /// `spawn`/`connect`, to be sure to miss nothing.
    pub fn subscribe(&self) -> EventStream {
        self.hub.subscribe()
    }

    /// Publishes the session's events on `hub` instead of a hub of its own: streams taken
    /// from `hub` before this builder existed see every event of the session from its very
    /// first, as [`subscribe`](Self::subscribe) would give them. The fluent chain hands out
    /// streams before it makes this builder, and gives its hub here. The hub is closed when
    /// the session ends, so it serves one session.
    pub fn event_hub(mut self, hub: Arc<EventHub>) -> Self {
        self.hub = hub;
        self
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
        // Client VAD turns the server's detection off; a setup that already has it off is
        // kept as it is, field for field.
        if self.options.client_vad.is_some() && config.server_vad() {
            config = config.manual_activity_detection();
        }
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
            // Under context injection the session's own instruction is the setup's; the
            // phase's goes as a context turn.
            if self.options.steering.updates_instruction()
                && let Some(instruction) = phases
                    .phase(phase.unwrap_or(phases.initial()))
                    .and_then(|p| p.instruction_for(&self.state))
            {
                config = config.system_instruction(instruction);
            }
        }
        Ok(config)
    }

    /// Starts the session and waits until it is live (setup complete), or ended.
    pub async fn connect(self) -> Result<LiveHandle, SessionStartError> {
        let handle = self.spawn().await?;
        handle.wait_until_live().await?;
        Ok(handle)
    }
}

/// The snapshot to restore, if the session persists and one was saved; checks the session
/// id.
/// Claims the session's id, then loads its snapshot: the claim first, so that what is
/// loaded is what no other process is writing. Without persistence, neither.
async fn claim_and_load(
    persistence: Option<Arc<dyn SessionPersistence>>,
    session_id: Option<String>,
) -> Result<Option<(Box<dyn SessionClaim>, Option<SessionSnapshot>)>, SessionStartError> {
    let Some(persistence) = persistence else {
        return Ok(None);
    };
    let Some(id) = session_id else {
        return Err(SessionStartError::MissingSessionId);
    };
    check_session_id(&id)?;
    let claim = Arc::clone(&persistence).claim(id.clone()).await?;
    let snapshot = persistence.load(&id).await?;
    Ok(Some((claim, snapshot)))
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
