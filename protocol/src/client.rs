//! Client → server frames.
//!
//! On the wire a client frame is an object with exactly one message key. [`ClientMessage`]
//! keeps every known key as an `Option` plus the unknown ones, so a frame reads and writes
//! back losslessly; [`crate::decode_client`] checks the one-key rule and
//! [`ClientMessage::kind`] names the message.

use serde_json::Value;

use crate::content::{Blob, Content, FunctionResponse};
use crate::setup::Setup;
use crate::wire::wire_struct;

wire_struct! {
    /// One client frame.
    pub struct ClientMessage {
        /// The first frame: model, config, tools.
        setup: Setup = "setup",
        /// Turns of content (text, context, instruction updates).
        client_content: ClientContent = "clientContent" | "client_content",
        /// Streamed input: audio, video, text, activity signals.
        realtime_input: RealtimeInput = "realtimeInput" | "realtime_input",
        /// Answers to function calls.
        tool_response: ToolResponse = "toolResponse" | "tool_response",
        /// A new system instruction (or tools) mid-session.
        context_update: ContextUpdate = "contextUpdate" | "context_update",
    }
}

/// Which message a [`ClientMessage`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientMessageKind {
    /// `setup`.
    Setup,
    /// `clientContent`.
    ClientContent,
    /// `realtimeInput`.
    RealtimeInput,
    /// `toolResponse`.
    ToolResponse,
    /// `contextUpdate`.
    ContextUpdate,
}

impl ClientMessageKind {
    /// The wire key, lowerCamelCase.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientMessageKind::Setup => "setup",
            ClientMessageKind::ClientContent => "clientContent",
            ClientMessageKind::RealtimeInput => "realtimeInput",
            ClientMessageKind::ToolResponse => "toolResponse",
            ClientMessageKind::ContextUpdate => "contextUpdate",
        }
    }
}

impl ClientMessage {
    /// How many kinds of message are present (a valid frame has exactly one): what
    /// [`ClientMessage::kinds`] would list, without the list.
    pub(crate) fn kind_count(&self) -> usize {
        usize::from(self.setup.is_some())
            + usize::from(self.client_content.is_some())
            + usize::from(self.realtime_input.is_some())
            + usize::from(self.tool_response.is_some())
            + usize::from(self.context_update.is_some())
    }

    /// The kinds of message present, in wire-key order. A valid frame has exactly one.
    pub fn kinds(&self) -> Vec<ClientMessageKind> {
        let mut kinds = Vec::with_capacity(1);
        if self.setup.is_some() {
            kinds.push(ClientMessageKind::Setup);
        }
        if self.client_content.is_some() {
            kinds.push(ClientMessageKind::ClientContent);
        }
        if self.realtime_input.is_some() {
            kinds.push(ClientMessageKind::RealtimeInput);
        }
        if self.tool_response.is_some() {
            kinds.push(ClientMessageKind::ToolResponse);
        }
        if self.context_update.is_some() {
            kinds.push(ClientMessageKind::ContextUpdate);
        }
        kinds
    }

    /// The one message this frame carries, if it carries exactly one.
    pub fn kind(&self) -> Option<ClientMessageKind> {
        match self.kinds().as_slice() {
            [kind] => Some(*kind),
            _ => None,
        }
    }

    /// The text a user typed, if this frame carries any: the text parts of client content's
    /// `user` turns (parts joined, turns one per line), or realtime input's `text`.
    ///
    /// ```
    /// use reel_protocol::{ClientMessage, decode_client};
    ///
    /// let frame = br#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turnComplete":true}}"#;
    /// assert_eq!(decode_client(frame)?.user_text().as_deref(), Some("Hi"));
    /// assert_eq!(ClientMessage::default().user_text(), None);
    /// # Ok::<(), reel_protocol::DecodeError>(())
    /// ```
    pub fn user_text(&self) -> Option<String> {
        if let Some(turns) = self.client_content.as_ref().and_then(|c| c.turns.as_ref()) {
            return user_text_of(turns);
        }
        self.realtime_input
            .as_ref()
            .and_then(|input| input.text.clone())
            .filter(|text| !text.is_empty())
    }

    /// The system instruction this frame replaces the session's with, if it is a
    /// `contextUpdate` with one: its text parts joined (what
    /// [`crate::SessionCommand::UpdateInstruction`] sends).
    ///
    /// ```
    /// use reel_protocol::{ClientMessage, decode_client};
    ///
    /// let frame = br#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Be brief."}]}}}"#;
    /// assert_eq!(decode_client(frame)?.instruction_update().as_deref(), Some("Be brief."));
    /// assert_eq!(ClientMessage::default().instruction_update(), None);
    /// # Ok::<(), reel_protocol::DecodeError>(())
    /// ```
    pub fn instruction_update(&self) -> Option<String> {
        let content = self.context_update.as_ref()?.system_instruction.as_ref()?;
        Some(
            content
                .parts()
                .iter()
                .filter_map(|part| part.text.as_deref())
                .collect(),
        )
    }

    /// A `setup` frame.
    pub fn setup(setup: Setup) -> Self {
        ClientMessage {
            setup: Some(setup),
            ..ClientMessage::default()
        }
    }

    /// A `clientContent` frame.
    pub fn client_content(turns: Vec<Content>, turn_complete: bool) -> Self {
        ClientMessage {
            client_content: Some(ClientContent {
                turns: Some(turns),
                turn_complete: Some(turn_complete),
                ..ClientContent::default()
            }),
            ..ClientMessage::default()
        }
    }

    /// A `realtimeInput` frame.
    pub fn realtime_input(input: RealtimeInput) -> Self {
        ClientMessage {
            realtime_input: Some(input),
            ..ClientMessage::default()
        }
    }

    /// A `toolResponse` frame.
    pub fn tool_response(responses: Vec<FunctionResponse>) -> Self {
        ClientMessage {
            tool_response: Some(ToolResponse {
                function_responses: Some(responses),
                ..ToolResponse::default()
            }),
            ..ClientMessage::default()
        }
    }
}

/// The text parts of the `user` turns among `turns`: parts joined, turns one per line;
/// `None` when there is no such text.
pub(crate) fn user_text_of(turns: &[Content]) -> Option<String> {
    let texts: Vec<String> = turns
        .iter()
        .filter(|turn| turn.role.as_deref() == Some("user"))
        .map(|turn| {
            turn.parts
                .iter()
                .flatten()
                .filter(|part| part.thought != Some(true))
                .filter_map(|part| part.text.as_deref())
                .collect::<String>()
        })
        .filter(|text| !text.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

wire_struct! {
    /// Turns of content appended to the conversation.
    pub struct ClientContent {
        /// The turns, in order.
        turns: Vec<Content> = "turns",
        /// The client's turn is over: the model should answer.
        turn_complete: bool = "turnComplete" | "turn_complete",
    }
}

wire_struct! {
    /// Streamed input. One field per frame in practice.
    pub struct RealtimeInput {
        /// Deprecated list form of audio/video input.
        media_chunks: Vec<Blob> = "mediaChunks" | "media_chunks",
        /// PCM16LE mono audio, `audio/pcm;rate=16000`.
        audio: Blob = "audio",
        /// A video frame, e.g. `image/jpeg`.
        video: Blob = "video",
        /// Typed text, streamed like speech.
        text: String = "text",
        /// The user started speaking (server VAD off).
        activity_start: ActivitySignal = "activityStart" | "activity_start",
        /// The user stopped speaking (server VAD off).
        activity_end: ActivitySignal = "activityEnd" | "activity_end",
        /// The audio stream paused (server VAD on): flush cached audio.
        audio_stream_end: bool = "audioStreamEnd" | "audio_stream_end",
    }
}

wire_struct! {
    /// `activityStart` / `activityEnd`: an empty object on the wire.
    pub struct ActivitySignal {}
}

wire_struct! {
    /// A change to the session's context: a new system instruction, or new tools.
    pub struct ContextUpdate {
        /// The new system instruction.
        system_instruction: Content = "systemInstruction" | "system_instruction",
        /// The new tools, wrapped: `{"tools":[…]}`.
        tools: Value = "tools",
    }
}

wire_struct! {
    /// Answers to function calls.
    pub struct ToolResponse {
        /// One response per answered call.
        function_responses: Vec<FunctionResponse> = "functionResponses" | "function_responses",
    }
}
