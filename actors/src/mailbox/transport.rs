//! What the transport is told, and who sent a command.

use reel_protocol::SessionCommand;

/// Who sent a command: the application through its [`crate::LiveHandle`], or the runtime
/// (the control lane, tools, callbacks and hooks running inside the tree). A replay runs
/// the runtime again, so it produces the runtime's frames itself; the application's frames
/// were recorded only to provoke what the server said, and are not re-sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The application, through its handle.
    App,
    /// The runtime.
    Runtime,
}

/// Messages to the transport.
#[derive(Debug)]
pub enum TransportMsg {
    /// Open the connection (the supervisor sends this once the tree is up).
    Start,
    /// Send a command, from the application or the runtime.
    Send(SessionCommand, Origin),
    /// `setupComplete` arrived on connection `conn` (from the router).
    SetupComplete {
        /// The connection.
        conn: u32,
    },
    /// Reconnect now (after a `goAway`), presenting the latest resumption handle.
    Reconnect {
        /// Why.
        reason: String,
    },
    /// Close the session.
    Disconnect,
    /// Connection `conn` ended (from its reader task).
    LinkEnded {
        /// The connection.
        conn: u32,
        /// Close code, if a close frame arrived.
        code: Option<u16>,
        /// Close reason, or what broke.
        reason: Option<String>,
    },
    /// The setup timeout of connection `conn` passed.
    SetupTimedOut {
        /// The connection.
        conn: u32,
    },
    /// Our close of connection `conn` was not answered in time.
    CloseTimedOut {
        /// The connection.
        conn: u32,
    },
    /// The live transport's writer task failed (a panic while sending a command): the
    /// transport fails with `reason`, as a panic in its own handler fails it.
    WriterFailed {
        /// The panic's text.
        reason: String,
    },
    /// Time for reconnect attempt `attempt`.
    Retry {
        /// 1-based attempt.
        attempt: u32,
        /// Why the connection is being re-established.
        reason: String,
    },
}
