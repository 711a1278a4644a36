//! Application callbacks, by lane.
//!
//! Fast-lane callbacks are plain `Fn`s run synchronously in the fast lane: they must return
//! quickly and never wait (push audio into a queue, update a UI). Control-lane callbacks are
//! async and run in one of two modes: [`CallbackMode::Blocking`] (the control lane awaits
//! it before handling the next event, so it sees events in order) or
//! [`CallbackMode::Concurrent`] (spawned; the lane moves on at once).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reel_protocol::{FunctionCall, FunctionResponse, SessionPhase, UsageMetadata};
use serde_json::Value;

use crate::persistence::SessionSnapshot;
use crate::state::State;
use crate::writer::SessionWriter;

/// How a control-lane callback runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallbackMode {
    /// Awaited before the next event is handled (the default).
    #[default]
    Blocking,
    /// Spawned as its own task; events keep flowing while it runs.
    Concurrent,
}

type SyncFn<A> = Arc<dyn Fn(A) + Send + Sync>;
/// A callback taking model audio.
pub type AudioFn = Arc<dyn Fn(&Bytes) + Send + Sync>;
/// A callback taking text.
pub type TextFn = Arc<dyn Fn(&str) + Send + Sync>;
/// A callback taking a transcription and whether it is final.
pub type TranscriptFn = Arc<dyn Fn(&str, bool) + Send + Sync>;
/// A callback taking token usage.
pub type UsageFn = Arc<dyn Fn(&UsageMetadata) + Send + Sync>;
/// `on_tool_call`: the calls and the state; `Some(responses)` answers them.
pub type ToolCallFn = Arc<dyn Fn(Vec<FunctionCall>, State) -> ToolCallFuture + Send + Sync>;

/// Callbacks run by the fast lane, synchronously.
///
/// Each must return quickly and never block: push into a queue, update a meter. While the
/// lane is idle the router runs them on its own task (decision 0086), so a callback that
/// blocks holds the routing of the session's other events too (the control lane's among
/// them) and a runtime worker. Anything slow belongs in a control-lane callback.
#[derive(Clone, Default)]
pub struct FastCallbacks {
    /// Model audio: PCM16LE mono 24 kHz.
    pub on_audio: Option<AudioFn>,
    /// A piece of answer text.
    pub on_text: Option<TextFn>,
    /// The whole answer text of a turn.
    pub on_text_complete: Option<TextFn>,
    /// Transcription of the user: text and whether it is final.
    pub on_input_transcript: Option<TranscriptFn>,
    /// Transcription of the model: text and whether it is final.
    pub on_output_transcript: Option<TranscriptFn>,
    /// A thought summary.
    pub on_thought: Option<TextFn>,
    /// The user started speaking.
    pub on_vad_start: Option<SyncFn<()>>,
    /// The user stopped speaking.
    pub on_vad_end: Option<SyncFn<()>>,
    /// The session phase changed.
    pub on_phase: Option<SyncFn<SessionPhase>>,
}

impl fmt::Debug for FastCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FastCallbacks")
            .field("on_audio", &self.on_audio.is_some())
            .field("on_text", &self.on_text.is_some())
            .field("on_text_complete", &self.on_text_complete.is_some())
            .field("on_input_transcript", &self.on_input_transcript.is_some())
            .field("on_output_transcript", &self.on_output_transcript.is_some())
            .field("on_thought", &self.on_thought.is_some())
            .field("on_vad_start", &self.on_vad_start.is_some())
            .field("on_vad_end", &self.on_vad_end.is_some())
            .field("on_phase", &self.on_phase.is_some())
            .finish()
    }
}

/// An async callback of the control lane and the mode it runs in.
pub struct AsyncCallback<A> {
    f: Arc<dyn Fn(A) -> BoxFuture<'static, ()> + Send + Sync>,
    mode: CallbackMode,
}

impl<A> Clone for AsyncCallback<A> {
    fn clone(&self) -> Self {
        AsyncCallback {
            f: Arc::clone(&self.f),
            mode: self.mode,
        }
    }
}

impl<A: Send + 'static> AsyncCallback<A> {
    /// A callback from an async closure, in `mode`.
    pub fn new<F, Fut>(mode: CallbackMode, f: F) -> Self
    where
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        AsyncCallback {
            f: Arc::new(move |arg| Box::pin(f(arg))),
            mode,
        }
    }

    /// Its mode.
    pub fn mode(&self) -> CallbackMode {
        self.mode
    }

    /// Runs it and waits for it, whatever its mode (for callbacks that must finish first).
    pub(crate) async fn run_blocking(&self, arg: A) {
        (self.f)(arg).await;
    }

    /// Runs it: awaited when blocking, spawned when concurrent.
    pub(crate) async fn run(&self, arg: A) {
        let future = (self.f)(arg);
        match self.mode {
            CallbackMode::Blocking => future.await,
            CallbackMode::Concurrent => {
                tokio::spawn(future);
            }
        }
    }
}

/// What `on_tool_call` returns: `Some(responses)` to answer the calls itself, `None` to let
/// the dispatcher handle them.
pub type ToolCallFuture = BoxFuture<'static, Option<Vec<FunctionResponse>>>;

/// Callbacks run by the control lane.
#[derive(Clone, Default)]
pub struct ControlCallbacks {
    /// The session is live (setup complete). Gets a writer to send with.
    pub on_connected: Option<AsyncCallback<SessionWriter>>,
    /// The connection ended: `Some(reason)` for an error close, `None` for a clean one.
    pub on_disconnected: Option<AsyncCallback<Option<String>>>,
    /// The server will close the connection in this long.
    pub on_go_away: Option<AsyncCallback<Duration>>,
    /// A non-fatal error.
    pub on_error: Option<AsyncCallback<String>>,
    /// The user barged in. Always blocking: it must finish before audio resumes.
    pub on_interrupted: Option<AsyncCallback<()>>,
    /// The model asked for function calls. Always blocking: its result is the response.
    pub on_tool_call: Option<ToolCallFn>,
    /// The server cancelled these calls.
    pub on_tool_cancelled: Option<AsyncCallback<Vec<String>>>,
    /// The model's turn is over (after the turn pipeline: phase transitions, state).
    pub on_turn_complete: Option<AsyncCallback<()>>,
    /// The model finished generating (before audio playback ends).
    pub on_generation_complete: Option<AsyncCallback<()>>,
    /// An extractor produced a value: its name and the value (already in the state).
    pub on_extracted: Option<AsyncCallback<(String, Value)>>,
    /// An extractor failed: its name and the error's message. Without this callback a
    /// failure is logged as a `tracing` warning.
    pub on_extraction_error: Option<AsyncCallback<(String, String)>>,
    /// The session was restored from a persisted snapshot (see [`crate::persistence`]):
    /// the snapshot and the state, already restored. Runs once, when the session is live,
    /// before `on_connected`. Make it [`CallbackMode::Blocking`] (the usual choice) so that
    /// it finishes before anything else is handled.
    pub on_resumed: Option<AsyncCallback<(SessionSnapshot, State)>>,
}

impl fmt::Debug for ControlCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControlCallbacks")
            .field("on_connected", &self.on_connected.is_some())
            .field("on_disconnected", &self.on_disconnected.is_some())
            .field("on_go_away", &self.on_go_away.is_some())
            .field("on_error", &self.on_error.is_some())
            .field("on_interrupted", &self.on_interrupted.is_some())
            .field("on_tool_call", &self.on_tool_call.is_some())
            .field("on_tool_cancelled", &self.on_tool_cancelled.is_some())
            .field("on_turn_complete", &self.on_turn_complete.is_some())
            .field(
                "on_generation_complete",
                &self.on_generation_complete.is_some(),
            )
            .field("on_extracted", &self.on_extracted.is_some())
            .field("on_extraction_error", &self.on_extraction_error.is_some())
            .field("on_resumed", &self.on_resumed.is_some())
            .finish()
    }
}

/// `before_tool_response`: the responses about to be sent and the state; returns the
/// responses that go on the wire instead.
pub type ToolResponseFn = Arc<
    dyn Fn(Vec<FunctionResponse>, State) -> BoxFuture<'static, Vec<FunctionResponse>> + Send + Sync,
>;
/// `on_turn_boundary`: the state and the runtime's writer, at the turn boundary.
pub type TurnBoundaryFn = Arc<dyn Fn(State, SessionWriter) -> BoxFuture<'static, ()> + Send + Sync>;
/// `instruction_template` and `instruction_amendment`: text computed from the state.
pub type InstructionFn = Arc<dyn Fn(&State) -> Option<String> + Send + Sync>;

/// Hooks of the control lane that shape what the runtime sends: tool responses, context
/// at the turn boundary, and the system instruction. All run in the control lane, always
/// blocking (no concurrent variant), so their effects are ordered like the events and a
/// replay produces the same frames.
///
/// Where they run in the turn pipeline is described in the control lane's module
/// (`actors/src/control_lane/mod.rs`, and `docs/architecture.md`). The
/// instruction hooks, at each turn complete, after the extractors, the phase transitions,
/// the watchers and the temporal patterns:
///
/// - [`instruction_template`](Self::instruction_template): `Some(text)` replaces the
///   whole system instruction (the phase's too); `None` leaves it to the phases and the
///   amendment.
/// - [`instruction_amendment`](Self::instruction_amendment): on turns without a phase
///   transition, the current phase's instruction (or, without one, the session's) and
///   the amendment, separated by a blank line; `None` means the base instruction alone.
///
/// When both are set, the template wins: the amendment is consulted only on turns where
/// the template returns `None`. Either way an instruction update goes out only when its
/// text differs from the instruction last sent (the setup's, a phase's, or a hook's).
#[derive(Clone, Default)]
pub struct Interceptors {
    /// Runs on every batch of tool responses (the dispatcher's, `on_tool_call`'s, the
    /// running acknowledgements and background results) just before it is sent; what it
    /// returns is sent instead, as one frame (nothing if it returns no response).
    pub before_tool_response: Option<ToolResponseFn>,
    /// Runs at each turn complete after the instruction step and before
    /// `on_turn_complete`, with the runtime's writer: frames it sends (context stuffing)
    /// go out before the turn complete is published, and are the runtime's.
    pub on_turn_boundary: Option<TurnBoundaryFn>,
    /// Computes a full replacement of the system instruction at each turn complete.
    pub instruction_template: Option<InstructionFn>,
    /// Computes text appended to the current phase's instruction on turns without a phase
    /// transition.
    pub instruction_amendment: Option<InstructionFn>,
}

impl fmt::Debug for Interceptors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interceptors")
            .field("before_tool_response", &self.before_tool_response.is_some())
            .field("on_turn_boundary", &self.on_turn_boundary.is_some())
            .field("instruction_template", &self.instruction_template.is_some())
            .field(
                "instruction_amendment",
                &self.instruction_amendment.is_some(),
            )
            .finish()
    }
}

/// Callbacks run by the telemetry actor, synchronously.
#[derive(Clone, Default)]
pub struct TelemetryCallbacks {
    /// Token usage reported by the server.
    pub on_usage: Option<UsageFn>,
}

impl fmt::Debug for TelemetryCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryCallbacks")
            .field("on_usage", &self.on_usage.is_some())
            .finish()
    }
}
