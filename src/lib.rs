//! # reel
//!
//! A runtime for real-time Gemini Live sessions, built as a tree of supervised actors whose
//! spine is record & replay. This crate re-exports the workspace's crates; see
//! [`protocol`] for the wire protocol.

pub use reel_protocol as protocol;

/// The names most programs need, in one import.
pub mod prelude {
    pub use reel_protocol::{
        ApiEndpoint, ClientMessage, CommandEncoder, EventDecoder, FunctionCall, FunctionResponse,
        Platform, ServerMessage, SessionCommand, SessionConfig, SessionEvent, SessionPhase,
        decode_client, decode_server,
    };
}
