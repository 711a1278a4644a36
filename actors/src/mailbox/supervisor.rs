//! What the supervisor is told.

use crate::child::Child;

/// Messages to the supervisor.
#[derive(Debug)]
pub enum SupervisorMsg {
    /// A lane handled its last event (after the connection ended for good).
    Drained(Child),
    /// The connection is over for good, for this reason.
    Ending(String),
    /// A failed actor's backoff has passed: spawn its replacement.
    Respawn(Child),
    /// The lanes had the shutdown timeout to drain after the connection ended.
    DrainTimedOut,
    /// A child running on a task of its own ended: it failed (`failure` says why), or it
    /// stopped (`None`).
    TaskEnded {
        /// Which child.
        child: Child,
        /// Which of its instances ([`crate::mailbox::Instance::id`]).
        instance: u64,
        /// Why it failed: the error's or the panic's text.
        failure: Option<String>,
    },
}
