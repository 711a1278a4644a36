//! [`TraceRecorder`]: records a model's calls into an agent trace (a wrapper, so neither
//! the model nor the code calling it changes), saved on demand or when the last holder
//! lets go.
//!
//! Each call adds a Request (the last user text as `prompt`, the model, the whole request
//! as `body`) when it starts, and a Response when its stream ends: the text, the streamed
//! pieces when there were several, finish reason, usage, duration and time to first token
//! (to the first chunk with text), or the error the call failed with. The function calls an
//! answer makes are its `toolCalls`; when a later request of the trace answers them (its
//! `functionResponse` parts, matched by id, else by name), each gets its `result` and its
//! `durationMs` (from the answer to that request), so a tool-using agent's trace shows each
//! model call and each tool call. Times come from the
//! session's [`Clock`](reel_recorder::clock::Clock), so under paused tokio time they are exact.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures_util::Stream;
use futures_util::future::BoxFuture;
use reel_protocol::FunctionResponse;
use reel_recorder::trace::{
    AgentTrace, Timestamp, TokenUsage, TraceEntry, TraceError, TraceRequest, TraceResponse,
    TraceToolCall, write_trace,
};

use super::{BaseLlm, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream, LlmUsage};
use reel_recorder::clock::SharedClock;

/// What every recording model of one recorder writes into.
struct Recording {
    trace: Mutex<AgentTrace>,
    clock: SharedClock,
    save_on_drop: Mutex<Option<PathBuf>>,
}

impl Recording {
    fn trace(&self) -> MutexGuard<'_, AgentTrace> {
        // A panic while the lock was held leaves a trace that is still whole: every change
        // is one push.
        self.trace
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds the request of a new call; returns its index and start time.
    fn start(&self, request: &LlmRequest) -> (u64, u64) {
        let now = self.clock.now_ms();
        let mut trace = self.trace();
        answer_tool_calls(&mut trace, request, now);
        let index = trace
            .entries
            .iter()
            .filter(|e| matches!(e, TraceEntry::Request(_)))
            .count() as u64;
        let model =
            (trace.model.as_deref() != Some(request.model.as_str())).then(|| request.model.clone());
        trace.entries.push(TraceEntry::Request(TraceRequest {
            index,
            timestamp: Timestamp::from_epoch_ms(now),
            prompt: request.last_user_text(),
            model,
            agent: super::current_agent(),
            body: serde_json::to_value(request).ok(),
            ..TraceRequest::default()
        }));
        (index, now)
    }

    fn finish(&self, mut response: TraceResponse, started_ms: u64) {
        let now = self.clock.now_ms();
        response.timestamp = Timestamp::from_epoch_ms(now);
        response.duration_ms = Some(now.saturating_sub(started_ms));
        self.trace().entries.push(TraceEntry::Response(response));
    }

    fn save_path(&self) -> MutexGuard<'_, Option<PathBuf>> {
        self.save_on_drop
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn snapshot(&self) -> AgentTrace {
        let mut trace = self.trace().clone();
        trace.update_performance();
        trace
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let path = self
            .save_on_drop
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(path) = path
            && let Err(error) = write_trace(&path, &self.snapshot())
        {
            tracing::warn!(%error, "the agent trace could not be saved");
        }
    }
}

/// Gives the recorded tool calls that `request`'s function responses answer their result
/// and duration: each response answers the latest unanswered call with its id (else, when
/// it has none, with its name).
fn answer_tool_calls(trace: &mut AgentTrace, request: &LlmRequest, now_ms: u64) {
    let responses: Vec<&FunctionResponse> = request
        .contents
        .iter()
        .flat_map(|content| content.parts.iter().flatten())
        .filter_map(|part| part.function_response.as_ref())
        .collect();
    for response in responses {
        let calls = trace
            .entries
            .iter_mut()
            .rev()
            .filter_map(|entry| match entry {
                TraceEntry::Response(answer) => Some(answer.tool_calls.iter_mut()),
                TraceEntry::Request(_) => None,
            })
            .flatten();
        let mut open = calls.filter(|call| call.result.is_none());
        let call = match response.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => open.find(|call| call.id.as_deref() == Some(id)),
            None => open.find(|call| Some(call.name.as_str()) == response.name.as_deref()),
        };
        if let Some(call) = call {
            call.result = Some(response.response.clone().unwrap_or_default());
            call.duration_ms = call
                .timestamp
                .map(|asked| now_ms.saturating_sub(asked.epoch_ms()));
        }
    }
}

/// Records every call of the models it wraps into one [`AgentTrace`].
///
/// Clones share the trace. It is an [`LlmInterceptor`]: a session built with it records
/// the calls of every model it hands out.
///
/// ```
/// use std::sync::Arc;
/// use reel_recorder::clock::TokioClock;
/// use reel_llm::{BaseLlm, LlmRequest, TraceRecorder, TraceReplayLlm};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let recorder = TraceRecorder::new("hello", "greeter", Arc::new(TokioClock::anchored_at(0)));
/// let replay = TraceReplayLlm::new(recorder.trace()); // nothing recorded: every call fails
/// let model = recorder.wrap(Arc::new(replay));
/// assert!(model.generate(LlmRequest::new("m").user("Hi")).await.is_err());
/// let trace = recorder.trace();
/// assert_eq!(trace.entries.len(), 2);
/// assert_eq!(trace.turns()[0].request.prompt.as_deref(), Some("Hi"));
/// assert!(trace.turns()[0].response.unwrap().error.is_some());
/// # });
/// ```
#[derive(Clone)]
pub struct TraceRecorder {
    recording: Arc<Recording>,
}

impl std::fmt::Debug for TraceRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceRecorder")
            .field("entries", &self.recording.trace().entries.len())
            .field("save_on_drop", &*self.recording.save_path())
            .finish()
    }
}

impl TraceRecorder {
    /// A recorder of a trace called `trace_name`, of the agent `agent_name`, starting now.
    pub fn new(
        trace_name: impl Into<String>,
        agent_name: impl Into<String>,
        clock: SharedClock,
    ) -> Self {
        let captured_at = Timestamp::from_epoch_ms(clock.now_ms());
        TraceRecorder {
            recording: Arc::new(Recording {
                trace: Mutex::new(AgentTrace::new(trace_name, agent_name, captured_at)),
                clock,
                save_on_drop: Mutex::new(None),
            }),
        }
    }

    /// Also saves the trace to `path` when the recorder, its clones, the models it wrapped
    /// and their calls are all gone (a failure to save is logged). Clones share the
    /// setting; the last path given wins.
    pub fn save_on_drop(self, path: impl Into<PathBuf>) -> Self {
        *self.recording.save_path() = Some(path.into());
        self
    }

    /// `llm`, recording its calls.
    pub fn wrap(&self, llm: Arc<dyn BaseLlm>) -> TraceRecordingLlm {
        TraceRecordingLlm {
            inner: llm,
            recording: self.recording.clone(),
        }
    }

    /// The trace so far, its performance block computed.
    pub fn trace(&self) -> AgentTrace {
        self.recording.snapshot()
    }

    /// Writes the trace so far to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        write_trace(path, &self.trace())
    }
}

impl LlmInterceptor for TraceRecorder {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        Arc::new(TraceRecorder::wrap(self, llm))
    }
}

/// A model whose calls a [`TraceRecorder`] records.
pub struct TraceRecordingLlm {
    inner: Arc<dyn BaseLlm>,
    recording: Arc<Recording>,
}

impl std::fmt::Debug for TraceRecordingLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceRecordingLlm")
            .field("model", &self.inner.model_id())
            .finish_non_exhaustive()
    }
}

impl BaseLlm for TraceRecordingLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let (index, started_ms) = self.recording.start(&request);
            match self.inner.generate_stream(request).await {
                Ok(stream) => Ok(Box::pin(RecordingStream {
                    inner: stream,
                    recording: self.recording.clone(),
                    index,
                    started_ms,
                    answer: Answer::default(),
                    done: false,
                }) as LlmStream),
                Err(error) => {
                    let response = TraceResponse {
                        index,
                        error: Some(error.to_string()),
                        ..TraceResponse::default()
                    };
                    self.recording.finish(response, started_ms);
                    Err(error)
                }
            }
        })
    }
}

/// What a call's chunks said so far.
#[derive(Debug, Default)]
struct Answer {
    chunks: Vec<String>,
    first_text_ms: Option<u64>,
    finish_reason: Option<String>,
    usage: Option<LlmUsage>,
    tool_calls: Vec<TraceToolCall>,
}

/// A call's chunks on their way to the caller, recorded as they pass.
struct RecordingStream {
    inner: LlmStream,
    recording: Arc<Recording>,
    index: u64,
    started_ms: u64,
    answer: Answer,
    done: bool,
}

impl RecordingStream {
    fn observe(&mut self, chunk: &LlmChunk) {
        if !chunk.text.is_empty() {
            self.answer
                .first_text_ms
                .get_or_insert_with(|| self.recording.clock.now_ms());
            self.answer.chunks.push(chunk.text.clone());
        }
        if chunk.finish_reason.is_some() {
            self.answer.finish_reason = chunk.finish_reason.clone();
        }
        if chunk.usage.is_some() {
            self.answer.usage = chunk.usage;
        }
        if !chunk.function_calls.is_empty() {
            let asked = Timestamp::from_epoch_ms(self.recording.clock.now_ms());
            self.answer
                .tool_calls
                .extend(chunk.function_calls.iter().map(|call| {
                    TraceToolCall {
                        name: call.name.clone().unwrap_or_default(),
                        id: call.id.clone(),
                        arguments: call
                            .args
                            .clone()
                            .map(serde_json::Value::from)
                            .unwrap_or_default(),
                        result: None,
                        timestamp: Some(asked),
                        duration_ms: None,
                        cancelled: false,
                    }
                }));
        }
    }

    /// Records the response: complete, failed with `error`, or cut short by the caller.
    fn finish(&mut self, error: Option<String>, incomplete: bool) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let answer = std::mem::take(&mut self.answer);
        let text = answer.chunks.concat();
        let response = TraceResponse {
            index: self.index,
            text: (!text.is_empty()).then_some(text),
            time_to_first_token_ms: answer
                .first_text_ms
                .map(|ms| ms.saturating_sub(self.started_ms)),
            token_usage: answer.usage.map(|u| TokenUsage {
                prompt: Some(u.prompt_tokens),
                completion: Some(u.response_tokens),
                total: Some(u.total_tokens),
                ..TokenUsage::default()
            }),
            finish_reason: answer.finish_reason,
            tool_calls: answer.tool_calls,
            chunks: if answer.chunks.len() > 1 {
                answer.chunks
            } else {
                Vec::new()
            },
            error,
            incomplete,
            ..TraceResponse::default()
        };
        self.recording.finish(response, self.started_ms);
    }
}

impl Stream for RecordingStream {
    type Item = Result<LlmChunk, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        match &next {
            Poll::Ready(Some(Ok(chunk))) => self.observe(chunk),
            Poll::Ready(Some(Err(error))) => self.finish(Some(error.to_string()), false),
            Poll::Ready(None) => self.finish(None, false),
            Poll::Pending => {}
        }
        next
    }
}

impl Drop for RecordingStream {
    fn drop(&mut self) {
        // The caller stopped reading before the end: what it read is recorded as such.
        self.finish(None, true);
    }
}
