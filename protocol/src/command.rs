//! [`SessionCommand`]: everything an application sends, and how each becomes a frame.

use bytes::Bytes;

use crate::client::{ActivitySignal, ClientMessage, ContextUpdate, RealtimeInput};
use crate::codec::encode;
use crate::content::{Blob, Content, FunctionResponse, Part};
use crate::endpoint::Platform;

/// MIME type of input audio: PCM16LE mono at 16 kHz.
pub const INPUT_AUDIO_MIME: &str = "audio/pcm;rate=16000";
/// MIME type of output audio: PCM16LE mono at 24 kHz.
pub const OUTPUT_AUDIO_MIME: &str = "audio/pcm;rate=24000";
/// MIME type of video frames sent with [`SessionCommand::SendVideo`].
pub const VIDEO_MIME: &str = "image/jpeg";

/// Something the application asks the session to send.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionCommand {
    /// Audio input: raw PCM16LE mono 16 kHz bytes (base64 is the encoder's job).
    SendAudio(Bytes),
    /// A video frame: raw JPEG bytes.
    SendVideo(Bytes),
    /// A user text turn (`clientContent`, one user turn, `turnComplete: true`).
    SendText(String),
    /// Text streamed as realtime input, like speech (`realtimeInput.text`).
    SendRealtimeText(String),
    /// Turns of content; `turn_complete` asks the model to answer.
    SendClientContent {
        /// Appended to the conversation in order (`role` `user` or `model`).
        turns: Vec<Content>,
        /// Whether the model should answer now.
        turn_complete: bool,
    },
    /// Answers to function calls.
    SendToolResponse(Vec<FunctionResponse>),
    /// The user started speaking (only with server VAD off).
    ActivityStart,
    /// The user stopped speaking (only with server VAD off).
    ActivityEnd,
    /// The audio stream paused; the server flushes what it cached.
    AudioStreamEnd,
    /// Replace the system instruction mid-session (`contextUpdate.systemInstruction`, as the
    /// official SDKs send it).
    UpdateInstruction(String),
    /// Close the connection with a normal close frame; sends no frame of its own.
    Disconnect,
}

impl SessionCommand {
    /// The text a user typed, if the command carries any: a text turn, realtime text, or the
    /// text of client content's `user` turns (see [`crate::ClientMessage::user_text`]).
    pub fn user_text(&self) -> Option<String> {
        match self {
            SessionCommand::SendText(text) | SessionCommand::SendRealtimeText(text) => {
                (!text.is_empty()).then(|| text.clone())
            }
            SessionCommand::SendClientContent { turns, .. } => crate::client::user_text_of(turns),
            _ => None,
        }
    }

    /// A short, stable name of the command kind.
    pub fn kind(&self) -> &'static str {
        match self {
            SessionCommand::SendAudio(_) => "send_audio",
            SessionCommand::SendVideo(_) => "send_video",
            SessionCommand::SendText(_) => "send_text",
            SessionCommand::SendRealtimeText(_) => "send_realtime_text",
            SessionCommand::SendClientContent { .. } => "send_client_content",
            SessionCommand::SendToolResponse(_) => "send_tool_response",
            SessionCommand::ActivityStart => "activity_start",
            SessionCommand::ActivityEnd => "activity_end",
            SessionCommand::AudioStreamEnd => "audio_stream_end",
            SessionCommand::UpdateInstruction(_) => "update_instruction",
            SessionCommand::Disconnect => "disconnect",
        }
    }
}

/// Turns commands into frames for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEncoder {
    /// The platform: Vertex drops response `scheduling`.
    pub platform: Platform,
    /// Whether server-side activity detection is on. With it on, `activityStart` and
    /// `activityEnd` are not sent (the server would close the session with 1007).
    pub automatic_activity_detection: bool,
}

impl Default for CommandEncoder {
    fn default() -> Self {
        CommandEncoder {
            platform: Platform::GoogleAi,
            automatic_activity_detection: true,
        }
    }
}

impl CommandEncoder {
    /// The frame for `command`, or `None` when nothing is to be sent: `Disconnect` (a
    /// transport matter) and activity signals while server VAD is on.
    pub fn to_message(&self, command: &SessionCommand) -> Option<ClientMessage> {
        let realtime = |input: RealtimeInput| Some(ClientMessage::realtime_input(input));
        match command {
            SessionCommand::SendAudio(pcm) => realtime(RealtimeInput {
                audio: Some(Blob::new(INPUT_AUDIO_MIME, pcm.clone())),
                ..RealtimeInput::default()
            }),
            SessionCommand::SendVideo(jpeg) => realtime(RealtimeInput {
                video: Some(Blob::new(VIDEO_MIME, jpeg.clone())),
                ..RealtimeInput::default()
            }),
            SessionCommand::SendRealtimeText(text) => realtime(RealtimeInput {
                text: Some(text.clone()),
                ..RealtimeInput::default()
            }),
            SessionCommand::ActivityStart | SessionCommand::ActivityEnd
                if self.automatic_activity_detection =>
            {
                None
            }
            SessionCommand::ActivityStart => realtime(RealtimeInput {
                activity_start: Some(ActivitySignal::default()),
                ..RealtimeInput::default()
            }),
            SessionCommand::ActivityEnd => realtime(RealtimeInput {
                activity_end: Some(ActivitySignal::default()),
                ..RealtimeInput::default()
            }),
            SessionCommand::AudioStreamEnd => realtime(RealtimeInput {
                audio_stream_end: Some(true),
                ..RealtimeInput::default()
            }),
            SessionCommand::SendText(text) => Some(ClientMessage::client_content(
                vec![Content::user_text(text.clone())],
                true,
            )),
            SessionCommand::SendClientContent {
                turns,
                turn_complete,
            } => Some(ClientMessage::client_content(turns.clone(), *turn_complete)),
            SessionCommand::UpdateInstruction(instruction) => Some(ClientMessage {
                context_update: Some(ContextUpdate {
                    system_instruction: Some(Content {
                        parts: Some(vec![Part::text(instruction.clone())]),
                        ..Content::default()
                    }),
                    ..ContextUpdate::default()
                }),
                ..ClientMessage::default()
            }),
            SessionCommand::SendToolResponse(responses) => {
                let mut responses = responses.clone();
                if !self.platform.supports_async_tools() {
                    for response in &mut responses {
                        response.scheduling = None;
                    }
                }
                Some(ClientMessage::tool_response(responses))
            }
            SessionCommand::Disconnect => None,
        }
    }

    /// The bytes of the frame for `command` (see [`CommandEncoder::to_message`]).
    ///
    /// Audio, the one command sent tens of times a second, is written straight into the
    /// output buffer, base64 included, with the same bytes the general path produces.
    pub fn encode(&self, command: &SessionCommand) -> Option<Vec<u8>> {
        match command {
            SessionCommand::SendAudio(pcm) => Some(encode_audio_input(pcm)),
            other => self.to_message(other).map(|message| encode(&message)),
        }
    }
}

/// `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"<base64>"}}}`,
/// written in one pass into a buffer of the exact size.
pub fn encode_audio_input(pcm: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":""#;
    const TAIL: &[u8] = br#""}}}"#;
    let encoded_len = pcm.len().div_ceil(3) * 4;
    let mut out = Vec::with_capacity(HEAD.len() + encoded_len + TAIL.len());
    out.extend_from_slice(HEAD);
    base64_simd::STANDARD.encode_append(pcm, &mut out);
    out.extend_from_slice(TAIL);
    out
}
