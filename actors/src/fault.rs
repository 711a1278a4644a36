//! [`FaultHook`]: a seam for fault injection, for simulators and tests.
//!
//! Most of the tree can be failed from the outside through code the application hands it
//! (callbacks, tools, recorders). The router, the transport, a plain state write, telemetry
//! on a turn and the recorder's queue run none, so a simulator that wants to fail them at a
//! chosen point installs a hook with [`crate::LiveSessionBuilder::fault_hook`]. The hook is
//! called by a child right before it handles each item of its inbox, after the item is
//! marked in flight: panicking there fails the child exactly as a bug in it would, with that
//! item as the one it failed on. The transport has a mailbox rather than an inbox: it calls
//! the hook before each message it handles (opening the connection, a command to send,
//! `setupComplete`, a connection's end, a reconnect), numbered from 1. Without a hook
//! installed it costs one branch.

use crate::child::Child;

/// Called by a child before it handles each item of its inbox.
pub trait FaultHook: Send + Sync + 'static {
    /// `child` is about to handle its item number `input` (1-based, counted across its
    /// restarts, in the order its inbox took them). Panic to fail the child on it.
    fn before(&self, child: Child, input: u64);
}
