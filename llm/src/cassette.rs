//! [`Cassette`]: every out-of-band model call of a session recorded into one file and
//! answered from it.
//!
//! - [`CassetteMode::Record`] forwards every call to the live model and records it;
//! - [`CassetteMode::Replay`] never forwards: each call is answered from a recorded
//!   interaction whose request matches, and a miss is [`CassetteError::Miss`];
//! - [`CassetteMode::Auto`] answers a hit from the cassette and forwards and records a miss.
//!
//! On any forward, the live answer is collected whole, appended to the cassette and saved
//! (atomically, the whole file) before the first chunk is returned, so the cassette is
//! complete even when the consumer stops early, and a failure to record (the size cap, the
//! disk) is the call's error rather than a silent loss. Requests are matched by
//! [`MatchRules`] (strict by default); identical requests are answered in recorded order.
//! Calls from several tasks at once are safe: the cassette's state and file are updated
//! under one lock.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES, Interaction};
use reel_recorder::llm_tape::{DocumentError, DocumentKind, RecordedChunk, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::matching::MatchRules;
use super::pacing::{ChunkPacing, ReplayEnd, replay_stream};
use super::recorded::{nanos, prompt_summary, record_chunk, record_usage, request_json};
use super::{
    BaseLlm, CassetteError, LlmError, LlmInterceptor, LlmRequest, LlmStream, UnknownCassetteMode,
};
use reel_recorder::clock::{SharedClock, TokioClock};

/// What a cassette does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CassetteMode {
    /// Forward every call to the live model and record it. Opening starts a new cassette,
    /// replacing the file.
    Record,
    /// Never forward: answer from the cassette; a call with no recorded answer fails.
    Replay,
    /// Answer from the cassette when it has the call; otherwise forward and record it.
    Auto,
}

impl CassetteMode {
    /// `record`, `replay` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            CassetteMode::Record => "record",
            CassetteMode::Replay => "replay",
            CassetteMode::Auto => "auto",
        }
    }
}

impl FromStr for CassetteMode {
    type Err = UnknownCassetteMode;

    /// Parses `record`, `replay` or `auto` (for a flag or an environment variable).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "record" => Ok(CassetteMode::Record),
            "replay" => Ok(CassetteMode::Replay),
            "auto" => Ok(CassetteMode::Auto),
            other => Err(UnknownCassetteMode {
                given: other.to_owned(),
            }),
        }
    }
}

impl std::fmt::Display for CassetteMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A cassette file opened in a mode: the broker every model call of a session goes through.
///
/// Cheap to clone (clones share the cassette). It is an [`LlmInterceptor`]: hand it to a
/// session and every model the session gives out is wrapped, so all out-of-band calls are
/// recorded into, or replayed from, this one file.
///
/// ```no_run
/// use std::sync::Arc;
/// use reel_llm::{BaseLlm, Cassette, CassetteMode, LlmInterceptor, LlmRequest};
///
/// # async fn demo(live: Arc<dyn BaseLlm>) -> Result<(), reel_llm::LlmError> {
/// let cassette = Cassette::open("session.cassette.json", CassetteMode::Auto)?;
/// let model = cassette.wrap(live);
/// let answer = model.generate(LlmRequest::new("gemini-2.5-flash").user("Paris?")).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Cassette {
    shared: Arc<Shared>,
}

/// What every clone and every wrapped model of a cassette shares.
struct Shared {
    path: PathBuf,
    mode: CassetteMode,
    rules: MatchRules,
    pacing: ChunkPacing,
    max_bytes: u64,
    keep_failures: bool,
    sorted: bool,
    clock: SharedClock,
    state: Mutex<State>,
}

/// The cassette in memory: its file, each interaction's normalized request, and which
/// interactions have answered a call.
struct State {
    file: CassetteFile,
    keys: Vec<Value>,
    used: Vec<bool>,
}

/// Options of a cassette before it is opened; see [`Cassette::builder`].
#[must_use = "a builder does nothing until `open` is called"]
pub struct CassetteBuilder {
    path: PathBuf,
    mode: CassetteMode,
    rules: MatchRules,
    pacing: ChunkPacing,
    max_bytes: u64,
    clock: Option<SharedClock>,
    keep_failures: bool,
    sorted: bool,
}

impl CassetteBuilder {
    /// Keeps a forwarded call that fails (default: not kept): its chunks so far and the
    /// error's message are recorded as an interaction, and a replay answers the same
    /// request with them, then fails with [`LlmError::Recorded`] carrying that message.
    /// For pipelines that branch on a failure (a fallback chain): offline, the failed call
    /// fails again, from the recording. Not for `M::retry` from `reel-compose`, whose replay
    /// makes only its last attempt (decision 0058) and would be answered by the kept
    /// failure of the first (decision 0063).
    pub fn keep_failures(mut self, keep: bool) -> Self {
        self.keep_failures = keep;
        self
    }

    /// Keeps the file's interactions ordered by their request (its JSON text) rather than
    /// by when each call finished (default: in the order calls finished). Calls made at
    /// once — a suite judging recordings in parallel — then give the same file whatever
    /// order they finish in; equal requests keep the order they finished in. An existing
    /// file ([`CassetteMode::Auto`]) is put in that order when opened (and written so at
    /// its next interaction). A replay matches calls by request, so the order changes no
    /// answer.
    pub fn sorted_by_request(mut self, sorted: bool) -> Self {
        self.sorted = sorted;
        self
    }

    /// Matches requests by `rules` (default: strict equality).
    pub fn rules(mut self, rules: MatchRules) -> Self {
        self.rules = rules;
        self
    }

    /// Paces replayed answers by `pacing` (default: [`ChunkPacing::Immediate`]; a bad speed
    /// is an error at each replayed call). Forwarded calls are always returned at once:
    /// their time was spent collecting them.
    pub fn pacing(mut self, pacing: ChunkPacing) -> Self {
        self.pacing = pacing;
        self
    }

    /// Caps the cassette file at `max_bytes` (default [`DEFAULT_MAX_CASSETTE_BYTES`]): a
    /// larger file is not read, and a call whose interaction would take the file past the
    /// cap fails with [`DocumentError::TooLarge`], the file left as it was.
    pub fn max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Stamps `recordedAt` from `clock` (a session's clock, or a fixed one in tests;
    /// default: the wall clock, advanced by tokio's).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Opens the cassette: in [`CassetteMode::Replay`] the file must exist; in
    /// [`CassetteMode::Auto`] it is read if it exists; in [`CassetteMode::Record`] a new,
    /// empty cassette is written over it at once.
    pub fn open(self) -> Result<Cassette, CassetteError> {
        let mut file = match self.mode {
            CassetteMode::Record => {
                let file = CassetteFile::new();
                file.write(&self.path, self.max_bytes)?;
                file
            }
            CassetteMode::Auto if !self.path.exists() => CassetteFile::new(),
            CassetteMode::Auto | CassetteMode::Replay => {
                CassetteFile::read(&self.path, self.max_bytes)?
            }
        };
        if self.sorted && self.mode == CassetteMode::Auto {
            file.interactions.sort_by_cached_key(request_text);
        }
        let keys: Vec<Value> = file
            .interactions
            .iter()
            .map(|interaction| {
                self.rules
                    .normalized(&Value::Object(interaction.request.clone()))
            })
            .collect();
        let used = vec![false; keys.len()];
        Ok(Cassette {
            shared: Arc::new(Shared {
                path: self.path,
                mode: self.mode,
                rules: self.rules,
                pacing: self.pacing,
                max_bytes: self.max_bytes,
                keep_failures: self.keep_failures,
                sorted: self.sorted,
                clock: self
                    .clock
                    .unwrap_or_else(|| Arc::new(TokioClock::from_wall_clock())),
                state: Mutex::new(State { file, keys, used }),
            }),
        })
    }
}

impl Cassette {
    /// Opens the cassette at `path` in `mode` with the default options (strict matching,
    /// replayed answers at once, a 64 MiB cap); see [`CassetteBuilder::open`].
    pub fn open(path: impl Into<PathBuf>, mode: CassetteMode) -> Result<Cassette, CassetteError> {
        Cassette::builder(path, mode).open()
    }

    /// A cassette at `path` in `mode`, with options to set before [`CassetteBuilder::open`].
    pub fn builder(path: impl Into<PathBuf>, mode: CassetteMode) -> CassetteBuilder {
        CassetteBuilder {
            path: path.into(),
            mode,
            rules: MatchRules::strict(),
            pacing: ChunkPacing::Immediate,
            max_bytes: DEFAULT_MAX_CASSETTE_BYTES,
            clock: None,
            keep_failures: false,
            sorted: false,
        }
    }

    /// Opens the cassette that goes with the wire log `wire_log` (see
    /// [`Cassette::path_beside`]) in `mode`, with the default options: how a session
    /// records or replays its out-of-band calls next to its wire log.
    pub fn beside(
        wire_log: impl AsRef<Path>,
        mode: CassetteMode,
    ) -> Result<Cassette, CassetteError> {
        Cassette::open(Cassette::path_beside(wire_log), mode)
    }

    /// The cassette file that goes with the wire log `wire_log`: `X.cassette.json` in the
    /// same folder for `X.wire.jsonl` (or `X.jsonl`, or `X.anything`).
    ///
    /// ```
    /// use std::path::Path;
    /// use reel_llm::Cassette;
    ///
    /// assert_eq!(
    ///     Cassette::path_beside("recordings/weather.wire.jsonl"),
    ///     Path::new("recordings/weather.cassette.json")
    /// );
    /// assert_eq!(Cassette::path_beside("run.jsonl"), Path::new("run.cassette.json"));
    /// ```
    pub fn path_beside(wire_log: impl AsRef<Path>) -> PathBuf {
        let wire_log = wire_log.as_ref();
        let name = wire_log
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name
            .strip_suffix(".wire.jsonl")
            .or_else(|| name.strip_suffix(".jsonl"))
            .map(str::to_owned)
            .or_else(|| {
                wire_log
                    .file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
            })
            .filter(|stem| !stem.is_empty())
            .unwrap_or_else(|| "session".to_owned());
        wire_log.with_file_name(format!("{stem}.cassette.json"))
    }

    /// This cassette as a session's interceptor (for
    /// `reel_actors::LiveSessionBuilder::llm_interceptor`).
    pub fn interceptor(&self) -> Arc<dyn LlmInterceptor> {
        Arc::new(self.clone())
    }

    /// The cassette file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The mode it was opened in.
    pub fn mode(&self) -> CassetteMode {
        self.shared.mode
    }

    /// The cassette as it is now (what the file holds).
    pub async fn snapshot(&self) -> CassetteFile {
        self.shared.state.lock().await.file.clone()
    }

    /// The interactions (0-based, in file order) that have not answered a call yet: after
    /// a replayed session, the calls it no longer makes.
    pub async fn unused(&self) -> Vec<usize> {
        let state = self.shared.state.lock().await;
        state
            .used
            .iter()
            .enumerate()
            .filter(|(_, used)| !**used)
            .map(|(index, _)| index)
            .collect()
    }

    /// A model answering as `model_id` from this cassette alone, with no live model behind
    /// it: for replaying a session offline. A call it would have to forward fails with
    /// [`CassetteError::NoLiveModel`].
    pub fn model(&self, model_id: impl Into<String>) -> Arc<dyn BaseLlm> {
        Arc::new(CassetteLlm {
            cassette: self.clone(),
            model_id: model_id.into(),
            live: None,
        })
    }
}

impl std::fmt::Debug for Cassette {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cassette")
            .field("path", &self.shared.path)
            .field("mode", &self.shared.mode)
            .finish_non_exhaustive()
    }
}

impl LlmInterceptor for Cassette {
    /// `llm`, with its calls going through this cassette.
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        Arc::new(CassetteLlm {
            cassette: self.clone(),
            model_id: llm.model_id().to_owned(),
            live: Some(llm),
        })
    }
}

/// A model whose calls go through a [`Cassette`] (see [`Cassette::wrap`] and
/// [`Cassette::model`]).
pub struct CassetteLlm {
    cassette: Cassette,
    model_id: String,
    live: Option<Arc<dyn BaseLlm>>,
}

impl std::fmt::Debug for CassetteLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CassetteLlm")
            .field("cassette", &self.cassette)
            .field("model_id", &self.model_id)
            .field("live", &self.live.is_some())
            .finish()
    }
}

impl BaseLlm for CassetteLlm {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let start = Instant::now();
        Box::pin(async move {
            let shared = &self.cassette.shared;
            let json = request_json(&request)?;
            let actual = Value::Object(json.clone());
            let key = shared.rules.normalized(&actual);
            if shared.mode != CassetteMode::Record
                && let Some((chunks, failure)) =
                    shared.recorded_answer(&request, &actual, &key).await?
            {
                let pacing = shared.pacing.check()?;
                let end = match failure {
                    None => ReplayEnd::Complete,
                    Some(message) => ReplayEnd::Fail {
                        delay_ns: 0,
                        error: Box::new(LlmError::Recorded { message }),
                    },
                };
                return Ok(replay_stream(start, chunks, end, pacing));
            }
            let Some(live) = self.live.clone() else {
                return Err(CassetteError::NoLiveModel {
                    path: shared.path.clone(),
                    model: request.model,
                }
                .into());
            };
            let recorded_at = Timestamp::from_epoch_ms(shared.clock.now_ms());
            let forward = Forward {
                shared: Arc::clone(shared),
                live,
                request,
                json,
                key,
                start,
                recorded_at,
            };
            let chunks = forward.run_to_completion().await?;
            Ok(replay_stream(
                Instant::now(),
                chunks,
                ReplayEnd::Complete,
                ChunkPacing::Immediate,
            ))
        })
    }
}

impl Shared {
    /// The next unused recorded answer to the request normalized as `key`: its chunks and,
    /// for a kept failure, the failure's message. `None` in auto mode when there is none;
    /// in replay mode that is an error naming the request.
    async fn recorded_answer(
        &self,
        request: &LlmRequest,
        actual: &Value,
        key: &Value,
    ) -> Result<Option<(Vec<RecordedChunk>, Option<String>)>, CassetteError> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let hit = (0..state.keys.len()).find(|&i| !state.used[i] && state.keys[i] == *key);
        if let Some(index) = hit {
            state.used[index] = true;
            let interaction = &state.file.interactions[index];
            return Ok(Some((
                interaction.response.clone(),
                interaction.failure.clone(),
            )));
        }
        if self.mode == CassetteMode::Auto {
            return Ok(None);
        }
        let recorded = state.keys.iter().filter(|k| *k == key).count();
        if recorded > 0 {
            return Err(CassetteError::Exhausted {
                path: self.path.clone(),
                model: request.model.clone(),
                prompt: prompt_summary(request),
                recorded,
            });
        }
        Err(CassetteError::Miss {
            path: self.path.clone(),
            model: request.model.clone(),
            prompt: prompt_summary(request),
            nearest: self.nearest(&state.file.interactions, request, actual),
        })
    }

    /// The first recorded request to the same model (else the first at all), and where the
    /// request differs from it.
    fn nearest(
        &self,
        interactions: &[Interaction],
        request: &LlmRequest,
        actual: &Value,
    ) -> Option<(usize, Box<super::RequestMismatch>)> {
        let same_model = interactions
            .iter()
            .position(|i| i.request.get("model").and_then(Value::as_str) == Some(&request.model));
        let index = same_model.or((!interactions.is_empty()).then_some(0))?;
        let recorded = Value::Object(interactions[index].request.clone());
        self.rules
            .compare(&recorded, actual)
            .err()
            .map(|mismatch| (index, mismatch))
    }

    /// Adds `interaction` (normalized as `key`, already used) — at the end, or at its place
    /// by request when the cassette is sorted — and saves the cassette; if saving fails (the
    /// size cap, the disk) the interaction is taken back out.
    async fn append(&self, interaction: Interaction, key: Value) -> Result<(), CassetteError> {
        let mut state = self.state.lock().await;
        let at = if self.sorted {
            let text = request_text(&interaction);
            state
                .file
                .interactions
                .partition_point(|recorded| request_text(recorded) <= text)
        } else {
            state.file.interactions.len()
        };
        state.file.interactions.insert(at, interaction);
        let file = state.file.clone();
        let path = self.path.clone();
        let max_bytes = self.max_bytes;
        let saved = blocking(move || file.write(&path, max_bytes).map(|_| ()))
            .await
            .unwrap_or_else(|reason| {
                Err(DocumentError::Io {
                    kind: DocumentKind::Cassette,
                    path: self.path.clone(),
                    source: std::io::Error::other(format!("the writing task {reason}")),
                })
            });
        match saved {
            Ok(()) => {
                state.keys.insert(at, key);
                state.used.insert(at, true);
                Ok(())
            }
            Err(error) => {
                state.file.interactions.remove(at);
                tracing::warn!(%error, "a cassette interaction could not be saved");
                Err(error.into())
            }
        }
    }
}

/// What a sorted cassette orders its interactions by: the request as JSON text (a
/// `serde_json::Map` serializes in its keys' order, so equal requests give equal text;
/// serializing a map of JSON values cannot fail, hence the empty default is never taken).
fn request_text(interaction: &Interaction) -> String {
    serde_json::to_string(&interaction.request).unwrap_or_default()
}

/// One call forwarded to the live model, to be collected and recorded.
struct Forward {
    shared: Arc<Shared>,
    live: Arc<dyn BaseLlm>,
    request: LlmRequest,
    json: Map<String, Value>,
    key: Value,
    start: Instant,
    recorded_at: Timestamp,
}

impl Forward {
    /// Runs the forward in its own task when there is a runtime, so that a caller who
    /// gives up waiting does not cut the recording short.
    async fn run_to_completion(self) -> Result<Vec<RecordedChunk>, LlmError> {
        let path = self.shared.path.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.spawn(self.run()).await.unwrap_or_else(|error| {
                let reason = if error.is_panic() {
                    "panicked"
                } else {
                    "was cancelled"
                };
                Err(CassetteError::Forward {
                    path,
                    reason: reason.to_owned(),
                }
                .into())
            }),
            Err(_) => self.run().await,
        }
    }

    /// Collects the live answer whole, timing each chunk, then records it. A live failure
    /// is returned as it is; it is recorded (the chunks before it and its message) only
    /// when the cassette keeps failures.
    async fn run(self) -> Result<Vec<RecordedChunk>, LlmError> {
        let (mut chunks, mut usage, mut last) = (Vec::new(), None, self.start);
        let failure = match self.live.generate_stream(self.request).await {
            Err(error) => Some(error),
            Ok(mut stream) => loop {
                match stream.next().await {
                    None => break None,
                    Some(Err(error)) => break Some(error),
                    Some(Ok(chunk)) => {
                        let now = Instant::now();
                        chunks.push(record_chunk(&chunk, now.saturating_duration_since(last)));
                        last = now;
                        if let Some(reported) = chunk.usage {
                            usage = Some(record_usage(reported));
                        }
                    }
                }
            },
        };
        let failure = match failure {
            Some(error) if !self.shared.keep_failures => return Err(error),
            kept => kept,
        };
        let interaction = Interaction {
            request: self.json,
            response: chunks.clone(),
            recorded_at: self.recorded_at,
            usage,
            duration_ns: Some(nanos(last.saturating_duration_since(self.start))),
            failure: failure.as_ref().map(ToString::to_string),
        };
        self.shared.append(interaction, self.key).await?;
        match failure {
            Some(error) => Err(error),
            None => Ok(chunks),
        }
    }
}

/// Runs `work` on the blocking pool when there is a runtime, else here. `Err` says what
/// happened to a task that did not finish.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, &'static str> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime.spawn_blocking(work).await.map_err(|error| {
            if error.is_panic() {
                "panicked"
            } else {
                "was cancelled"
            }
        }),
        Err(_) => Ok(work()),
    }
}
