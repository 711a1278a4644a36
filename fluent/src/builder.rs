//! [`LiveBuilder`]: the one chain that describes a whole session.
//!
//! The methods live in files by concern: the setup ([`crate::setup`]), tools
//! ([`crate::tools`]), callbacks ([`crate::fast`], [`crate::control`]), phases
//! ([`crate::phases`]), reactive state ([`crate::reactive`]), extractors
//! ([`crate::extraction`]), persistence ([`crate::persistence`]), out-of-band model calls
//! ([`crate::llm`]), recording ([`crate::recording`]), and the ways to start
//! ([`crate::connect`], [`crate::replay`]). Each concern keeps its own part of the builder
//! and puts it into the runtime's [`LiveSessionBuilder`] in [`crate::plan`]; a new concern
//! is a new part and one more line there. The tree-level settings (buffers, client audio,
//! timeouts) are not a part: the chain's setters write the runtime's own
//! [`SessionOptions`], handed over whole (decision 0047).

use std::fmt;
use std::sync::Arc;

use reel_actors::callbacks::{ControlCallbacks, FastCallbacks, Interceptors, TelemetryCallbacks};
use reel_actors::events::EventHub;
use reel_actors::state::State;
use reel_actors::{EventStream, LiveSessionBuilder, SessionOptions};
use reel_protocol::SessionConfig;

use crate::error::BuildError;
use crate::extraction::ExtractorsPart;
use crate::llm::LlmPart;
use crate::mcp::McpPart;
use crate::orchestration::OrchestrationPart;
use crate::persistence::PersistencePart;
use crate::phases::PhasesPart;
use crate::reactive::ReactivePart;
use crate::recording::RecordingPart;
use crate::tools::ToolsPart;

/// A change to the runtime's builder, for what the fluent chain does not cover.
pub(crate) type Customizer = Arc<dyn Fn(LiveSessionBuilder) -> LiveSessionBuilder + Send + Sync>;

/// The entry point: `Live::builder()`.
///
/// ```
/// use reel_fluent::Live;
///
/// let assistant = Live::builder()
///     .model("gemini-live-2.5-flash-preview")
///     .text_only()
///     .instruction("You are a friendly weather assistant.")
///     .greeting("Hello!");
/// assert!(assistant.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Live;

impl Live {
    /// A builder for a session with the default model
    /// ([`reel_protocol::DEFAULT_MODEL`], answering with audio), no tools, no phases and no
    /// callbacks.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::DEFAULT_MODEL;
    ///
    /// let config = Live::builder().session_config().unwrap();
    /// assert_eq!(config.model_name(), DEFAULT_MODEL);
    /// ```
    pub fn builder() -> LiveBuilder {
        LiveBuilder::new()
    }
}

/// Everything a session is made of, in one chain: setup, tools, callbacks, phases,
/// recording; then one of the ways to start it — `connect_*` against an API, or
/// [`replay`](LiveBuilder::replay) against a recording of the same application.
///
/// Mistakes in the chain (a transition to a phase that does not exist, a tool registered
/// twice, a setting for an unknown tool) are collected and reported by
/// [`validate`](LiveBuilder::validate) and by every way to start, before anything
/// connects, as a [`BuildError`] that says what to fix.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use reel_tools::TypedTool;
/// use reel_fluent::Live;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct WeatherArgs {
///     /// The city, e.g. "London".
///     city: String,
/// }
///
/// let handle = Live::builder()
///     .model("gemini-live-2.5-flash-preview")
///     .text_only()
///     .tool(TypedTool::new("get_weather", "The weather in a city.", |args: WeatherArgs, _ctx| async move {
///         Ok(json!({ "city": args.city, "temp_c": 14 }))
///     }))
///     .phase("greeting", |p| {
///         p.instruction("Greet the user and ask for a city.")
///             .transition("forecast", |s| s.contains("app:city"))
///     })
///     .phase("forecast", |p| p.instruction("Give the forecast.").terminal())
///     .on_text_complete(|text| println!("assistant: {text}"))
///     .record_wire("session.wire.jsonl")
///     .greeting("Hello!")
///     .connect_from_env()
///     .await?;
/// handle.send_text("What's the weather in London?")?;
/// # Ok(())
/// # }
/// ```
#[must_use = "a builder does nothing until it is connected or replayed"]
pub struct LiveBuilder {
    pub(crate) config: SessionConfig,
    pub(crate) greeting: Option<String>,
    pub(crate) tools: ToolsPart,
    pub(crate) mcp: McpPart,
    pub(crate) fast: FastCallbacks,
    pub(crate) control: ControlCallbacks,
    pub(crate) interceptors: Interceptors,
    pub(crate) telemetry: TelemetryCallbacks,
    pub(crate) phases: PhasesPart,
    pub(crate) reactive: ReactivePart,
    pub(crate) governing: crate::govern::GovernPart,
    pub(crate) extractors: ExtractorsPart,
    pub(crate) persistence: PersistencePart,
    pub(crate) llm: LlmPart,
    pub(crate) recording: RecordingPart,
    pub(crate) orchestration: OrchestrationPart,
    pub(crate) state: Option<State>,
    /// The tree-level settings (buffers, client audio, timeouts): written by the chain's
    /// setters, handed to the runtime whole.
    pub(crate) options: SessionOptions,
    pub(crate) customizers: Vec<Customizer>,
    /// The hub the session will publish on: made here, so that [`LiveBuilder::subscribe`]
    /// can hand out streams before the session exists; the plan gives it to the runtime.
    pub(crate) hub: Arc<EventHub>,
}

impl Default for LiveBuilder {
    fn default() -> Self {
        LiveBuilder::new()
    }
}

impl fmt::Debug for LiveBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveBuilder")
            .field("model", &self.config.model_name())
            .field("greeting", &self.greeting)
            .field("tools", &self.tools)
            .field("mcp", &self.mcp)
            .field("fast", &self.fast)
            .field("control", &self.control)
            .field("interceptors", &self.interceptors)
            .field("telemetry", &self.telemetry)
            .field("phases", &self.phases)
            .field("reactive", &self.reactive)
            .field("governing", &self.governing)
            .field("extractors", &self.extractors)
            .field("persistence", &self.persistence)
            .field("llm", &self.llm)
            .field("recording", &self.recording)
            .field("orchestration", &self.orchestration)
            .finish_non_exhaustive()
    }
}

impl LiveBuilder {
    /// The same as [`Live::builder`].
    ///
    /// ```
    /// use reel_fluent::LiveBuilder;
    /// assert!(LiveBuilder::new().validate().is_ok());
    /// ```
    pub fn new() -> Self {
        LiveBuilder {
            config: SessionConfig::default(),
            greeting: None,
            tools: ToolsPart::default(),
            mcp: McpPart::default(),
            fast: FastCallbacks::default(),
            control: ControlCallbacks::default(),
            interceptors: Interceptors::default(),
            telemetry: TelemetryCallbacks::default(),
            phases: PhasesPart::default(),
            reactive: ReactivePart::default(),
            governing: crate::govern::GovernPart::default(),
            extractors: ExtractorsPart::default(),
            persistence: PersistencePart::default(),
            llm: LlmPart::default(),
            recording: RecordingPart::default(),
            orchestration: OrchestrationPart::default(),
            state: None,
            options: SessionOptions::default(),
            customizers: Vec::new(),
            hub: Arc::new(EventHub::new()),
        }
    }

    /// Runs the session on `state` instead of a fresh one: one the application already
    /// holds and reads, for instance.
    ///
    /// ```
    /// use reel_actors::state::State;
    /// use reel_fluent::Live;
    ///
    /// let state = State::new();
    /// let builder = Live::builder().state(state.clone());
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn state(mut self, state: State) -> Self {
        self.state = Some(state);
        self
    }

    /// Keeps model audio in a playback queue of at most `chunks` chunks, cleared when the
    /// user barges in (`LiveHandle::playback`): the application plays from the queue.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().playback_buffer(256);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn playback_buffer(mut self, chunks: usize) -> Self {
        self.options.playback_buffer = Some(chunks);
        self
    }

    /// Changes the runtime's [`LiveSessionBuilder`] just before the session starts, for
    /// what the chain does not cover: the clock, transport options and reconnects, the
    /// restart policy, the session budget, a custom connector. Calls apply in order.
    /// A replay sets its own clock and transport after these.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder().customize(|session| session.session_budget(Duration::from_secs(600)));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn customize(
        mut self,
        f: impl Fn(LiveSessionBuilder) -> LiveSessionBuilder + Send + Sync + 'static,
    ) -> Self {
        self.customizers.push(Arc::new(f));
        self
    }

    /// A stream of every event of the session to come, from its very first
    /// (`Connected`, the phase changes of the handshake, …): subscribe here, before
    /// connecting or replaying, to miss nothing. The stream ends when the session ends.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder().text_only().greeting("Hello!");
    /// let mut events = builder.subscribe();
    /// let handle = builder.connect_from_env().await?;
    /// while let Some(event) = events.recv().await {
    ///     println!("{:?} {:?}", event.lane, event.event);
    /// }
    /// # drop(handle);
    /// # Ok(())
    /// # }
    /// ```
    pub fn subscribe(&self) -> EventStream {
        self.hub.subscribe()
    }

    /// Checks the chain without starting anything: phases, tools and their agreement,
    /// reactive rules, extractors, persistence, and where the model-call cassette goes.
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let error = Live::builder().initial_phase("greeting").validate().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "invalid phases: initial phase `greeting` is not defined; defined phases: []"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), BuildError> {
        self.plan().map(drop)
    }

    /// The setup the session will send, once validated: the configured setup, the tools'
    /// declarations (sorted by name) and the initial phase's instruction. Write it for a
    /// platform with [`SessionConfig::setup_frame`].
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::Platform;
    ///
    /// let config = Live::builder()
    ///     .model("gemini-live-2.5-flash-preview")
    ///     .text_only()
    ///     .session_config()
    ///     .unwrap();
    /// assert_eq!(
    ///     String::from_utf8(config.setup_frame(&Platform::GoogleAi)).unwrap(),
    ///     r#"{"setup":{"model":"models/gemini-live-2.5-flash-preview","generationConfig":{"responseModalities":["TEXT"]}}}"#
    /// );
    /// ```
    pub fn session_config(&self) -> Result<SessionConfig, BuildError> {
        self.plan().map(|plan| plan.resolved)
    }
}
