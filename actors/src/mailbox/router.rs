//! What the router routes ([`RouterMsg`], in its inbox) and its own timer's message.

use reel_protocol::{SessionCommand, SessionEvent, UserInput};

use crate::inbox::Bound;
use crate::mailbox::Lanes;
use crate::tools::StampedInput;
use crate::transport::link::{LinkFrame, Stamp};

/// How many items wait for the router at most before the transport's reader waits.
pub const ROUTER_CAPACITY: usize = 1024;

/// How many bytes of frames wait for the router at most before the transport's reader
/// waits: the router's inbox is bounded in frames and in bytes. Text frames (a hundred
/// bytes) batch up to [`ROUTER_CAPACITY`] deep, which keeps the reader from waking per
/// frame; audio (40 ms of 24 kHz PCM is about 2.6 KB of base64) stops at about 400, so a
/// session buffers no more than 1 MiB before it stops reading the socket.
pub const ROUTER_MAX_BYTES: usize = 1 << 20;

/// The router inbox's bound: frames wait for room, the transport's own steps and reports
/// are always accepted (they are few, and must not be lost).
pub const ROUTER_BOUND: Bound = Bound::wait(ROUTER_CAPACITY);

/// What a router item weighs against [`ROUTER_MAX_BYTES`]: a frame its bytes, anything
/// else nothing.
pub fn router_item_bytes(message: &RouterMsg) -> usize {
    match message {
        RouterMsg::Inbound { frame, .. } => frame.bytes.len(),
        RouterMsg::Input(input) => match &input.input {
            UserInput::Audio(data) | UserInput::Video(data) => data.len(),
            _ => 0,
        },
        _ => 0,
    }
}

/// The router's own message besides its doorbell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterTimer {
    /// The deadline of a `goAway` that waited for a turn in flight (see
    /// `actors/src/go_away.rs`).
    GoAwayDue(u64),
}

/// What the router routes.
#[derive(Debug)]
pub enum RouterMsg {
    /// A frame arrived on connection `conn`, already stamped and recorded.
    Inbound {
        /// The connection (1-based).
        conn: u32,
        /// Its sequence number and time.
        stamp: Stamp,
        /// The frame.
        frame: LinkFrame,
    },
    /// The transport did something that moves the session phase.
    Lifecycle {
        /// What it did.
        step: Lifecycle,
        /// The time of the frame the step sent, if it sent one (else the router's current
        /// event time applies).
        ts_ms: Option<u64>,
    },
    /// The connection ended. `last` when no reconnect follows: the lanes drain and the
    /// session ends.
    LinkDown {
        /// Close code, if a close frame arrived.
        code: Option<u16>,
        /// Close reason, or what broke.
        reason: Option<String>,
        /// No reconnect follows.
        last: bool,
        /// When.
        ts_ms: u64,
    },
    /// An event the runtime made (an error to report), routed to the control lane in order.
    Report(Box<SessionEvent>),
    /// The user's realtime input, for the running tools that consume it (reported only
    /// when the session has such tools), routed to the control lane in order.
    Input(Box<StampedInput>),
    /// Replies with the number of the last item pushed to each lane, after everything
    /// received before it was routed. With [`crate::inbox::Inbox::wait_finished`] it tells
    /// when the tree has consumed those frames.
    Barrier(tokio::sync::oneshot::Sender<Lanes<u64>>),
    /// Pushes the lanes what was routed to them and not pushed yet, waiting for their
    /// room: left by a producer that routed frames in place and found a lane full (see
    /// `actors/src/router/in_place.rs`).
    Flush,
}

/// Transport steps the phase depends on.
#[derive(Debug, Clone, PartialEq)]
pub enum Lifecycle {
    /// Opening a connection.
    ConnectStarted,
    /// The setup frame was sent.
    SetupSent,
    /// A command went out (only those that matter to the phase or to latency are reported).
    Sent(SessionCommand),
    /// The application sent text as the user; routed to the control lane as
    /// [`SessionEvent::UserText`] (the transcript's user side in a text session).
    AppText(String),
}
