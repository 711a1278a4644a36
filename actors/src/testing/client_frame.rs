//! A frame the client sent, as the scripted server received it.

use bytes::Bytes;
use reel_protocol::{ClientMessage, DecodeError, FrameKind, decode_client};

/// One data frame from the client: its kind and its exact bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFrame {
    /// Text or binary.
    pub kind: FrameKind,
    /// The payload, exactly as it crossed the wire.
    pub bytes: Bytes,
}

impl ClientFrame {
    /// The payload as text, if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The payload parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.bytes)
    }

    /// The payload decoded as a Live client message.
    pub fn message(&self) -> Result<ClientMessage, DecodeError> {
        decode_client(&self.bytes)
    }
}
