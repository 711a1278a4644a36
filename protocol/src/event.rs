//! [`SessionEvent`]: everything a session reports to the application.

use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use crate::content::{CodeExecutionResult, ExecutableCode, FileData, FunctionCall};
use crate::error::DecodeError;
use crate::field_error::FieldError;
use crate::phase::SessionPhase;
use crate::server::{InteractionStatus, TurnCompleteReason, UsageMetadata};

/// Something that happened in a session: decoded from a server frame, or reported by the
/// runtime (connection, phase, errors).
///
/// An event is moved several times on its way to the application (router, lane inbox,
/// lane, event stream), so it is kept small (80 bytes): payloads larger than an error or a
/// JSON value (usage, files, code, unknown data) are boxed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// The server accepted the setup; the session is live.
    Connected {
        /// The server's session id, when it gives one.
        session_id: Option<String>,
    },
    /// A piece of model answer text.
    TextDelta(String),
    /// The whole answer text of a turn, once, at turn complete.
    TextComplete(String),
    /// Text the application sent as the user (a text turn or realtime text), seen as it
    /// went out: the user's side of the transcript in a text session. Not from the server.
    UserText(String),
    /// A thought summary (`thought: true` parts; needs `includeThoughts`).
    Thought(String),
    /// Model audio: PCM16LE mono at 24 kHz. Reference counted, never copied.
    AudioData(Bytes),
    /// Inline model output that is not audio (images, other MIME types).
    Media {
        /// Its MIME type.
        mime_type: String,
        /// Its bytes.
        data: Bytes,
    },
    /// A file reference in model output.
    File(Box<FileData>),
    /// Code the model wrote for the code-execution tool.
    ExecutableCode(Box<ExecutableCode>),
    /// The result of running the model's code.
    CodeExecutionResult(Box<CodeExecutionResult>),
    /// Transcription of the user's audio.
    InputTranscription {
        /// A chunk when partial; the whole transcription of the turn when final.
        text: String,
        /// `false` for chunks (revisable), `true` once per turn with the full text.
        is_final: bool,
    },
    /// Low-latency transcription of the user, revised while they speak (not accumulated:
    /// each one replaces the last).
    InterimInputTranscription(String),
    /// Transcription of the model's audio.
    OutputTranscription {
        /// A chunk when partial; the whole transcription of the turn when final.
        text: String,
        /// `false` for chunks (revisable), `true` once per turn with the full text.
        is_final: bool,
    },
    /// The model asks for these function calls.
    ToolCall(Vec<FunctionCall>),
    /// The model no longer wants these calls (by id).
    ToolCallCancelled(Vec<String>),
    /// The user barged in: model audio already queued must not be played.
    Interrupted,
    /// The model has finished generating the turn (audio may still be playing).
    GenerationComplete,
    /// The model's turn is over.
    TurnComplete {
        /// Why, when the server says.
        reason: Option<TurnCompleteReason>,
        /// The model waits for the user's input.
        waiting_for_input: bool,
    },
    /// What the session is doing, as the server reports it.
    InteractionStatus(InteractionStatus),
    /// The server will close the connection after `time_left`.
    GoAway {
        /// Time left, when the server says.
        time_left: Option<Duration>,
    },
    /// A new session resumption handle.
    SessionResumeUpdate(ResumeInfo),
    /// Token usage reported by the server.
    Usage(Box<UsageMetadata>),
    /// The server detected the start of user speech.
    VoiceActivityStart,
    /// The server detected the end of user speech.
    VoiceActivityEnd,
    /// Search grounding metadata of the turn.
    Grounding(Value),
    /// URL-context metadata of the turn.
    UrlContext(Value),
    /// Data the protocol carried that this version of reel does not know. Kept so that an
    /// application can see it; nothing else in the frame is lost because of it.
    Unrecognized {
        /// Where it was, e.g. `serverContent.modelTurn.parts[2]` or `someNewMessage`.
        path: String,
        /// The data itself.
        value: Box<Value>,
    },
    /// The session phase changed.
    PhaseChanged {
        /// The phase before.
        from: SessionPhase,
        /// The phase now.
        to: SessionPhase,
    },
    /// The connection ended.
    Disconnected {
        /// The WebSocket close code, if a close frame arrived (1000 is a normal close).
        code: Option<u16>,
        /// The close reason, or what broke the connection.
        reason: Option<String>,
    },
    /// A non-fatal error; the session goes on.
    Error(SessionError),
}

/// A resumption handle and what the server said with it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResumeInfo {
    /// The handle to present on the next connect (absent when not resumable).
    pub handle: Option<String>,
    /// Whether the session can be resumed now.
    pub resumable: bool,
    /// Index of the last client message the server consumed.
    pub last_consumed_index: Option<i64>,
}

/// An error reported as an event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// An inbound frame could not be read; it is skipped.
    #[error("inbound frame {seq} could not be decoded: {error}")]
    Decode {
        /// Sequence number of the frame.
        seq: u64,
        /// What was wrong.
        error: DecodeError,
    },
    /// A field of an inbound frame could not be read; the rest of the frame was, and its
    /// events were reported before this one.
    #[error("inbound frame {seq}: {error}; the rest of the frame was read")]
    InvalidField {
        /// Sequence number of the frame.
        seq: u64,
        /// Which field, what it should hold and what it held.
        error: FieldError,
    },
    /// The connection could not be opened.
    #[error("connect failed: {message}")]
    Connect {
        /// Why.
        message: String,
    },
    /// No connection within the connect timeout.
    #[error("connect timed out after {after:?}")]
    ConnectTimeout {
        /// The timeout.
        after: Duration,
    },
    /// No `setupComplete` within the setup timeout.
    #[error("no setupComplete within {after:?}")]
    SetupTimeout {
        /// The timeout.
        after: Duration,
    },
    /// The transport failed mid-session.
    #[error("transport error: {message}")]
    Transport {
        /// Why.
        message: String,
    },
    /// A callback panicked; its event was not handled.
    #[error("{lane} callback panicked while handling {event}: {message}")]
    CallbackPanicked {
        /// The actor that failed: `fast_lane`, `control_lane` or `telemetry`.
        lane: &'static str,
        /// The kind of event being handled.
        event: &'static str,
        /// The panic message.
        message: String,
    },
    /// A tool failed; the model was told.
    #[error("tool `{name}` failed: {message}")]
    Tool {
        /// The tool.
        name: String,
        /// What happened.
        message: String,
    },
    /// An awaited callback did not return within its time limit; the lane went on without
    /// it (what it would have returned counts as nothing).
    #[error(
        "callback `{callback}` did not return within {after:?}; the session went on without it"
    )]
    CallbackTimeout {
        /// The callback (`on_tool_call`, `before_tool_response`, `on_interrupted`, …).
        callback: &'static str,
        /// Its time limit.
        after: Duration,
    },
    /// Writes the runtime made to the session state were not applied (after a retry).
    #[error("state writes of {what} were not applied: {message}")]
    StateWrite {
        /// Whose writes: `tool get_weather (call c-1)`, `the session: keys`, …
        what: String,
        /// Why.
        message: String,
    },
}

impl SessionEvent {
    /// A short, stable name of the event kind (`text`, `audio`, `turn_complete`, …), as used in
    /// reports and counters.
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::Connected { .. } => "connected",
            SessionEvent::TextDelta(_) => "text",
            SessionEvent::TextComplete(_) => "text_complete",
            SessionEvent::UserText(_) => "user_text",
            SessionEvent::Thought(_) => "thought",
            SessionEvent::AudioData(_) => "audio",
            SessionEvent::Media { .. } => "media",
            SessionEvent::File(_) => "file",
            SessionEvent::ExecutableCode(_) => "executable_code",
            SessionEvent::CodeExecutionResult(_) => "code_execution_result",
            SessionEvent::InputTranscription { .. } => "input_transcription",
            SessionEvent::InterimInputTranscription(_) => "interim_input_transcription",
            SessionEvent::OutputTranscription { .. } => "output_transcription",
            SessionEvent::InteractionStatus(_) => "interaction_status",
            SessionEvent::ToolCall(_) => "tool_call",
            SessionEvent::ToolCallCancelled(_) => "tool_call_cancelled",
            SessionEvent::Interrupted => "interrupted",
            SessionEvent::GenerationComplete => "generation_complete",
            SessionEvent::TurnComplete { .. } => "turn_complete",
            SessionEvent::GoAway { .. } => "go_away",
            SessionEvent::SessionResumeUpdate(_) => "resume_update",
            SessionEvent::Usage(_) => "usage",
            SessionEvent::VoiceActivityStart => "vad_start",
            SessionEvent::VoiceActivityEnd => "vad_end",
            SessionEvent::Grounding(_) => "grounding",
            SessionEvent::UrlContext(_) => "url_context",
            SessionEvent::Unrecognized { .. } => "unrecognized",
            SessionEvent::PhaseChanged { .. } => "phase_changed",
            SessionEvent::Disconnected { .. } => "disconnected",
            SessionEvent::Error(_) => "error",
        }
    }
}
