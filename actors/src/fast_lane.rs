//! The FastLane: audio, text deltas, transcripts, voice activity and phase changes, with
//! synchronous callbacks.
//!
//! It never waits on anything: not on the control lane, not on I/O. Each event runs its
//! callback, goes to the playback queue and the jitter buffer if it is audio (with its
//! frame's session time, the buffer's arrival time), and is published to the application's
//! event streams. An interruption clears both; the phase leaving `ModelSpeaking` (its turn
//! complete, a tool call) marks the jitter buffer's stream finished, so it plays out
//! without counting an underrun at the end.
//!
//! The work is [`FastWork`]'s, whoever runs it: the lane's instance on its task, or the
//! router on its own when the lane is idle (decision 0086: it claims the lane's inbox and
//! handles the items in place, in order; a panic there fails the lane's instance, which is
//! restarted and reports the item as its own failure).

use std::sync::Arc;

use ractor::ActorProcessingErr;
use reel_protocol::{SessionEvent, SessionPhase};

use crate::audio::SharedJitterBuffer;
use crate::callbacks::{AudioFn, FastCallbacks};
use crate::child::Child;
use crate::events::{EventHub, Lane, LiveEvent};
use crate::inbox::Failed;
use crate::lane_reports::{drained, report_failed};
use crate::mailbox::{
    Consumer, ConsumerMailbox, EventItem, FailedItem, Instance, LANE_CHUNK, NoMsg,
};
use crate::peers::Peers;
use crate::playback::PlaybackQueue;

/// What the fast lane is given at start (and again at each restart).
#[derive(Clone)]
pub struct FastLaneArgs {
    /// What it does with each item.
    pub work: FastWork,
    /// The session's actors (the lane drains [`Peers::lanes`]' `fast`).
    pub peers: Arc<Peers>,
}

/// What the fast lane does with an item, whoever handles it (its instance, or the router
/// in place): the application's callbacks, the playback queues, the event streams.
#[derive(Clone)]
pub struct FastWork {
    /// The application's callbacks.
    callbacks: Arc<FastCallbacks>,
    /// `callbacks.on_audio`, held here too: an audio frame, most of a voice session's,
    /// then calls it without reading the callbacks' own allocation (at thousands of
    /// sessions, a cache miss a frame).
    on_audio: Option<AudioFn>,
    /// Where audio waits to be played, if the application asked for it.
    playback: Option<PlaybackQueue>,
    /// The adaptive playback buffer, if the application asked for it.
    jitter: Option<SharedJitterBuffer>,
}

/// The fast lane: what one instance holds.
pub struct FastLane {
    args: FastLaneArgs,
}

impl Consumer for FastLane {
    type Item = EventItem;
    type Label = FailedItem;
    type Msg = NoMsg;
    type Args = FastLaneArgs;

    const CHILD: Child = Child::FastLane;
    const CHUNK: usize = LANE_CHUNK;

    fn mailbox(args: &FastLaneArgs) -> &ConsumerMailbox<Self> {
        &args.peers.lanes.fast
    }

    async fn start(
        args: FastLaneArgs,
        failed: Option<Failed<FailedItem>>,
        _myself: &Instance<NoMsg>,
    ) -> Result<Self, ActorProcessingErr> {
        if let Some(failed) = failed {
            report_failed(&args.peers, Child::FastLane, &failed);
        }
        Ok(FastLane { args })
    }

    async fn handle(&mut self, item: EventItem) -> Result<(), ActorProcessingErr> {
        let peers = &self.args.peers;
        self.args.work.handle(peers, &peers.hub, item);
        Ok(())
    }
}

impl FastWork {
    /// The work of `callbacks`, with audio pushed to `playback` and `jitter` if given.
    pub fn new(
        callbacks: FastCallbacks,
        playback: Option<PlaybackQueue>,
        jitter: Option<SharedJitterBuffer>,
    ) -> Self {
        FastWork {
            on_audio: callbacks.on_audio.clone(),
            callbacks: Arc::new(callbacks),
            playback,
            jitter,
        }
    }

    /// Handles one item of the lane's inbox: an event's callback, queues and publication
    /// on `hub` (the session's, which a caller that routes in place keeps at hand rather
    /// than read through `peers`), or the end of the events (the lane reports itself
    /// drained).
    pub fn handle(&self, peers: &Peers, hub: &EventHub, item: EventItem) {
        match item {
            EventItem::Event { event, ts_ms } => {
                self.handle_event(&event, ts_ms);
                hub.publish_with(Lane::Fast, || LiveEvent::Session(event));
            }
            EventItem::End => drained(peers, Child::FastLane),
        }
    }

    fn handle_event(&self, event: &SessionEvent, ts_ms: u64) {
        let callbacks = &self.callbacks;
        match event {
            SessionEvent::AudioData(audio) => {
                if let Some(playback) = &self.playback {
                    playback.push(audio.clone());
                }
                if let Some(jitter) = &self.jitter {
                    jitter.push(audio.clone(), ts_ms);
                }
                if let Some(on_audio) = &self.on_audio {
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
            SessionEvent::PhaseChanged { from, to } => {
                // The model stopped talking (its turn is complete, or it calls a tool):
                // no more audio is coming for this stream. The lane never sees
                // `TurnComplete` itself, only the phase change it causes.
                if *from == SessionPhase::ModelSpeaking
                    && let Some(jitter) = &self.jitter
                {
                    jitter.finish();
                }
                if let Some(on_phase) = &callbacks.on_phase {
                    on_phase(*to);
                }
            }
            SessionEvent::Interrupted => {
                if let Some(playback) = &self.playback {
                    playback.interrupt();
                }
                if let Some(jitter) = &self.jitter {
                    jitter.interrupt();
                }
            }

            _ => {}
        }
    }
}
