//! [`RecordingLlm`]: wraps a model and writes one tape per call.
//!
//! The wrapped stream is passed through unchanged: the same chunks, in the same order, at
//! the same time, and the same error. Each chunk's delay is measured with tokio's clock
//! (since the previous chunk; the first since the call started), so a test under
//! `tokio::time::pause` records exact delays. What happens when a call does not simply run
//! to its end is decided in `docs/decisions/0006-out-of-band-call-tapes.md`:
//!
//! - the call fails (before or during the stream): the tape is written with the chunks so
//!   far and `end: {"kind": "error", …}`, and the error goes to the caller unchanged;
//! - the consumer drops the stream early: the rest of the answer is read in a background
//!   task (still timed) and the tape is written whole;
//! - the rest cannot be read (no runtime to read it on, the runtime stops, the call is
//!   cancelled before the model answered): the tape is written with what there is and
//!   `end: {"kind": "abandoned", "reason": …}`, never passed off as complete.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt};
use reel_recorder::llm_tape::{LlmTape, TapeEnd, TapeMeta, Timestamp, write_tape};
use tokio::sync::watch;
use tokio::time::Instant;

use super::recorded::{nanos, record_chunk, request_json};
use super::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream, TapeError};
use reel_recorder::clock::{SharedClock, TokioClock};

/// Where a [`RecordingLlm`] writes its tapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TapeSink {
    /// One call, to this file (its label is the file's stem). A second call is refused with
    /// [`TapeError::AlreadyRecorded`] before it reaches the model.
    File(PathBuf),
    /// One file per call in `dir`, numbered in the order the calls start:
    /// `{label}-001.json`, `{label}-002.json`, … (each tape labelled with its file's stem).
    Folder {
        /// The folder (created when missing).
        dir: PathBuf,
        /// The name the files start with.
        label: String,
    },
}

impl TapeSink {
    /// One file per call in `dir`, named `{label}-001.json`, `{label}-002.json`, ….
    pub fn folder(dir: impl Into<PathBuf>, label: impl Into<String>) -> Self {
        TapeSink::Folder {
            dir: dir.into(),
            label: label.into(),
        }
    }
}

/// A [`BaseLlm`] that passes every call to the model it wraps and writes each one as a
/// tape.
///
/// Tapes are written off the async threads when a call ends; [`RecordingLlm::settled`]
/// waits until every call so far is on disk. A tape that cannot be written does not fail
/// the call (the caller got its answer): it is logged and kept for
/// [`RecordingLlm::take_failures`].
///
/// ```no_run
/// use std::sync::Arc;
/// use reel_llm::{BaseLlm, LlmRequest, RecordingLlm, TapeSink};
///
/// # async fn demo(live: Arc<dyn BaseLlm>) -> Result<(), reel_llm::LlmError> {
/// let model = RecordingLlm::new(live, TapeSink::folder("tests/tapes", "extractor"))
///     .comment("the weather extractor, first turn");
/// let answer = model.generate(LlmRequest::new("gemini-2.5-flash").user("Paris?")).await?;
/// model.settled().await; // tests/tapes/extractor-001.json is written
/// # Ok(()) }
/// ```
pub struct RecordingLlm {
    inner: Arc<dyn BaseLlm>,
    sink: TapeSink,
    sdk: String,
    comment: Option<String>,
    clock: SharedClock,
    state: Arc<State>,
}

/// What the calls of one recorder share.
struct State {
    /// Calls started so far (numbers the tapes).
    calls: Mutex<u64>,
    /// Calls whose tape is not written yet.
    pending: watch::Sender<usize>,
    /// Tapes written, in the order they were written.
    written: Mutex<Vec<PathBuf>>,
    /// Tapes that could not be written.
    failures: Mutex<Vec<TapeError>>,
}

impl RecordingLlm {
    /// Records every call to `inner` into `sink`. Tapes say they were recorded by
    /// `reel <version>`, at the wall-clock time (advanced by tokio's clock).
    pub fn new(inner: Arc<dyn BaseLlm>, sink: TapeSink) -> Self {
        RecordingLlm {
            inner,
            sink,
            sdk: concat!("reel ", env!("CARGO_PKG_VERSION")).to_owned(),
            comment: None,
            clock: Arc::new(TokioClock::from_wall_clock()),
            state: Arc::new(State {
                calls: Mutex::new(0),
                pending: watch::Sender::new(0),
                written: Mutex::new(Vec::new()),
                failures: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Sets `meta.sdk` (what recorded the tapes).
    pub fn sdk(mut self, sdk: impl Into<String>) -> Self {
        self.sdk = sdk.into();
        self
    }

    /// Sets `meta.comment` on every tape.
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// Stamps `meta.recordedAt` from `clock` (a session's clock, or a fixed one in tests).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Waits until the tape of every call started so far is written (or failed to be).
    pub async fn settled(&self) {
        let mut pending = self.state.pending.subscribe();
        // The sender lives in `self.state`, so the channel cannot close while we wait.
        let _ = pending.wait_for(|count| *count == 0).await;
    }

    /// The tapes written so far, in the order they were written.
    pub fn written(&self) -> Vec<PathBuf> {
        lock(&self.state.written).clone()
    }

    /// The tapes that could not be written since the last call, oldest first.
    pub fn take_failures(&self) -> Vec<TapeError> {
        std::mem::take(&mut *lock(&self.state.failures))
    }

    /// The next tape's file and label; refuses a second call to a single-file sink.
    fn next_tape(&self) -> Result<(PathBuf, String), TapeError> {
        let number = {
            let mut calls = lock(&self.state.calls);
            *calls += 1;
            *calls
        };
        match &self.sink {
            TapeSink::File(path) if number > 1 => {
                Err(TapeError::AlreadyRecorded { path: path.clone() })
            }
            TapeSink::File(path) => {
                let label = path
                    .file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok((path.clone(), label))
            }
            TapeSink::Folder { dir, label } => {
                let label = format!("{label}-{number:03}");
                Ok((dir.join(format!("{label}.json")), label))
            }
        }
    }
}

impl std::fmt::Debug for RecordingLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingLlm")
            .field("model", &self.inner.model_id())
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl BaseLlm for RecordingLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let start = Instant::now();
        let recorded_at = Timestamp::from_epoch_ms(self.clock.now_ms());
        Box::pin(async move {
            let json = request_json(&request)?;
            let (path, label) = self.next_tape()?;
            let tape = LlmTape {
                meta: TapeMeta {
                    label,
                    model: request.model.clone(),
                    recorded_at,
                    sdk: self.sdk.clone(),
                    comment: self.comment.clone(),
                },
                request: json,
                stream: Vec::new(),
                end: None,
            };
            let mut record = CallRecord::new(path, tape, start, Arc::clone(&self.state));
            match self.inner.generate_stream(request).await {
                Ok(stream) => {
                    record.if_dropped = "the runtime stopped while the answer was being read";
                    Ok(Box::pin(RecordingStream {
                        inner: Some(stream),
                        record: Some(record),
                    }) as LlmStream)
                }
                Err(error) => {
                    record.failed(&error);
                    record.finish();
                    Err(error)
                }
            }
        })
    }
}

/// The stream handed to the caller: the model's chunks, each noted on the tape on its way.
struct RecordingStream {
    inner: Option<LlmStream>,
    record: Option<CallRecord>,
}

impl Stream for RecordingStream {
    type Item = Result<LlmChunk, LlmError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let item = ready!(inner.as_mut().poll_next(cx));
        match &item {
            Some(Ok(chunk)) => {
                if let Some(record) = this.record.as_mut() {
                    record.chunk(chunk);
                }
                return Poll::Ready(item);
            }
            // An error ends the stream (the `LlmStream` contract).
            Some(Err(error)) => {
                if let Some(record) = this.record.as_mut() {
                    record.failed(error);
                }
            }
            None => {}
        }
        this.inner = None;
        if let Some(record) = this.record.take() {
            record.finish();
        }
        Poll::Ready(item)
    }
}

impl Drop for RecordingStream {
    fn drop(&mut self) {
        let (Some(inner), Some(mut record)) = (self.inner.take(), self.record.take()) else {
            return;
        };
        // The consumer stopped early: read the rest of the answer so the tape is whole.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                record.if_dropped = "the runtime stopped while the rest of the answer was being read after the consumer dropped the stream";
                runtime.spawn(drain(inner, record));
            }
            Err(_) => {
                record.if_dropped = "the consumer dropped the stream outside a tokio runtime, so the rest of the answer could not be read";
                drop(record);
            }
        }
    }
}

/// Reads what is left of an answer nobody consumes any more, timing it, then writes the
/// tape.
async fn drain(mut inner: LlmStream, mut record: CallRecord) {
    while let Some(item) = inner.next().await {
        match item {
            Ok(chunk) => record.chunk(&chunk),
            Err(error) => {
                record.failed(&error);
                break;
            }
        }
    }
    record.finish();
}

/// One call's tape while it is being recorded. Dropped before [`CallRecord::finish`], it
/// writes what it has, marked abandoned with `if_dropped` as the reason.
struct CallRecord {
    path: PathBuf,
    tape: Option<LlmTape>,
    last: Instant,
    if_dropped: &'static str,
    state: Arc<State>,
}

impl CallRecord {
    fn new(path: PathBuf, tape: LlmTape, start: Instant, state: Arc<State>) -> Self {
        state.pending.send_modify(|count| *count += 1);
        CallRecord {
            path,
            tape: Some(tape),
            last: start,
            if_dropped: "the call was cancelled before the model answered",
            state,
        }
    }

    /// Notes `chunk`, arrived now.
    fn chunk(&mut self, chunk: &LlmChunk) {
        let now = Instant::now();
        if let Some(tape) = self.tape.as_mut() {
            tape.stream.push(record_chunk(
                chunk,
                now.saturating_duration_since(self.last),
            ));
        }
        self.last = now;
    }

    /// Notes that the call failed now with `error`.
    fn failed(&mut self, error: &LlmError) {
        let delay_ns = nanos(Instant::now().saturating_duration_since(self.last));
        if let Some(tape) = self.tape.as_mut() {
            tape.end = Some(TapeEnd::Error {
                delay_ns,
                message: error.to_string(),
            });
        }
    }

    /// Writes the tape as it is, off the async threads when there is a runtime.
    fn finish(mut self) {
        self.if_dropped = "the runtime stopped before the tape was written";
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || {
                    let mut record = self;
                    record.write();
                });
            }
            Err(_) => self.write(),
        }
    }

    /// Writes the tape now (blocking), noting the outcome.
    fn write(&mut self) {
        let Some(tape) = self.tape.take() else {
            return;
        };
        match write_tape(&self.path, &tape) {
            Ok(_) => {
                tracing::debug!(path = %self.path.display(), chunks = tape.stream.len(), "tape written");
                lock(&self.state.written).push(self.path.clone());
            }
            Err(error) => {
                tracing::warn!(%error, "a tape could not be written");
                lock(&self.state.failures).push(TapeError::File(error));
            }
        }
    }
}

impl Drop for CallRecord {
    fn drop(&mut self) {
        if let Some(tape) = self.tape.as_mut() {
            tape.end = Some(TapeEnd::Abandoned {
                reason: self.if_dropped.to_owned(),
            });
            tracing::warn!(path = %self.path.display(), reason = self.if_dropped, "tape abandoned");
        }
        self.write();
        self.state.pending.send_modify(|count| *count -= 1);
    }
}

/// Locks `mutex`, recovering the data if a holder panicked (the lists stay usable).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
