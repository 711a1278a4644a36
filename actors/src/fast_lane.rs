//! The FastLane: audio, text deltas, transcripts, voice activity and phase changes, with
//! synchronous callbacks.
//!
//! It never waits on anything: not on the control lane, not on I/O. Each event runs its
//! callback, goes to the playback queue if it is audio, and is published to the
//! application's event streams. An interruption clears the playback queue.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_protocol::SessionEvent;

use crate::callbacks::FastCallbacks;
use crate::events::{Lane, LiveEvent};
use crate::lane_feed::{EventBatch, LaneMessage, LaneProgress};
use crate::peers::Peers;
use crate::playback::PlaybackQueue;
use crate::supervisor::SupervisorMsg;

/// Messages to the fast lane.
#[derive(Debug)]
pub enum FastMsg {
    /// Events of one frame, in order.
    Events(Arc<EventBatch>),
    /// No more events: report drained to the supervisor.
    Shutdown,
}

impl LaneMessage for FastMsg {
    fn events(batch: Arc<EventBatch>) -> Self {
        FastMsg::Events(batch)
    }
    fn shutdown() -> Self {
        FastMsg::Shutdown
    }
}

/// What the fast lane is given at start (and again at each restart).
pub struct FastLaneArgs {
    /// The application's callbacks.
    pub callbacks: Arc<FastCallbacks>,
    /// Where audio waits to be played, if the application asked for it.
    pub playback: Option<PlaybackQueue>,
    /// Progress (survives restarts).
    pub progress: Arc<LaneProgress>,
    /// The session's actors.
    pub peers: Arc<Peers>,
}

/// The fast lane's state.
pub struct FastLaneState {
    args: FastLaneArgs,
    /// The event a failed predecessor was handling: skipped, not retried.
    failed: Option<u64>,
}

/// The FastLane actor.
pub struct FastLane;

impl Actor for FastLane {
    type Msg = FastMsg;
    type State = FastLaneState;
    type Arguments = FastLaneArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<FastMsg>,
        args: FastLaneArgs,
    ) -> Result<FastLaneState, ActorProcessingErr> {
        let failed = args.progress.failed();
        Ok(FastLaneState { args, failed })
    }

    async fn handle(
        &self,
        _myself: ActorRef<FastMsg>,
        message: FastMsg,
        state: &mut FastLaneState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            FastMsg::Events(batch) => {
                for (seq, event) in batch.numbered() {
                    if !state.args.progress.should_handle(seq, state.failed) {
                        continue;
                    }
                    state.args.progress.begin(seq);
                    state.handle_event(event);
                    state
                        .args
                        .peers
                        .hub
                        .publish_with(Lane::Fast, || LiveEvent::Session(event.clone()));
                    state.args.progress.end(seq);
                }
            }
            FastMsg::Shutdown => {
                state
                    .args
                    .peers
                    .supervisor
                    .cast(SupervisorMsg::Drained("fast_lane"));
            }
        }
        Ok(())
    }
}

impl FastLaneState {
    fn handle_event(&self, event: &SessionEvent) {
        let callbacks = &self.args.callbacks;
        match event {
            SessionEvent::AudioData(audio) => {
                if let Some(playback) = &self.args.playback {
                    playback.push(audio.clone());
                }
                if let Some(on_audio) = &callbacks.on_audio {
                    on_audio(audio);
                }
            }
            SessionEvent::TextDelta(text) => {
                if let Some(on_text) = &callbacks.on_text {
                    on_text(text);
                }
            }
            SessionEvent::TextComplete(text) => {
                if let Some(on_text_complete) = &callbacks.on_text_complete {
                    on_text_complete(text);
                }
            }
            SessionEvent::InputTranscription { text, is_final } => {
                if let Some(on_input) = &callbacks.on_input_transcript {
                    on_input(text, *is_final);
                }
            }
            SessionEvent::OutputTranscription { text, is_final } => {
                if let Some(on_output) = &callbacks.on_output_transcript {
                    on_output(text, *is_final);
                }
            }
            SessionEvent::Thought(text) => {
                if let Some(on_thought) = &callbacks.on_thought {
                    on_thought(text);
                }
            }
            SessionEvent::VoiceActivityStart => {
                if let Some(on_vad_start) = &callbacks.on_vad_start {
                    on_vad_start(());
                }
            }
            SessionEvent::VoiceActivityEnd => {
                if let Some(on_vad_end) = &callbacks.on_vad_end {
                    on_vad_end(());
                }
            }
            SessionEvent::PhaseChanged { to, .. } => {
                if let Some(on_phase) = &callbacks.on_phase {
                    on_phase(*to);
                }
            }
            SessionEvent::Interrupted => {
                if let Some(playback) = &self.args.playback {
                    playback.interrupt();
                }
            }
            _ => {}
        }
    }
}
