//! [`SessionWriter`]: what callbacks, hooks and the application send with.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reel_protocol::{Content, FunctionResponse, SessionCommand};

use crate::audio::ActivityGate;
use crate::conversation::PendingContext;
use crate::events::lock;
use crate::mailbox::TransportMsg;
use crate::slot::{RouteCache, Slot};

pub use crate::mailbox::Origin;

/// The session has ended; nothing more can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended; nothing more can be sent")]
pub struct SessionClosed;

/// Sends commands to the session's transport. Cheap to clone.
///
/// Sends are queued in order and never wait for the network: while the connection is being
/// set up or re-established they wait in the transport, and go out in order once it is live.
///
/// The application's writer of a session with client VAD passes its audio through the
/// session's one [`ActivityGate`] (shared by every clone), so `activityStart`, the speech
/// and `activityEnd` go out in that order whoever sends.
#[derive(Debug, Clone)]
pub struct SessionWriter {
    transport: Arc<Slot<TransportMsg>>,
    /// The transport slot's route (its outbox), once set: a command reads nothing of the
    /// slot then.
    route: RouteCache<TransportMsg>,
    origin: Origin,
    gate: Option<Arc<Mutex<ActivityGate>>>,
    /// Context queued for this writer's next text, audio or video (deferred delivery).
    deferred: Option<Arc<PendingContext>>,
}

impl SessionWriter {
    pub(crate) fn new(transport: Arc<Slot<TransportMsg>>, origin: Origin) -> Self {
        SessionWriter {
            transport,
            route: RouteCache::default(),
            origin,
            gate: None,
            deferred: None,
        }
    }

    /// This writer's text, audio and video go out after the context `pending` holds (the
    /// seed's `DeferredWriter`).
    pub(crate) fn with_deferred(mut self, pending: Arc<PendingContext>) -> Self {
        self.deferred = Some(pending);
        self
    }

    /// Sends the deferred context that waits, if any, ahead of what this writer sends.
    fn flush_deferred(&self) {
        if let Some(pending) = &self.deferred {
            pending.flush(&self.transport);
        }
    }

    /// This writer's audio goes through `gate`.
    pub(crate) fn with_gate(mut self, gate: ActivityGate) -> Self {
        self.gate = Some(Arc::new(Mutex::new(gate)));
        self
    }

    /// Whether the client-side detector hears speech now (`None` without client VAD).
    pub fn user_speaking(&self) -> Option<bool> {
        self.gate.as_ref().map(|gate| lock(gate).is_speaking())
    }

    /// Who this writer sends as.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Sends any command.
    pub fn send(&self, command: SessionCommand) -> Result<(), SessionClosed> {
        if self
            .transport
            .cast_cached(&self.route, TransportMsg::Send(command, self.origin))
        {
            Ok(())
        } else {
            Err(SessionClosed)
        }
    }

    /// A user text turn (the model answers).
    pub fn send_text(&self, text: impl Into<String>) -> Result<(), SessionClosed> {
        self.flush_deferred();
        self.send(SessionCommand::SendText(text.into()))
    }

    /// Input audio: PCM16LE mono 16 kHz. With client VAD only speech is sent, between
    /// `activityStart` and `activityEnd` (see [`ActivityGate`]).
    pub fn send_audio(&self, pcm: impl Into<Bytes>) -> Result<(), SessionClosed> {
        let pcm = pcm.into();
        self.flush_deferred();
        let Some(gate) = &self.gate else {
            return self.send(SessionCommand::SendAudio(pcm));
        };
        // Held while sending, so two senders cannot interleave one's activity signals with
        // the other's audio. Sending only queues: nothing here waits.
        let mut gate = lock(gate);
        for command in gate.feed(&pcm) {
            self.send(command)?;
        }
        Ok(())
    }

    /// A video frame (JPEG).
    pub fn send_video(&self, jpeg: impl Into<Bytes>) -> Result<(), SessionClosed> {
        self.flush_deferred();
        self.send(SessionCommand::SendVideo(jpeg.into()))
    }

    /// Turns of content; `turn_complete` asks the model to answer.
    pub fn send_client_content(
        &self,
        turns: Vec<Content>,
        turn_complete: bool,
    ) -> Result<(), SessionClosed> {
        self.send(SessionCommand::SendClientContent {
            turns,
            turn_complete,
        })
    }

    /// Answers to function calls (when the application handles calls itself).
    pub fn send_tool_response(
        &self,
        responses: Vec<FunctionResponse>,
    ) -> Result<(), SessionClosed> {
        self.send(SessionCommand::SendToolResponse(responses))
    }

    /// The user started speaking (only with server VAD off).
    pub fn activity_start(&self) -> Result<(), SessionClosed> {
        self.send(SessionCommand::ActivityStart)
    }

    /// The user stopped speaking (only with server VAD off).
    pub fn activity_end(&self) -> Result<(), SessionClosed> {
        self.send(SessionCommand::ActivityEnd)
    }

    /// The audio stream paused.
    pub fn audio_stream_end(&self) -> Result<(), SessionClosed> {
        self.send(SessionCommand::AudioStreamEnd)
    }

    /// Replaces the system instruction.
    pub fn update_instruction(&self, instruction: impl Into<String>) -> Result<(), SessionClosed> {
        self.send(SessionCommand::UpdateInstruction(instruction.into()))
    }
}
