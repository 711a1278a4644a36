//! Out-of-band model calls: the [`BaseLlm`] trait and the seam that records and replays them.
//!
//! A live session also calls models outside its WebSocket: an LLM extractor reading the
//! transcript, a background agent, a text pipeline. Those calls go through [`BaseLlm`]
//! (generate, or generate as a stream of chunks). A session that records or replays wraps
//! every model it hands out with its [`LlmInterceptor`], so the calls are taped alongside
//! the wire log and come back, byte for byte, when the session replays offline.
//!
//! The session tree (`reel-actors`) hands models out through [`LlmInterceptor`]; everything
//! else here works without a session: `GeminiLlm` (the `gemini` feature, on by default) is
//! the Gemini REST API over hyper and rustls, [`Cassette`] keeps every call of a session in one file, [`RecordingLlm`] and
//! [`ReplayLlm`] write and read per-call tapes, [`TraceRecordingLlm`] and [`TraceReplayLlm`]
//! agent traces. With the `testing` feature, [`testing::gemini_standin`] is a scripted
//! Gemini REST server on loopback for tests.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agent_scope;
mod cassette;
mod collect;
mod error;
#[cfg(feature = "gemini")]
pub mod gemini;
mod matching;
mod normalize;
mod pacing;
mod recorded;
mod request;
mod tape_recording;
mod tape_replay;
mod trace_record;
mod trace_replay;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use futures_util::future::BoxFuture;

pub use agent_scope::{current_agent, in_agent};
pub use cassette::{Cassette, CassetteBuilder, CassetteLlm, CassetteMode};
pub use collect::collect_stream;
pub use error::{CassetteError, LlmError, TapeError, UnknownCassetteMode};
#[cfg(feature = "gemini")]
pub use gemini::GeminiLlm;
pub use matching::{MatchRules, RequestMismatch};
pub use normalize::Normalizer;
pub use pacing::ChunkPacing;
/// Paths into a request's JSON: the one path syntax of [`reel_protocol::json`].
pub use reel_protocol::json::{
    JsonPath, PathError as JsonPathError, PathProblem as JsonPathProblem,
};
pub use request::{LlmChunk, LlmRequest, LlmResponse, LlmUsage};
pub use tape_recording::{RecordingLlm, TapeSink};
pub use tape_replay::ReplayLlm;
pub use trace_record::{TraceRecorder, TraceRecordingLlm};
pub use trace_replay::{MalformedResponse, ReplayedCall, TraceReplayError, TraceReplayLlm};

/// The chunks of a streamed answer, in order. The stream ends after the last chunk; an
/// error item ends it early.
pub type LlmStream = Pin<Box<dyn Stream<Item = Result<LlmChunk, LlmError>> + Send>>;

/// A model reachable by request and response: the Gemini REST API, a recorded tape, a
/// cassette, a test double.
///
/// Implement [`BaseLlm::generate_stream`]; [`BaseLlm::generate`] collects the stream by
/// default, and an implementation with a cheaper one-shot call may override it.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream};
///
/// /// Answers every request with its last user text, shouted.
/// struct Echo;
///
/// impl BaseLlm for Echo {
///     fn model_id(&self) -> &str {
///         "echo"
///     }
///
///     fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
///         let text = request.last_user_text().unwrap_or_default().to_uppercase();
///         Box::pin(async move {
///             let chunk = LlmChunk::text(text);
///             Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
///         })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = Echo.generate(LlmRequest::new("echo").user("hello")).await?;
/// assert_eq!(answer.text, "HELLO");
/// # Ok::<_, LlmError>(()) }).unwrap();
/// ```
pub trait BaseLlm: Send + Sync + 'static {
    /// The model this answers as (for example `gemini-2.5-flash`).
    fn model_id(&self) -> &str;

    /// Starts a call and returns its chunks as they come.
    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>>;

    /// Runs a call to the end and returns the whole answer.
    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let stream = self.generate_stream(request).await?;
            collect_stream(stream).await
        })
    }
}

/// Decides how a session's out-of-band calls run: passed through, recorded, or replayed.
///
/// A session built with an interceptor hands every model it gives out (to extractors, to
/// tools through their context, to the application through its handle) through
/// [`LlmInterceptor::wrap`] first.
pub trait LlmInterceptor: Send + Sync + 'static {
    /// The model to use in place of `llm`.
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm>;
}

/// An interceptor that changes nothing: calls go to the model as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassThrough;

impl LlmInterceptor for PassThrough {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        llm
    }
}
