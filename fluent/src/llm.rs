//! Out-of-band model calls in the chain: the cassette that records and replays them, and
//! interceptors of the application's own.
//!
//! Every model the session hands out — the extractors' (wrapped once, when the session
//! starts), the tools' (`ToolContext::llm`), the application's (`LiveHandle::llm`) — goes
//! through the session's interceptor. The chain builds it in layers, the outermost first:
//!
//! 1. the cassette, if any ([`LiveBuilder::llm_cassette`], [`LiveBuilder::llm_cassette_at`];
//!    in a replay, the recording's cassette in replay mode), so a call it answers goes no
//!    further;
//! 2. the interceptors given with [`LiveBuilder::llm_interceptor`], in the order given;
//! 3. the model itself.
//!
//! Live, a cassette next to the wire log is opened when the session starts (in record mode
//! the file is started afresh then). A replay never opens it for writing: it reads the
//! cassette in replay mode, whatever mode the chain names, so no call reaches the network.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reel_actors::llm::{
    BaseLlm, Cassette, CassetteError, CassetteMode, LlmInterceptor, MatchRules,
};

use crate::builder::LiveBuilder;
use crate::error::{BuildError, ReplayError};

/// Where the chain keeps its cassette.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// `X.cassette.json` next to the wire log `X.wire.jsonl`.
    BesideWireLog,
    /// A file the chain names.
    At(PathBuf),
}

/// The out-of-band calls part of a [`LiveBuilder`].
#[derive(Clone, Default)]
pub(crate) struct LlmPart {
    cassette: Option<(Place, CassetteMode)>,
    rules: MatchRules,
    interceptors: Vec<Arc<dyn LlmInterceptor>>,
}

impl fmt::Debug for LlmPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llm")
            .field("cassette", &self.cassette)
            .field("rules", &self.rules)
            .field("interceptors", &self.interceptors.len())
            .finish()
    }
}

impl LlmPart {
    /// The cassette a live session opens, and its mode, given the chain's wire log file.
    /// A cassette beside the wire log needs one.
    pub(crate) fn live_cassette(
        &self,
        wire_log: Option<&Path>,
    ) -> Result<Option<(PathBuf, CassetteMode)>, BuildError> {
        match (&self.cassette, wire_log) {
            (None, _) => Ok(None),
            (Some((Place::At(path), mode)), _) => Ok(Some((path.clone(), *mode))),
            (Some((Place::BesideWireLog, mode)), Some(wire_log)) => {
                Ok(Some((Cassette::path_beside(wire_log), *mode)))
            }
            (Some((Place::BesideWireLog, _)), None) => Err(BuildError::CassetteWithoutWireLog),
        }
    }

    /// The cassette a replay of `log` (a wire log file, or a tape in memory) reads: the one
    /// the chain names, else `X.cassette.json` beside `X.wire.jsonl` if it exists. A chain
    /// that keeps its cassette beside the wire log expects one there.
    pub(crate) fn replay_cassette(
        &self,
        log: Option<&Path>,
    ) -> Result<Option<PathBuf>, ReplayError> {
        if let Some((Place::At(path), _)) = &self.cassette {
            return Ok(Some(path.clone()));
        }
        let expected = self.cassette.is_some();
        match log.map(Cassette::path_beside) {
            Some(beside) if beside.exists() => Ok(Some(beside)),
            Some(beside) if expected => Err(ReplayError::NoCassette {
                expected: Some(beside),
            }),
            None if expected => Err(ReplayError::NoCassette { expected: None }),
            _ => Ok(None),
        }
    }

    /// Opens the cassette at `path` in `mode` with the chain's match rules.
    pub(crate) fn open(&self, path: &Path, mode: CassetteMode) -> Result<Cassette, CassetteError> {
        Cassette::builder(path, mode)
            .rules(self.rules.clone())
            .open()
    }

    /// The application's interceptors, the first given outermost.
    pub(crate) fn interceptors(&self) -> Vec<Arc<dyn LlmInterceptor>> {
        self.interceptors.clone()
    }
}

/// Interceptors applied in layers: the first is the outermost (it sees a call first).
pub(crate) struct Layers(pub(crate) Vec<Arc<dyn LlmInterceptor>>);

impl LlmInterceptor for Layers {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        self.0.iter().rev().fold(llm, |llm, layer| layer.wrap(llm))
    }
}

/// One interceptor for `layers` (outermost first), `None` when there are none.
pub(crate) fn layered(mut layers: Vec<Arc<dyn LlmInterceptor>>) -> Option<Arc<dyn LlmInterceptor>> {
    match layers.len() {
        0 => None,
        1 => layers.pop(),
        _ => Some(Arc::new(Layers(layers))),
    }
}

impl LiveBuilder {
    /// Records every out-of-band model call of the session into a cassette next to the
    /// wire log — `X.cassette.json` for [`record_wire("X.wire.jsonl")`](LiveBuilder::record_wire)
    /// — or answers them from it, by `mode`:
    ///
    /// - [`CassetteMode::Record`]: every call goes to the model and is recorded (the file
    ///   is started afresh when the session starts);
    /// - [`CassetteMode::Replay`]: every call is answered from the cassette, none goes to
    ///   the model; a call it has no answer for fails, naming where the request differs
    ///   from the nearest recorded one;
    /// - [`CassetteMode::Auto`]: answered from the cassette when it has the call, else
    ///   recorded.
    ///
    /// [`replay`](LiveBuilder::replay) of the wire log then answers the calls from this
    /// cassette, in replay mode whatever `mode` says: offline, with no model reached. The
    /// chain needs [`record_wire`](LiveBuilder::record_wire) to a file (else it is refused:
    /// name the file with [`llm_cassette_at`](LiveBuilder::llm_cassette_at) instead).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use reel_actors::llm::{CassetteMode, GeminiLlm};
    /// use reel_fluent::{Live, LiveBuilder};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct CallerMood {
    ///     mood: String,
    /// }
    ///
    /// fn app() -> Result<LiveBuilder, Box<dyn std::error::Error>> {
    ///     let llm = Arc::new(GeminiLlm::from_env("gemini-2.5-flash")?);
    ///     Ok(Live::builder()
    ///         .extract_turns::<CallerMood>(llm, "Extract the caller's mood.")
    ///         .record_wire("calls/call-1.wire.jsonl")
    ///         .llm_cassette(CassetteMode::Record)) // → calls/call-1.cassette.json
    /// }
    ///
    /// // Live: the extractor's calls reach the model and are recorded.
    /// let handle = app()?.connect_from_env().await?;
    /// handle.disconnect().await;
    ///
    /// // Offline: the same app, its calls answered from calls/call-1.cassette.json.
    /// let outcome = app()?.replay("calls/call-1.wire.jsonl").await?.finish().await;
    /// assert!(outcome.is_clean(), "{:?} {:?}", outcome.divergences, outcome.llm_drift);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Without a wire log file:
    ///
    /// ```
    /// use reel_actors::llm::CassetteMode;
    /// use reel_fluent::Live;
    ///
    /// let error = Live::builder().llm_cassette(CassetteMode::Record).validate().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "`.llm_cassette(..)` keeps the cassette next to the wire log, but the chain records \
    ///      no wire log file: add `.record_wire(\"session.wire.jsonl\")`, or name the cassette \
    ///      with `.llm_cassette_at(path, mode)`"
    /// );
    /// ```
    pub fn llm_cassette(mut self, mode: CassetteMode) -> Self {
        self.llm.cassette = Some((Place::BesideWireLog, mode));
        self
    }

    /// [`llm_cassette`](LiveBuilder::llm_cassette) with the cassette at `path`. A
    /// [`replay`](LiveBuilder::replay) reads this file, in replay mode.
    ///
    /// ```
    /// use reel_actors::llm::CassetteMode;
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder().llm_cassette_at("fixtures/models.cassette.json", CassetteMode::Auto);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn llm_cassette_at(mut self, path: impl Into<PathBuf>, mode: CassetteMode) -> Self {
        self.llm.cassette = Some((Place::At(path.into()), mode));
        self
    }

    /// Matches the cassette's requests by `rules` instead of strict JSON equality — live (in
    /// auto mode) and in a replay: paths to ignore, normalizers for ids and dates.
    ///
    /// ```
    /// use reel_actors::llm::{CassetteMode, MatchRules, Normalizer};
    /// use reel_fluent::Live;
    ///
    /// let rules: MatchRules = serde_json::from_value(serde_json::json!({
    ///     "ignore": ["generationConfig.seed"],
    ///     "normalize": [{"kind": "uuids"}, {"kind": "isoDateTimes"}]
    /// }))
    /// .unwrap();
    /// assert_eq!(rules.normalize, [Normalizer::Uuids, Normalizer::IsoDateTimes]);
    /// let builder = Live::builder()
    ///     .record_wire("calls/call.wire.jsonl")
    ///     .llm_cassette(CassetteMode::Auto)
    ///     .llm_cassette_rules(rules);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn llm_cassette_rules(mut self, rules: MatchRules) -> Self {
        self.llm.rules = rules;
        self
    }

    /// Passes every model the session hands out through `interceptor` (a
    /// [`TraceRecorder`](reel_actors::llm::TraceRecorder), a
    /// [`TraceReplayLlm`](reel_actors::llm::TraceReplayLlm), your own), inside the cassette
    /// if the chain has one: a call the cassette answers does not reach it. Several
    /// interceptors apply in the order given, the first outermost. Used as given in a
    /// replay too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_actors::clock::ManualClock;
    /// use reel_actors::llm::TraceRecorder;
    /// use reel_fluent::Live;
    ///
    /// let clock = Arc::new(ManualClock::new(1_718_000_000_000));
    /// let traces = TraceRecorder::new("support-line", "extractors", clock);
    /// let builder = Live::builder().llm_interceptor(Arc::new(traces.clone()));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn llm_interceptor(mut self, interceptor: Arc<dyn LlmInterceptor>) -> Self {
        self.llm.interceptors.push(interceptor);
        self
    }
}

#[cfg(test)]
mod tests {
    use futures_util::future::BoxFuture;
    use reel_actors::llm::{LlmChunk, LlmError, LlmRequest, LlmStream};

    use super::*;

    /// A model named `name`.
    struct Named(String);

    impl BaseLlm for Named {
        fn model_id(&self) -> &str {
            &self.0
        }

        fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
            let chunk = Ok(LlmChunk::text(self.0.clone()));
            Box::pin(async move { Ok(Box::pin(futures_util::stream::iter([chunk])) as LlmStream) })
        }
    }

    /// Wraps a model into one named `{tag}({inner})`.
    struct Tag(&'static str);

    impl LlmInterceptor for Tag {
        fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
            Arc::new(Named(format!("{}({})", self.0, llm.model_id())))
        }
    }

    #[test]
    fn layers_apply_outermost_first() {
        let layers = layered(vec![Arc::new(Tag("cassette")), Arc::new(Tag("trace"))]);
        let wrapped = layers.map(|l| l.wrap(Arc::new(Named("flash".into()))));
        assert_eq!(
            wrapped.map(|m| m.model_id().to_owned()).as_deref(),
            Some("cassette(trace(flash))")
        );
        assert!(layered(Vec::new()).is_none());
    }

    #[test]
    fn a_replay_reads_the_named_cassette_or_the_one_beside_the_log() {
        let dir = std::env::temp_dir().join(format!("reel-fluent-llm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("call.wire.jsonl");
        let beside = dir.join("call.cassette.json");
        let _ = std::fs::remove_file(&beside);

        let none = LlmPart::default();
        assert_eq!(none.replay_cassette(Some(&log)).unwrap(), None);
        assert_eq!(none.replay_cassette(None).unwrap(), None);

        let chained = LlmPart {
            cassette: Some((Place::BesideWireLog, CassetteMode::Record)),
            ..LlmPart::default()
        };
        let missing = chained.replay_cassette(Some(&log)).unwrap_err();
        assert!(
            matches!(&missing, ReplayError::NoCassette { expected: Some(p) } if *p == beside),
            "{missing:?}"
        );
        assert!(matches!(
            chained.replay_cassette(None),
            Err(ReplayError::NoCassette { expected: None })
        ));

        std::fs::write(&beside, "{}").unwrap();
        assert_eq!(
            none.replay_cassette(Some(&log)).unwrap(),
            Some(beside.clone())
        );
        assert_eq!(chained.replay_cassette(Some(&log)).unwrap(), Some(beside));

        let named = LlmPart {
            cassette: Some((
                Place::At("fixtures/m.cassette.json".into()),
                CassetteMode::Auto,
            )),
            ..LlmPart::default()
        };
        assert_eq!(
            named.replay_cassette(Some(&log)).unwrap(),
            Some(PathBuf::from("fixtures/m.cassette.json"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
