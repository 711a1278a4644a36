//! The extract record's orchestration, the seed's `field_resolve` and `on_complete`:
//! a record's field filled by an async resolver whose arguments come from state, and a
//! downstream agent run when the record is complete. Both are [`Resolver`]s recorded in
//! the session's resolutions log (`X.resolved.jsonl`), so a replay writes their results
//! from the recording and calls nothing (decision 0056; why they live here and not in
//! `reel-extract`: decision 0069).
//!
//! ```
//! use std::time::Duration;
//! use reel_agents::{AgentMode, FnTextAgent};
//! use reel_extract::{Extract, Recognizer};
//! use reel_fluent::{Live, RecordOrchestration};
//!
//! let router = FnTextAgent::new("router", |_| Ok("sales".to_owned()));
//! let booking = Extract::record("booking")
//!     .field("slot", Recognizer::one_of(["morning", "afternoon"]))
//!     // args bound from state → fetcher → `availability:result`; cached 30 s by its args.
//!     .field_resolve("availability", ["slot"], Some(Duration::from_secs(30)), |args| async move {
//!         let slot = args.get("slot").and_then(|v| v.as_str()).unwrap_or("");
//!         Ok(serde_json::json!({ "open": slot == "afternoon" }))
//!     })
//!     // the record complete → the router runs detached → `booking:result`.
//!     .on_complete(router, AgentMode::Dispatch)
//!     .build();
//! let builder = Live::builder().extract_record(booking);
//! assert!(builder.validate().is_ok());
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::extract::ExtractionTrigger;
use reel_actors::state::State;
use reel_agents::{AgentMode, FetchError, Resolver, TextAgent};
use reel_extract::{Recognizer, RecordBuilder, RecordExtractor};
use serde_json::{Map, Value};

/// The arguments a field resolver gets: each input name with its value in state (`null`
/// when not set).
pub type ResolveArgs = Map<String, Value>;

type Fetch = Arc<
    dyn Fn(ResolveArgs) -> futures_util::future::BoxFuture<'static, Result<Value, FetchError>>
        + Send
        + Sync,
>;

/// One `field_resolve`: its name, its input names, its cache, its fetcher.
#[derive(Clone)]
struct FieldResolve {
    name: String,
    inputs: Vec<String>,
    ttl: Option<Duration>,
    fetch: Fetch,
}

impl std::fmt::Debug for FieldResolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldResolve")
            .field("name", &self.name)
            .field("inputs", &self.inputs)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// An extract record with orchestration declared on it (made by
/// [`RecordOrchestration::field_resolve`] or [`RecordOrchestration::on_complete`] on
/// `Extract::record(..)`); [`build`](OrchestratedRecord::build) it and hand it to
/// [`extract_record`](crate::LiveBuilder::extract_record).
#[derive(Debug, Clone)]
pub struct OrchestratedRecord {
    builder: RecordBuilder,
    resolves: Vec<FieldResolve>,
    complete: Option<(Resolver, AgentMode)>,
}

/// The seed's `field_resolve` and `on_complete` on an extract record's builder (import
/// the trait, then spell them as the seed does).
pub trait RecordOrchestration: Sized {
    /// A field filled by an async source instead of a recognizer: when every input is
    /// set (a name of the record's fields reads `derived:{field}`, any other name that
    /// state key) and their values changed since it last ran, the control lane runs
    /// `fetch` with them at the next commit point (a turn's end, a tool commit) and waits
    /// (at most the callback timeout); its result lands in `{name}:result` (its error in
    /// `{name}:error`), where a flow's `resolved(name)` guard sees it. With a `ttl`,
    /// results are cached by their arguments on event time. Recorded: a replay calls
    /// nothing.
    fn field_resolve<I, K, F, Fut>(
        self,
        name: impl Into<String>,
        inputs: I,
        ttl: Option<Duration>,
        fetch: F,
    ) -> OrchestratedRecord
    where
        I: IntoIterator<Item = K>,
        K: Into<String>,
        F: Fn(ResolveArgs) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, FetchError>> + Send + 'static;

    /// Runs `agent` in `mode` when the record is complete (every field known), and again
    /// whenever a complete record's fields change; its output lands in `{record}:result`
    /// (see [`AgentMode`] for what the conversation waits for). Recorded: a replay runs
    /// no agent and writes the result where it landed.
    fn on_complete(self, agent: impl TextAgent, mode: AgentMode) -> OrchestratedRecord;
}

impl From<RecordBuilder> for OrchestratedRecord {
    fn from(builder: RecordBuilder) -> Self {
        OrchestratedRecord {
            builder,
            resolves: Vec::new(),
            complete: None,
        }
    }
}

impl RecordOrchestration for RecordBuilder {
    fn field_resolve<I, K, F, Fut>(
        self,
        name: impl Into<String>,
        inputs: I,
        ttl: Option<Duration>,
        fetch: F,
    ) -> OrchestratedRecord
    where
        I: IntoIterator<Item = K>,
        K: Into<String>,
        F: Fn(ResolveArgs) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, FetchError>> + Send + 'static,
    {
        OrchestratedRecord::from(self).field_resolve(name, inputs, ttl, fetch)
    }

    fn on_complete(self, agent: impl TextAgent, mode: AgentMode) -> OrchestratedRecord {
        OrchestratedRecord::from(self).on_complete(agent, mode)
    }
}

impl RecordOrchestration for OrchestratedRecord {
    fn field_resolve<I, K, F, Fut>(
        mut self,
        name: impl Into<String>,
        inputs: I,
        ttl: Option<Duration>,
        fetch: F,
    ) -> OrchestratedRecord
    where
        I: IntoIterator<Item = K>,
        K: Into<String>,
        F: Fn(ResolveArgs) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, FetchError>> + Send + 'static,
    {
        let fetch: Fetch = Arc::new(move |args| Box::pin(fetch(args)));
        self.resolves.push(FieldResolve {
            name: name.into(),
            inputs: inputs.into_iter().map(Into::into).collect(),
            ttl,
            fetch,
        });
        self
    }

    fn on_complete(mut self, agent: impl TextAgent, mode: AgentMode) -> OrchestratedRecord {
        let name = self.builder.name().to_owned();
        self.complete = Some((Resolver::agent(name, agent), mode));
        self
    }
}

impl OrchestratedRecord {
    /// A field filled by `recognizer` (see `RecordBuilder::field`).
    pub fn field(mut self, name: impl Into<String>, recognizer: Recognizer) -> Self {
        self.builder = self.builder.field(name, recognizer);
        self
    }

    /// Reads the last `window` turns (see `RecordBuilder::window`).
    pub fn window(mut self, window: usize) -> Self {
        self.builder = self.builder.window(window);
        self
    }

    /// Runs at `trigger` instead of every turn (see `RecordBuilder::trigger`).
    pub fn trigger(mut self, trigger: ExtractionTrigger) -> Self {
        self.builder = self.builder.trigger(trigger);
        self
    }

    /// The record, its extractor and its orchestration.
    pub fn build(self) -> ExtractRecord {
        let extractor = self.builder.build();
        let fields: Vec<String> = extractor
            .field_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let key_of = |name: &str| {
            if fields.iter().any(|field| field == name) {
                format!("derived:{name}")
            } else {
                name.to_owned()
            }
        };
        let resolves = self
            .resolves
            .into_iter()
            .map(|resolve| {
                let bound: Vec<(String, String)> = resolve
                    .inputs
                    .iter()
                    .map(|name| (name.clone(), key_of(name)))
                    .collect();
                let keys: Vec<String> = bound.iter().map(|(_, key)| key.clone()).collect();
                let fetch = resolve.fetch;
                let args_of = bound.clone();
                let mut resolver = Resolver::fetch(resolve.name, move |state: State| {
                    let args: ResolveArgs = args_of
                        .iter()
                        .map(|(name, key)| {
                            (name.clone(), state.get_raw(key).unwrap_or(Value::Null))
                        })
                        .collect();
                    fetch(args)
                })
                .inputs(keys.clone());
                if let Some(ttl) = resolve.ttl {
                    resolver = resolver.ttl(ttl);
                }
                RecordResolve { resolver, keys }
            })
            .collect();
        ExtractRecord {
            work: RecordWork {
                fields: fields
                    .iter()
                    .map(|field| format!("derived:{field}"))
                    .collect(),
                resolves,
                complete: self.complete,
            },
            extractor,
        }
    }
}

/// A record for [`extract_record`](crate::LiveBuilder::extract_record): its extractor and
/// what runs on its fields (nothing, for a plain `RecordExtractor`).
#[derive(Debug, Clone)]
pub struct ExtractRecord {
    pub(crate) extractor: RecordExtractor,
    pub(crate) work: RecordWork,
}

impl From<RecordExtractor> for ExtractRecord {
    fn from(extractor: RecordExtractor) -> Self {
        ExtractRecord {
            extractor,
            work: RecordWork::default(),
        }
    }
}

/// What runs on a record's fields, as the session's orchestrator holds it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordWork {
    /// The record's state keys (`derived:{field}`), in declaration order.
    pub(crate) fields: Vec<String>,
    pub(crate) resolves: Vec<RecordResolve>,
    pub(crate) complete: Option<(Resolver, AgentMode)>,
}

impl RecordWork {
    /// Whether anything runs on the record.
    pub(crate) fn is_empty(&self) -> bool {
        self.resolves.is_empty() && self.complete.is_none()
    }
}

/// One field resolver: the resolver and the state keys its arguments are read from.
#[derive(Debug, Clone)]
pub(crate) struct RecordResolve {
    pub(crate) resolver: Resolver,
    pub(crate) keys: Vec<String>,
}

/// The values of `keys` in `state`, if every one is set.
pub(crate) fn values_of(state: &State, keys: &[String]) -> Option<Vec<Value>> {
    keys.iter()
        .map(|key| state.get_raw(key).filter(|value| !value.is_null()))
        .collect()
}
