//! [`ConnectionSetup`]: the setup frame a new connection opens with, built once for both
//! transports.
//!
//! Every connection — the first, and each one after a reconnect — opens with a setup frame
//! built from the session's config, presenting the latest resumption handle when the
//! session resumes (decision 0007). The live transport sends it; the tape reader produces it
//! and compares it with the recorded one. Both build it here, so they cannot differ.

use bytes::Bytes;

use super::live_transport::TransportArgs;

/// The setup frame of a connection about to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionSetup {
    /// The frame's payload, encoded for the endpoint's platform.
    pub frame: Bytes,
    /// Whether it presents a resumption handle (a reconnect then reports `resumed`).
    pub presented_handle: bool,
}

impl TransportArgs {
    /// The setup frame for the next connection: the session's config, resuming from the
    /// latest handle the router kept when the session resumes and one was received.
    pub fn connection_setup(&self) -> ConnectionSetup {
        let handle = self.resume_handle.borrow().clone();
        let resuming = self.config.setup().session_resumption.is_some();
        let (config, presented_handle) = match handle {
            Some(handle) if resuming => (self.config.clone().session_resume_from(handle), true),
            _ => (self.config.clone(), false),
        };
        ConnectionSetup {
            frame: Bytes::from(config.setup_frame(self.endpoint.platform())),
            presented_handle,
        }
    }
}
