//! [`Resolver`]: a named async value source whose inputs come from state and whose result
//! lands in `{name}:result` (or `{name}:error`), with its provenance — and, given a
//! [`Resolutions`] log, on the session's recording, so a replay takes the result from
//! there and calls nothing (decision 0056).
//!
//! Three sources: a text agent ([`Resolver::agent`]), any async code
//! ([`Resolver::fetch`]) and one model call over a `{key}` prompt ([`Resolver::llm`]).
//! The source runs over a **copy** of the state taken when the resolution starts: what it
//! writes stays in the copy, and only the result (with its provenance) or the error is
//! written to the session. So a replay, which does not run the source, writes the same
//! journal.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_actors::state::State;
//! use reel_agents::{Resolution, Resolutions, Resolver};
//!
//! let availability = |log: &Resolutions| {
//!     Resolver::fetch("availability", |s: State| async move {
//!         let slot = s.get::<String>("slot").unwrap_or_default();
//!         Ok(serde_json::json!({"open": slot == "afternoon"}))
//!     })
//!     .inputs(["slot"])
//!     .recorded_in(log)
//! };
//!
//! // Recording: the fetch runs and its result is kept.
//! let state = State::new();
//! state.set("slot", "afternoon").await?;
//! let recording = Resolutions::record();
//! availability(&recording).resolve(&state).await?;
//! assert_eq!(state.get_raw("availability:result"), Some(serde_json::json!({"open": true})));
//!
//! // Replaying: the same value, and the fetch is not called.
//! let replay = Resolutions::replay(recording.entries());
//! let again = State::new();
//! again.set("slot", "afternoon").await?;
//! availability(&replay).resolve(&again).await?;
//! assert_eq!(again.get_raw("availability:result"), Some(serde_json::json!({"open": true})));
//! assert!(replay.drift().is_empty());
//! # Ok(())
//! # }
//! ```

mod cache;
mod error;
mod provenance;
mod resolutions;
mod source;
mod template;
mod write;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::state::State;
use reel_llm::BaseLlm;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

pub use error::{ResolutionsError, ResolveError};
pub use provenance::{Provenance, provenance};
pub use resolutions::{Resolution, ResolutionMode, Resolutions, ResolverDrift, read_resolutions};
pub use source::{FetchError, SourceKind};

use crate::{TextAgent, agent::task_error};
use cache::Cache;
use resolutions::Begin;
use source::Source;
use write::{landing, write_outcome};

/// A named async value source (see the [module documentation](self)).
#[derive(Clone)]
pub struct Resolver {
    name: String,
    source: Source,
    inputs: Vec<String>,
    cache: Option<Cache>,
    log: Resolutions,
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("inputs", &self.inputs)
            .field("ttl", &self.cache.as_ref().map(Cache::ttl))
            .field("log", &self.log)
            .finish()
    }
}

impl Resolver {
    fn new(name: impl Into<String>, source: Source) -> Self {
        Resolver {
            name: name.into(),
            source,
            inputs: Vec::new(),
            cache: None,
            log: Resolutions::new(),
        }
    }

    /// A sub-agent: its output (a string) is the result.
    pub fn agent(name: impl Into<String>, agent: impl TextAgent) -> Self {
        Resolver::new(name, Source::Agent(Arc::new(agent)))
    }

    /// Any async code — an HTTP fetch, a database, an MCP request — given a copy of the
    /// state. Declare the keys it reads with [`inputs`](Resolver::inputs): they are what
    /// the recording keeps, the cache is keyed by, and a replay compares.
    pub fn fetch<F, Fut>(name: impl Into<String>, fetch: F) -> Self
    where
        F: Fn(State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, FetchError>> + Send + 'static,
    {
        let fetch = Arc::new(move |state: State| {
            Box::pin(fetch(state)) as futures_util::future::BoxFuture<'static, _>
        });
        Resolver::new(name, Source::Fetch(fetch))
    }

    /// One model call over `prompt` with each `{key}` replaced by its value in state
    /// (`{{` and `}}` are literal braces); the answer's text is the result. The keys the
    /// prompt reads are its inputs. A key that is not set is an error, written to
    /// `{name}:error`.
    pub fn llm(name: impl Into<String>, llm: Arc<dyn BaseLlm>, prompt: impl Into<String>) -> Self {
        let prompt = prompt.into();
        let inputs = template::keys(&prompt);
        let mut resolver = Resolver::new(name, Source::Llm { llm, prompt });
        resolver.inputs = inputs;
        resolver
    }

    /// The state keys the source reads (added to the prompt's keys for an llm resolver).
    pub fn inputs<I, K>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = K>,
        K: Into<String>,
    {
        for key in keys {
            let key = key.into();
            if !self.inputs.contains(&key) {
                self.inputs.push(key);
            }
        }
        self
    }

    /// Caches results for `ttl`, keyed by the inputs' values: a resolution whose inputs
    /// were resolved less than `ttl` ago calls nothing and writes the cached result again.
    /// Time is the state's clock (in a session, event time), so a replay decides the
    /// same. Failures are not cached.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.cache = Some(Cache::new(ttl));
        self
    }

    /// Records into (or replays from) `log`: a session's log is bound to its recording.
    pub fn recorded_in(mut self, log: &Resolutions) -> Self {
        self.log = log.clone();
        self
    }

    /// The resolver's name (its result lands in `{name}:result`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kind of its source.
    pub fn source_kind(&self) -> SourceKind {
        self.source.kind()
    }

    /// Resolves now and waits: the result, also written to `{name}:result` with its
    /// provenance; or the error, whose message is written to `{name}:error`.
    pub async fn resolve(&self, state: &State) -> Result<Value, ResolveError> {
        let inputs = self.read_inputs(state);
        if let Some(value) = self.cached(state, &inputs) {
            return write_outcome(state, &self.name, self.source.kind(), &inputs, Ok(value)).await;
        }
        let kind = self.source.kind();
        match self.log.begin(&self.name, kind, &inputs) {
            Begin::Replayed { call, recorded } => {
                let Some(recorded) = recorded else {
                    return Err(self.not_recorded(call));
                };
                let written =
                    write_outcome(state, &self.name, kind, &inputs, recorded.outcome()).await;
                self.remember(state, &inputs, &written);
                written
            }
            Begin::Run { call, record } => {
                let outcome = self.source.run(fork(&self.name, state).await?).await;
                let resolution = record.then(|| self.resolution(call, &inputs, &outcome));
                let written = write_outcome(state, &self.name, kind, &inputs, outcome).await;
                if let Some(resolution) = resolution {
                    self.log.finish(resolution);
                }
                self.remember(state, &inputs, &written);
                written
            }
        }
    }

    /// Resolves detached and returns at once; the task's result is what
    /// [`resolve`](Resolver::resolve) would have returned. The inputs are read now.
    ///
    /// Recording, the place in the journal where the result landed is kept with it. In a
    /// replay the source is not run: the recorded result is held and written where it
    /// landed when recording, once the log's driver (the session) reaches that place
    /// ([`Resolutions::release_due`]); with no driver, at once.
    pub fn dispatch(&self, state: State) -> JoinHandle<Result<Value, ResolveError>> {
        let inputs = self.read_inputs(&state);
        let kind = self.source.kind();
        let this = self.clone();
        if let Some(value) = self.cached(&state, &inputs) {
            return tokio::spawn(async move {
                write_outcome(&state, &this.name, kind, &inputs, Ok(value)).await
            });
        }
        match self.log.begin(&self.name, kind, &inputs) {
            Begin::Replayed { call, recorded } => {
                let Some(recorded) = recorded else {
                    let error = self.not_recorded(call);
                    return tokio::spawn(async move { Err(error) });
                };
                if !self.log.is_driven() {
                    return tokio::spawn(async move {
                        let written =
                            write_outcome(&state, &this.name, kind, &inputs, recorded.outcome())
                                .await;
                        this.remember(&state, &inputs, &written);
                        written
                    });
                }
                let landed = self.log.hold(&recorded, state.clone());
                tokio::spawn(async move {
                    let written = landed.await.unwrap_or_else(|_| {
                        Err(ResolveError::Task {
                            resolver: this.name.clone(),
                            what: "was dropped before its recorded landing".to_owned(),
                        })
                    });
                    this.remember(&state, &inputs, &written);
                    written
                })
            }
            Begin::Run { call, record } => {
                // The copy is taken now, as the inputs are: the source sees the state
                // the dispatch saw.
                let snapshot = state.snapshot();
                tokio::spawn(async move {
                    let copy = State::new();
                    copy.set_many(snapshot.iter().map(|(k, v)| (k.to_owned(), v.clone())))
                        .await
                        .map_err(|source| this.copy_failed(source))?;
                    let source = this.source.clone();
                    let outcome = match tokio::spawn(async move { source.run(copy).await }).await {
                        Ok(outcome) => outcome,
                        Err(error) => Err(task_error(&this.name, &error).to_string()),
                    };
                    let ok = outcome.is_ok();
                    let mut resolution = record.then(|| this.resolution(call, &inputs, &outcome));
                    // Read just before the write: should the lane start or finish an event
                    // while the write is queued, the write still comes before that event's
                    // own writes (they queue behind it), where this mark puts it.
                    let mark = state.lane_mark();
                    let written = write_outcome(&state, &this.name, kind, &inputs, outcome).await;
                    if let Some(mut resolution) = resolution.take() {
                        if let Some((after, at_ms)) = landing(&state, &this.name, ok) {
                            resolution.landed_after = Some(after);
                            resolution.landed_at_ms = Some(at_ms);
                            resolution.landed_at_mark = Some(mark);
                        }
                        this.log.finish(resolution);
                    }
                    this.remember(&state, &inputs, &written);
                    written
                })
            }
        }
    }

    fn read_inputs(&self, state: &State) -> Map<String, Value> {
        self.inputs
            .iter()
            .map(|key| (key.clone(), state.get_raw(key).unwrap_or(Value::Null)))
            .collect()
    }

    fn cached(&self, state: &State, inputs: &Map<String, Value>) -> Option<Value> {
        self.cache
            .as_ref()
            .and_then(|cache| cache.get(inputs, state.clock().now_ms()))
    }

    fn remember(
        &self,
        state: &State,
        inputs: &Map<String, Value>,
        written: &Result<Value, ResolveError>,
    ) {
        if let (Some(cache), Ok(value)) = (&self.cache, written) {
            cache.put(inputs, value.clone(), state.clock().now_ms());
        }
    }

    fn resolution(
        &self,
        call: u64,
        inputs: &Map<String, Value>,
        outcome: &Result<Value, String>,
    ) -> Resolution {
        Resolution {
            resolver: self.name.clone(),
            call,
            source: self.source.kind(),
            inputs: inputs.clone(),
            result: outcome.as_ref().ok().cloned(),
            error: outcome.as_ref().err().cloned(),
            landed_after: None,
            landed_at_ms: None,
            landed_at_mark: None,
        }
    }

    fn not_recorded(&self, call: u64) -> ResolveError {
        ResolveError::NotRecorded {
            resolver: self.name.clone(),
            call,
        }
    }

    fn copy_failed(&self, source: reel_actors::state::StateError) -> ResolveError {
        ResolveError::State {
            resolver: self.name.clone(),
            key: "(the source's copy of the state)".to_owned(),
            source,
        }
    }
}

/// A copy of `state`, detached from any session: what a source runs over.
async fn fork(resolver: &str, state: &State) -> Result<State, ResolveError> {
    let copy = State::new();
    let snapshot = state.snapshot();
    copy.set_many(snapshot.iter().map(|(k, v)| (k.to_owned(), v.clone())))
        .await
        .map_err(|source| ResolveError::State {
            resolver: resolver.to_owned(),
            key: "(the source's copy of the state)".to_owned(),
            source,
        })?;
    Ok(copy)
}

/// Runs `agent` inline as resolver `name` over `state`: its output, also written to
/// `{name}:result` (its error's message to `{name}:error`). The seed's `call_agent`;
/// [`AgentMode::Call`](crate::AgentMode::Call) in a session.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use reel_actors::state::State;
/// use reel_agents::{FnTextAgent, call_agent};
///
/// let agent = FnTextAgent::new("greeter", |s: &State| {
///     Ok(format!("hello {}", s.get::<String>("name").unwrap_or_default()))
/// });
/// let state = State::new();
/// state.set("name", "Ada").await?;
/// assert_eq!(call_agent("greeting", agent, &state).await?, "hello Ada");
/// assert_eq!(state.get::<String>("greeting:result").as_deref(), Some("hello Ada"));
/// # Ok(())
/// # }
/// ```
pub async fn call_agent(
    name: impl Into<String>,
    agent: impl TextAgent,
    state: &State,
) -> Result<String, ResolveError> {
    let value = Resolver::agent(name, agent).resolve(state).await?;
    Ok(match value {
        Value::String(text) => text,
        other => other.to_string(),
    })
}
