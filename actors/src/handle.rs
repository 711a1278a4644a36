//! [`LiveHandle`]: the application's handle on a running session.

use std::sync::Arc;

use bytes::Bytes;
use reel_protocol::{Content, FunctionResponse, SessionPhase};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::audio::SharedJitterBuffer;
use crate::events::{EventHub, EventStream};
use crate::llm::{BaseLlm, LlmInterceptor};
use crate::playback::PlaybackQueue;
use crate::session::SessionStartError;
use crate::state::State;
use crate::supervisor::SessionEnd;
use crate::telemetry::{TelemetryShared, TelemetrySnapshot};
use crate::transcript::TranscriptTurn;
use crate::writer::{SessionClosed, SessionWriter};

/// A running session. Cheap to clone; every clone controls the same session.
#[derive(Clone)]
pub struct LiveHandle {
    pub(crate) writer: SessionWriter,
    pub(crate) hub: Arc<EventHub>,
    pub(crate) state: State,
    pub(crate) phase: watch::Receiver<SessionPhase>,
    pub(crate) resume_handle: watch::Receiver<Option<String>>,
    pub(crate) telemetry: Arc<TelemetryShared>,
    pub(crate) ended: watch::Receiver<Option<SessionEnd>>,
    pub(crate) playback: Option<PlaybackQueue>,
    pub(crate) jitter: Option<SharedJitterBuffer>,
    pub(crate) interceptor: Arc<dyn LlmInterceptor>,
    pub(crate) transcript: watch::Receiver<Arc<[TranscriptTurn]>>,
    pub(crate) peers: Arc<crate::peers::Peers>,
    pub(crate) record_queue: Option<Arc<crate::recorder::RecordQueue>>,
    /// What the session's [`ToolGate`](crate::govern::ToolGate) shows the application.
    pub(crate) gate_view: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// The figures of every bounded buffer of a session's tree (see [`crate::inbox`]): what
/// waits now, the most that ever waited, and what was dropped or accepted past a bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferStats {
    /// Frames and steps waiting for the router.
    pub router: crate::inbox::InboxStats,
    /// Events waiting for the fast lane.
    pub fast_lane: crate::inbox::InboxStats,
    /// Events and finished tool calls waiting for the control lane.
    pub control_lane: crate::inbox::InboxStats,
    /// Events waiting for telemetry.
    pub telemetry: crate::inbox::InboxStats,
    /// Writes waiting for the state store.
    pub state_store: crate::inbox::InboxStats,
    /// Wire-log entries waiting for the recorder, if the session records.
    pub recorder: Option<crate::inbox::InboxStats>,
}

impl std::fmt::Debug for LiveHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveHandle")
            .field("phase", &*self.phase.borrow())
            .field("ended", &*self.ended.borrow())
            .finish_non_exhaustive()
    }
}

impl LiveHandle {
    /// What the session's [`ToolGate`](crate::govern::ToolGate) shows the application
    /// ([`ToolGate::view`](crate::govern::ToolGate::view)); `None` for a session without a
    /// gate. `reel-fluent`'s `GovernedHandle` reads a governed flow's monitor through it.
    pub fn gate_view(&self) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        self.gate_view.clone()
    }

    /// A writer to send with (the same sends as the handle; for callbacks and tasks).
    pub fn writer(&self) -> SessionWriter {
        self.writer.clone()
    }

    /// A user text turn (the model answers).
    pub fn send_text(&self, text: impl Into<String>) -> Result<(), SessionClosed> {
        self.writer.send_text(text)
    }

    /// Input audio: PCM16LE mono 16 kHz. With client VAD
    /// (`LiveSessionBuilder::client_vad`) it goes through the detector: only speech is
    /// sent, framed by `activityStart` and `activityEnd` (see [`crate::audio::ActivityGate`]).
    pub fn send_audio(&self, pcm: impl Into<Bytes>) -> Result<(), SessionClosed> {
        self.writer.send_audio(pcm)
    }

    /// A video frame (JPEG).
    pub fn send_video(&self, jpeg: impl Into<Bytes>) -> Result<(), SessionClosed> {
        self.writer.send_video(jpeg)
    }

    /// Turns of content; `turn_complete` asks the model to answer.
    pub fn send_client_content(
        &self,
        turns: Vec<Content>,
        turn_complete: bool,
    ) -> Result<(), SessionClosed> {
        self.writer.send_client_content(turns, turn_complete)
    }

    /// Answers to function calls, when the application handles them itself.
    pub fn send_tool_response(
        &self,
        responses: Vec<FunctionResponse>,
    ) -> Result<(), SessionClosed> {
        self.writer.send_tool_response(responses)
    }

    /// The user started speaking (only with server VAD off).
    pub fn activity_start(&self) -> Result<(), SessionClosed> {
        self.writer.activity_start()
    }

    /// The user stopped speaking (only with server VAD off).
    pub fn activity_end(&self) -> Result<(), SessionClosed> {
        self.writer.activity_end()
    }

    /// The audio stream paused.
    pub fn audio_stream_end(&self) -> Result<(), SessionClosed> {
        self.writer.audio_stream_end()
    }

    /// Replaces the system instruction.
    pub fn update_instruction(&self, instruction: impl Into<String>) -> Result<(), SessionClosed> {
        self.writer.update_instruction(instruction)
    }

    /// Every event published from now on. Subscribe before the events you want flow (see
    /// `LiveSessionBuilder::subscribe` to subscribe before the session starts).
    pub fn events(&self) -> EventStream {
        self.hub.subscribe()
    }

    /// The session state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The last value extractor `name` wrote (its state key), as `T`. It is there once the
    /// turn pipeline that ran the extractor is done (the control lane publishes turn
    /// complete after it), and may lag while the next one runs.
    pub fn extracted<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.state.get(name)
    }

    /// The finished turns the session keeps (see [`crate::transcript`]), oldest first, as
    /// of the last turn complete.
    pub fn transcript(&self) -> Arc<[TranscriptTurn]> {
        Arc::clone(&self.transcript.borrow())
    }

    /// `llm` as the session hands models out: through the session's
    /// [`LlmInterceptor`], if it has one (so the application's
    /// out-of-band calls are recorded and replayed with the session), else unchanged.
    pub fn llm(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        self.interceptor.wrap(llm)
    }

    /// The session phase now.
    pub fn phase(&self) -> SessionPhase {
        *self.phase.borrow()
    }

    /// Waits until the phase is `phase` (or the session ends). Returns whether it got there.
    pub async fn wait_for_phase(&self, phase: SessionPhase) -> bool {
        let mut watch = self.phase.clone();
        let mut ended = self.ended.clone();
        loop {
            if *watch.borrow_and_update() == phase {
                return true;
            }
            if ended.borrow_and_update().is_some() {
                return false;
            }
            tokio::select! {
                changed = watch.changed() => if changed.is_err() {
                    // The router is gone (it failed, or the tree stopped): the supervisor
                    // is about to announce why; wait for that rather than guess.
                    let _ = ended.wait_for(Option::is_some).await;
                    return false;
                },
                changed = ended.changed() => if changed.is_err() { return false },
            }
        }
    }

    /// Waits until the session is live (setup complete); if it ends first, the
    /// [`SessionStartError::NotLive`] saying why.
    pub async fn wait_until_live(&self) -> Result<(), SessionStartError> {
        if self.wait_for_phase(SessionPhase::Active).await {
            if !self.peers.pending_context.gates_connect() {
                return Ok(());
            }
            // The phases steer: live once the initial phase's context is queued or sent.
            let mut ended = self.ended.clone();
            // `biased`: when both are ready, the same one wins every run (as above, live is
            // looked at before the end), so a replay and the fault simulator's second run
            // take the same branch; an unbiased `select!` draws one at random.
            tokio::select! {
                biased;
                () = self.peers.pending_context.wait_entered() => return Ok(()),
                _ = ended.wait_for(Option::is_some) => {}
            }
        }
        let reason = self
            .ended()
            .map(|end| end.reason)
            .unwrap_or_else(|| "the session stopped".to_owned());
        Err(SessionStartError::NotLive { reason })
    }

    /// The figures of the tree's bounded buffers, e.g. to check that memory stays flat
    /// under overload.
    pub fn buffers(&self) -> BufferStats {
        let peers = &self.peers;
        BufferStats {
            router: peers.router.stats(),
            fast_lane: peers.lanes.fast.stats(),
            control_lane: peers.lanes.control.stats(),
            telemetry: peers.lanes.telemetry.stats(),
            state_store: peers.store.stats(),
            recorder: self.record_queue.as_ref().map(|q| q.inbox().stats()),
        }
    }

    /// The children the session's supervisor runs now, in start order: each child whose
    /// slot points at a running instance — for the children on tasks of their own, an
    /// instance whose task has not ended; for the transport, an actor linked to the
    /// supervisor (as ractor knows its children). The supervisor itself is not listed. An idle
    /// session without an `on_usage` callback or a recorder runs five (decision 0075); a
    /// child between a failure and its restart is missing.
    pub fn actors(&self) -> Vec<crate::child::Child> {
        use crate::child::Child;
        let peers = &self.peers;
        let Some(supervisor) = peers.supervisor.get() else {
            return Vec::new();
        };
        let running = |child: Child| match child {
            Child::StateStore => peers.store.actor.get().is_some_and(|i| i.is_running()),
            Child::Telemetry => peers
                .lanes
                .telemetry
                .actor
                .get()
                .is_some_and(|i| i.is_running()),
            Child::FastLane => peers.lanes.fast.actor.get().is_some_and(|i| i.is_running()),
            Child::ControlLane => peers
                .lanes
                .control
                .actor
                .get()
                .is_some_and(|i| i.is_running()),
            Child::Recorder => peers
                .recorder
                .as_ref()
                .and_then(|recorder| recorder.actor.get())
                .is_some_and(|i| i.is_running()),
            Child::Router => peers.router.actor.get().is_some_and(|i| i.is_running()),
            Child::Transport => peers.transport.get().is_some_and(|transport| {
                supervisor
                    .get_children()
                    .iter()
                    .any(|cell| cell.get_id() == transport.get_id())
            }),
        };
        Child::ALL.into_iter().filter(|c| running(*c)).collect()
    }

    /// Counters, latencies and token usage now.
    pub fn telemetry(&self) -> TelemetrySnapshot {
        let mut snapshot = self.telemetry.snapshot();
        snapshot.events_lagged = self.hub.lagged();
        snapshot.tool_input_missed = self.peers.tool_input.missed();
        snapshot.jitter = self.jitter.as_ref().map(SharedJitterBuffer::stats);
        snapshot
    }

    /// The latest session resumption handle the server gave.
    pub fn resume_handle(&self) -> Option<String> {
        self.resume_handle.borrow().clone()
    }

    /// Model audio waiting to be played, if the session was built with a playback buffer.
    pub fn playback(&self) -> Option<&PlaybackQueue> {
        self.playback.as_ref()
    }

    /// The adaptive playback buffer, if the session was built with one
    /// (`LiveSessionBuilder::jitter_buffer`): the application's player pulls a frame from
    /// it at its own cadence. Cleared when the user barges in; its figures are in
    /// [`LiveHandle::telemetry`].
    pub fn jitter_buffer(&self) -> Option<&SharedJitterBuffer> {
        self.jitter.as_ref()
    }

    /// Whether the client-side voice activity detector hears the user speaking now (`None`
    /// without client VAD, `LiveSessionBuilder::client_vad`).
    pub fn user_speaking(&self) -> Option<bool> {
        self.writer.user_speaking()
    }

    /// How the session ended, if it has.
    pub fn ended(&self) -> Option<SessionEnd> {
        self.ended.borrow().clone()
    }

    /// Closes the session cleanly and waits until it has ended.
    pub async fn disconnect(&self) -> SessionEnd {
        // If the transport is gone the session is ending anyway.
        let _ = self.writer.send(reel_protocol::SessionCommand::Disconnect);
        self.join().await
    }

    /// Waits until the session ends (the server closed it, a disconnect, or a failure).
    pub async fn join(&self) -> SessionEnd {
        let mut ended = self.ended.clone();
        loop {
            if let Some(end) = ended.borrow_and_update().clone() {
                return end;
            }
            if ended.changed().await.is_err() {
                return SessionEnd {
                    reason: "the session supervisor stopped".to_owned(),
                    failed: true,
                };
            }
        }
    }
}
