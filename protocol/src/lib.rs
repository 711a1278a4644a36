//! # reel-protocol
//!
//! The Gemini Live wire protocol as reel speaks it. Pure: no I/O, no async runtime.
//!
//! - Typed frames: [`ClientMessage`] (setup, client content, realtime input, tool response)
//!   and [`ServerMessage`] (setup complete, server content, tool calls and cancellations,
//!   go-away, resumption updates, usage, voice activity). Every frame type reads and writes;
//!   reading accepts lowerCamelCase and snake_case keys, writing produces lowerCamelCase;
//!   unknown fields and part kinds are kept, so decode → encode → decode loses nothing.
//! - [`decode_server`] / [`decode_client`] with a size limit and a precise [`DecodeError`];
//!   [`decode_server_partial`] keeps every field of a server frame that has a field of the
//!   wrong type, and names each bad one by JSON path ([`FieldError`]).
//! - [`SessionEvent`] and [`EventDecoder`]: every thing a frame carries becomes an event, in
//!   a documented order. [`SessionCommand`] and [`CommandEncoder`]: everything an
//!   application sends, as frames.
//! - [`PhaseTracker`]: the session phase as a total, pure transition function.
//! - [`SessionConfig`]: the setup frame, byte-identical for equal configs.
//! - [`ApiEndpoint`]: Google AI, ephemeral tokens, Vertex AI, from code or the environment;
//!   credentials never show in `Debug`, `Display` or errors.
//!
//! ```
//! use reel_protocol::{decode_server, EventDecoder, SessionEvent};
//!
//! let frame = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello!"}]},"turnComplete":true}}"#;
//! let mut decoder = EventDecoder::new();
//! let mut events = Vec::new();
//! decoder.decode(decode_server(frame)?, &mut events);
//! assert_eq!(events[0], SessionEvent::TextDelta("Hello!".into()));
//! assert_eq!(events[1], SessionEvent::TextComplete("Hello!".into()));
//! # Ok::<(), reel_protocol::DecodeError>(())
//! ```

// Library code never unwraps: a bad frame is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod wire;

mod args;
mod client;
mod client_keys;
mod codec;
mod command;
mod config;
mod content;
mod endpoint;
mod error;
mod event;
mod events_from_frame;
mod extra;
mod field_error;
pub mod json;
mod lenient;
mod phase;
mod scalars;
mod secret;
mod server;
mod setup;
mod short_reader;
mod stream_frame;
mod tool_call_frame;
mod user_input;

pub use args::Args;
pub use client::{
    ActivitySignal, ClientContent, ClientMessage, ClientMessageKind, ContextUpdate, RealtimeInput,
    ToolResponse,
};
pub use client_keys::{ClientKeys, client_frame_may_be};
pub use codec::{
    DEFAULT_MAX_FRAME_BYTES, DecodeLimits, PartialServerMessage, client_decodes_on_this_thread,
    decode_client, decode_client_with, decode_server, decode_server_partial,
    decode_server_partial_with, decode_server_with, encode,
};
pub use command::{
    CommandEncoder, INPUT_AUDIO_MIME, OUTPUT_AUDIO_MIME, SessionCommand, VIDEO_MIME,
    encode_audio_input,
};
pub use config::{DEFAULT_MODEL, SessionConfig};
pub use content::{
    Blob, CodeExecutionResult, Content, ExecutableCode, FileData, FunctionCall, FunctionResponse,
    Part, PartKind, Scheduling,
};
pub use endpoint::{
    ApiEndpoint, ConnectRequest, Credential, EndpointError, FrameKind, GEMINI_BASE_URL_VAR,
    Platform, VERTEX_BASE_URL_VAR, percent_decode, percent_encode,
};
pub use error::DecodeError;
pub use event::{ResumeInfo, SessionError, SessionEvent};
pub use events_from_frame::{EventDecoder, events_from_frame};
pub use field_error::{FieldError, Found};
pub use phase::{PhaseInput, PhaseTracker, SessionPhase};
pub use scalars::{Base64Data, Base64Error, DurationError, Int64, Int64Number, ProtoDuration};
pub use secret::{SECRET_QUERY_PARAMS, Secret, is_secret_query_name, redact_url};
pub use server::{
    GoAway, InteractionStatus, ModalityTokenCount, ServerContent, ServerMessage,
    SessionResumptionUpdate, SetupComplete, ToolCall, ToolCallCancellation, Transcription,
    TurnCompleteReason, UsageMetadata, VadSignalType, VoiceActivity, VoiceActivityDetectionSignal,
    VoiceActivityType,
};
pub use setup::{
    ActivityHandling, AudioTranscriptionConfig, AutomaticActivityDetection, Behavior,
    ContextWindowCompression, EndSensitivity, FunctionDeclaration, GenerationConfig,
    MediaResolution, Modality, PrebuiltVoiceConfig, Proactivity, RealtimeInputConfig,
    SessionResumptionConfig, Setup, SlidingWindow, SpeechConfig, StartSensitivity, ThinkingConfig,
    Tool, TurnCoverage, VoiceConfig,
};
pub use user_input::UserInput;
pub use wire::Extra;
