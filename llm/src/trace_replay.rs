//! [`TraceReplayLlm`]: a model that answers from a recorded agent trace, by index (seed
//! 001's TraceReplayingAgent): call N gets the trace's Response N. No network, no cost,
//! the same answer every run.
//!
//! A recorded answer comes back as it was streamed (its `chunks`, or its text as one
//! chunk), the last chunk carrying the finish reason and usage; a recorded failure comes
//! back as a failure. By default answers come at once; [`TraceReplayLlm::paced`] gives the
//! first chunk after the recorded time to first token and ends the stream at the recorded
//! duration (tokio time, so tests run it paused).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use reel_recorder::trace::{AgentTrace, TokenUsage, TraceError, TraceResponse, read_trace};

use super::{BaseLlm, LlmChunk, LlmError, LlmInterceptor, LlmStream, LlmUsage};

/// Why a replayed call has no recorded answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceReplayError {
    /// More calls than the trace recorded. Calls are numbered from 0, as the trace's
    /// entries are.
    #[error("call {call} of trace `{trace}`: {}", recorded_calls(*requests))]
    Exhausted {
        /// The trace's name.
        trace: String,
        /// The call, 0-based.
        call: u64,
        /// How many calls (requests) the trace holds.
        requests: u64,
    },
    /// The call was recorded, but its answer was not (the recording stopped first).
    #[error("call {call} of trace `{trace}`: the trace records the request but no response")]
    NoResponse {
        /// The trace's name.
        trace: String,
        /// The call, 0-based.
        call: u64,
    },
    /// The recorded answer cannot be played back.
    #[error("call {call} of trace `{trace}`: the recorded response is malformed: {problem}")]
    Malformed {
        /// The trace's name.
        trace: String,
        /// The call, 0-based.
        call: u64,
        /// What is wrong with it.
        problem: MalformedResponse,
    },
    /// The recorded call failed, and so does its replay.
    #[error("call {call} of trace `{trace}` failed when recorded: {error}")]
    RecordedFailure {
        /// The trace's name.
        trace: String,
        /// The call, 0-based.
        call: u64,
        /// The recorded error message.
        error: String,
    },
}

/// `the trace records only calls 0 to 3`, or that it records none.
fn recorded_calls(requests: u64) -> String {
    match requests {
        0 => "the trace records no calls".to_owned(),
        n => format!("the trace records only calls 0 to {}", n - 1),
    }
}

/// What makes a recorded response unplayable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MalformedResponse {
    /// Its `chunks` do not add up to its `text`.
    #[error("its chunks do not add up to its text")]
    ChunksDisagreeWithText,
    /// Its time to first token is longer than its duration.
    #[error("its time to first token is longer than its duration")]
    FirstTokenAfterEnd,
}

/// A replayed call fails as a model call does: with an [`LlmError::Decode`] naming the
/// trace and the call, and saying why.
impl From<TraceReplayError> for LlmError {
    fn from(error: TraceReplayError) -> Self {
        let (trace, call) = match &error {
            TraceReplayError::Exhausted { trace, call, .. }
            | TraceReplayError::NoResponse { trace, call }
            | TraceReplayError::Malformed { trace, call, .. }
            | TraceReplayError::RecordedFailure { trace, call, .. } => (trace.clone(), *call),
        };
        LlmError::Decode {
            context: format!("replaying call {call} of trace `{trace}`"),
            reason: error.to_string(),
        }
    }
}

/// A recorded answer, ready to be played back.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedCall {
    /// The call, 0-based.
    pub index: u64,
    /// The chunks, in order; the last carries the finish reason and usage.
    pub chunks: Vec<LlmChunk>,
    /// Recorded time from the request to the first chunk.
    pub time_to_first_token: Duration,
    /// Recorded time from the request to the end of the answer.
    pub duration: Duration,
}

#[derive(Debug)]
struct Shared {
    trace: AgentTrace,
    model_id: String,
    next: AtomicU64,
}

/// Answers call N with the trace's Response N: its chunks, finish reason and usage, or its recorded failure.
///
/// Clones share the call counter, so a session whose models are all handed through it (it
/// is also an [`LlmInterceptor`]) replays its calls in recorded order whichever model
/// makes them.
///
/// ```
/// use reel_llm::{BaseLlm, LlmRequest, TraceReplayLlm};
/// use reel_recorder::trace::parse_trace;
///
/// let trace = parse_trace(r#"{"version":"1.0","traceName":"t","capturedAt":"2026-01-07T10:30:00Z",
///   "agentName":"a","entries":[
///     {"type":"Request","index":0,"timestamp":"2026-01-07T10:30:00Z","prompt":"Hi"},
///     {"type":"Response","index":0,"timestamp":"2026-01-07T10:30:00.500Z","text":"Hello!"}],
///   "performance":{"totalDurationMs":500,"totalPromptTokens":0,"totalCompletionTokens":0}}"#, "t")?;
/// let llm = TraceReplayLlm::new(trace);
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// assert_eq!(llm.generate(LlmRequest::new("m").user("Hi")).await.unwrap().text, "Hello!");
/// assert!(llm.generate(LlmRequest::new("m").user("again")).await.is_err());
/// # });
/// # Ok::<(), reel_recorder::trace::TraceError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TraceReplayLlm {
    shared: Arc<Shared>,
    paced: bool,
}

impl TraceReplayLlm {
    /// Replays `trace`, answering as its model (else its agent).
    pub fn new(trace: AgentTrace) -> Self {
        let model_id = trace
            .model
            .clone()
            .unwrap_or_else(|| trace.agent_name.clone());
        TraceReplayLlm {
            shared: Arc::new(Shared {
                trace,
                model_id,
                next: AtomicU64::new(0),
            }),
            paced: false,
        }
    }

    /// Reads and checks the trace at `path` (see [`read_trace`]) and replays it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        read_trace(path).map(TraceReplayLlm::new)
    }

    /// Paces the answers as recorded: the first chunk after the recorded time to first
    /// token, the end of the stream at the recorded duration. Clones keep the setting.
    pub fn paced(mut self) -> Self {
        self.paced = true;
        self
    }

    /// The trace being replayed.
    pub fn trace(&self) -> &AgentTrace {
        &self.shared.trace
    }

    /// How many calls were made so far.
    pub fn calls(&self) -> u64 {
        self.shared.next.load(Ordering::SeqCst)
    }

    /// Takes the next call's recorded answer.
    pub fn next_call(&self) -> Result<ReplayedCall, TraceReplayError> {
        let call = self.shared.next.fetch_add(1, Ordering::SeqCst);
        let trace = &self.shared.trace;
        let turns = trace.turns();
        let name = || trace.trace_name.clone();
        let turn = usize::try_from(call)
            .ok()
            .and_then(|i| turns.get(i))
            .ok_or_else(|| TraceReplayError::Exhausted {
                trace: name(),
                call,
                requests: turns.len() as u64,
            })?;
        let response = turn.response.ok_or_else(|| TraceReplayError::NoResponse {
            trace: name(),
            call,
        })?;
        if let Some(error) = &response.error {
            return Err(TraceReplayError::RecordedFailure {
                trace: name(),
                call,
                error: error.clone(),
            });
        }
        let malformed = |problem| TraceReplayError::Malformed {
            trace: name(),
            call,
            problem,
        };
        let chunks = chunks_of(response)
            .ok_or_else(|| malformed(MalformedResponse::ChunksDisagreeWithText))?;
        let duration = response.duration_ms.unwrap_or(0);
        let first = response.time_to_first_token_ms.unwrap_or(duration);
        if first > duration && response.duration_ms.is_some() {
            return Err(malformed(MalformedResponse::FirstTokenAfterEnd));
        }
        Ok(ReplayedCall {
            index: call,
            chunks,
            time_to_first_token: Duration::from_millis(first),
            duration: Duration::from_millis(duration.max(first)),
        })
    }
}

/// The chunks to play: the recorded pieces, or the text as one, the last carrying the
/// recorded tool calls; `None` if the pieces do not add up to the text.
fn chunks_of(response: &TraceResponse) -> Option<Vec<LlmChunk>> {
    let text = response.text.clone().unwrap_or_default();
    let mut chunks: Vec<LlmChunk> = if response.chunks.is_empty() {
        vec![LlmChunk::text(text)]
    } else {
        if response.chunks.concat() != text {
            return None;
        }
        response.chunks.iter().map(LlmChunk::text).collect()
    };
    if let Some(last) = chunks.last_mut() {
        last.finish_reason = response.finish_reason.clone();
        last.usage = response.token_usage.map(llm_usage);
        last.function_calls = response
            .tool_calls
            .iter()
            .map(|call| reel_protocol::FunctionCall {
                id: call.id.clone(),
                name: Some(call.name.clone()),
                args: (!call.arguments.is_null()).then(|| call.arguments.clone().into()),
                ..reel_protocol::FunctionCall::default()
            })
            .collect();
    }
    Some(chunks)
}

fn llm_usage(usage: TokenUsage) -> LlmUsage {
    let prompt = usage.prompt.unwrap_or(0);
    let response = usage.completion.unwrap_or(0);
    LlmUsage {
        prompt_tokens: prompt,
        response_tokens: response,
        total_tokens: usage.total.unwrap_or(prompt + response),
    }
}

impl BaseLlm for TraceReplayLlm {
    fn model_id(&self) -> &str {
        &self.shared.model_id
    }

    fn generate_stream(
        &self,
        _request: super::LlmRequest,
    ) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let call = self.next_call();
        let paced = self.paced;
        Box::pin(async move {
            let call = call?;
            if !paced {
                let chunks = call.chunks.into_iter().map(Ok);
                return Ok(Box::pin(stream::iter(chunks)) as LlmStream);
            }
            let first = call.time_to_first_token;
            let rest = call.duration.saturating_sub(first);
            // The first chunk after the time to first token, the end at the duration.
            let head = stream::iter(call.chunks)
                .enumerate()
                .then(move |(i, chunk)| async move {
                    if i == 0 {
                        tokio::time::sleep(first).await;
                    }
                    Ok(chunk)
                });
            let tail = stream::once(async move { tokio::time::sleep(rest).await })
                .filter_map(|()| async { None::<Result<LlmChunk, LlmError>> });
            let stream = head.chain(tail);
            Ok(Box::pin(stream) as LlmStream)
        })
    }
}

/// Every model handed out replays this trace, in call order.
impl LlmInterceptor for TraceReplayLlm {
    fn wrap(&self, _llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        Arc::new(self.clone())
    }
}
