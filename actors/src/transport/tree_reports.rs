//! [`TreeReports`]: everything a transport may do to the rest of the tree, in one place.
//!
//! Two transports move frames: the live one (a WebSocket) and, in replay, the tape reader.
//! Everything the tree learns from them — an inbound frame ([`TreeReports::deliver`]), a
//! connection opening, a command gone out that moves the phase, the user's text and input,
//! a connection ending, the session's end, a reconnect — is decided here, and both call it,
//! so the phase, reconnect and end semantics of a replay cannot drift from the live
//! session's. A transport that paces itself on the tree (the tape reader) asks it here to
//! wait until the lanes have handled what was routed ([`TreeReports::barrier`]) and until
//! running tools have room for more input ([`TreeReports::tool_input_room`]). See
//! [`super::seam`] for the whole seam.

use std::time::Duration;

use reel_protocol::{SessionCommand, SessionError, SessionEvent, UserInput};

use super::link::{LinkFrame, Stamp};
use super::live_transport::describe_close;
use super::wire_tap::WireTap;
use crate::events::{Lane, LiveEvent};
use crate::mailbox::{Lanes, Lifecycle, Origin, RouterMsg, SupervisorMsg};
use crate::peers::Peers;
use crate::router::{InPlaceRouter, route_in_place};
use crate::telemetry::TelemetryShared;
use crate::tools::StampedInput;

/// The reports of one transport to its tree.
#[derive(Clone, Copy)]
pub struct TreeReports<'a> {
    peers: &'a Peers,
    tap: &'a WireTap,
    telemetry: &'a TelemetryShared,
}

impl std::fmt::Debug for TreeReports<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeReports").finish_non_exhaustive()
    }
}

impl<'a> TreeReports<'a> {
    /// Reports to the tree of `peers`, marking connection ends on `tap`.
    pub fn new(peers: &'a Peers, tap: &'a WireTap, telemetry: &'a TelemetryShared) -> Self {
        TreeReports {
            peers,
            tap,
            telemetry,
        }
    }

    /// Hands inbound frame `frame` of connection `conn`, stamped `stamp`, to the router,
    /// waiting while its inbox is full (backpressure to whatever reads the frames); routes
    /// it on the caller's task instead while the router is idle ([`route_in_place`]).
    /// `Err(SessionOver)` once the router is gone: the session is over.
    pub async fn deliver(
        &self,
        conn: u32,
        stamp: Stamp,
        frame: LinkFrame,
    ) -> Result<(), SessionOver> {
        let inbound = RouterMsg::Inbound { conn, stamp, frame };
        let Err(inbound) = route_in_place(self.peers, inbound) else {
            return Ok(());
        };
        self.push_inbound(inbound).await
    }

    /// The part of [`TreeReports::deliver`] that never waits, for a reader that keeps the
    /// router's handles in `router` (taken from the peers at its first frame after the
    /// router published its state): routes the frame in place if the router is idle,
    /// reading nothing of the session's [`Peers`]; hands it back, as the message to push
    /// with [`TreeReports::push_inbound`], if not.
    ///
    /// Not `async`: a frame routed in place then builds no future in the reader's state
    /// (at thousands of sessions each such future is lines of the reader's task written a
    /// frame, cold by the next).
    pub fn route_kept(
        &self,
        router: &mut Option<InPlaceRouter>,
        conn: u32,
        stamp: Stamp,
        frame: LinkFrame,
    ) -> Result<(), RouterMsg> {
        if router.is_none() {
            *router = InPlaceRouter::of(self.peers);
        }
        let inbound = RouterMsg::Inbound { conn, stamp, frame };
        match router {
            Some(kept) => kept.route(inbound),
            None => Err(inbound),
        }
    }

    /// Pushes `inbound` to the router's inbox, waiting while it is full. `Err(SessionOver)`
    /// once the router is gone: the session is over.
    pub async fn push_inbound(&self, inbound: RouterMsg) -> Result<(), SessionOver> {
        match self.peers.router.push_wait(inbound).await {
            Ok(_) => Ok(()),
            Err(_) => Err(SessionOver),
        }
    }

    /// Waits until every lane has handled everything routed so far: the router flushes
    /// what it holds and says how far each lane's inbox was pushed, and each lane is waited
    /// for up to that item. `Err(SessionOver)` at once once the router is gone (or if it
    /// went before answering).
    pub async fn barrier(&self) -> Result<(), SessionOver> {
        let marks = self.routed_marks().await?;
        self.peers.lanes.wait_finished(marks).await;
        Ok(())
    }

    /// Waits until the router has routed everything pushed to it before this call, but
    /// not for the lanes: what the router publishes as it routes (the phase, the latest
    /// resumption handle) is current then. `Err(SessionOver)` at once once the router is
    /// gone (or if it went before answering).
    pub async fn routed(&self) -> Result<(), SessionOver> {
        self.routed_marks().await.map(|_| ())
    }

    /// Asks the router to route what it holds and say how far each lane's inbox was pushed.
    async fn routed_marks(&self) -> Result<Lanes<u64>, SessionOver> {
        let (reply, marks) = tokio::sync::oneshot::channel();
        // Refused only once the router is gone; the reply's sender is then dropped.
        let _ = self.peers.router.push(RouterMsg::Barrier(reply));
        marks.await.map_err(|_| SessionOver)
    }

    /// Whether the session has tools that consume the user's input (the transport then
    /// reports it, through [`TreeReports::sent`] or [`TreeReports::app_input`]).
    pub fn forwards_input(&self) -> bool {
        self.peers.tool_input.forwarded()
    }

    /// Whether a tool call is reading the user's input now.
    pub fn input_running(&self) -> bool {
        self.peers.tool_input.running()
    }

    /// Waits until every running tool that reads input has room for more, at most `limit`:
    /// `false` if the limit passed first. `true` at once when no tool consumes input.
    pub async fn tool_input_room(&self, limit: Duration) -> bool {
        !self.forwards_input() || self.peers.tool_input.wait_for_room(limit).await
    }

    /// The application is about to send (deferred context delivery): what waits is sent
    /// first, as the runtime. A replay calls it where the recording shows that flush (see
    /// `docs/decisions/0050-conversation-control.md`). Returns whether a frame went out.
    pub fn flush_deferred_context(&self) -> bool {
        self.peers.pending_context.flush(&self.peers.transport)
    }

    fn router(&self, message: RouterMsg) {
        // Always accepted (a transport's steps are few and must not be lost); refused only
        // once the router is gone, when the session is over anyway.
        let _ = self.peers.router.push(message);
    }

    /// A connection is opening and its setup frame, stamped `setup`, is about to leave:
    /// both steps carry the setup's time and reach the router before anything the server
    /// answers.
    pub fn connecting(&self, setup: Stamp) {
        for step in [Lifecycle::ConnectStarted, Lifecycle::SetupSent] {
            self.router(RouterMsg::Lifecycle {
                step,
                ts_ms: Some(setup.ts_ms),
            });
        }
    }

    /// `command` went out (stamped `stamp`), sent by `origin`. The router hears of every
    /// command but audio (the phase and the response latency depend on them). When `live`
    /// is set — the application's own command on the wire, not a replay's report of a
    /// recorded one, which reports these from the recording — it hears first of the user's
    /// text, which reaches the control lane as `SessionEvent::UserText`, and, when the
    /// session has tools that consume the user's input, of the realtime input (audio
    /// included), with how many of the application's audio chunks were dropped unsent just
    /// before it (`dropped_before`).
    pub fn sent(
        &self,
        command: SessionCommand,
        origin: Origin,
        stamp: Stamp,
        live: bool,
        dropped_before: u64,
    ) {
        if live && origin == Origin::App {
            if let Some(text) = command.user_text() {
                self.app_text(text, stamp);
            }
            if self.peers.tool_input.forwarded()
                && let Some(input) = UserInput::of_command(&command)
            {
                self.app_input(input, 0, stamp, dropped_before);
            }
        }
        if !matches!(command, SessionCommand::SendAudio(_)) {
            self.router(RouterMsg::Lifecycle {
                step: Lifecycle::Sent(command),
                ts_ms: Some(stamp.ts_ms),
            });
        }
    }

    /// The user's `text` went out at `stamp` (a replay reports it from the recording).
    pub fn app_text(&self, text: String, stamp: Stamp) {
        self.router(RouterMsg::Lifecycle {
            step: Lifecycle::AppText(text),
            ts_ms: Some(stamp.ts_ms),
        });
    }

    /// The application's realtime `input`, the `part`-th of its frame, went out at
    /// `stamp`, `dropped_before` of its audio chunks dropped unsent just before it: handed
    /// to the running tools that consume input, if the session has any (a replay reports
    /// it from the recording).
    pub fn app_input(&self, input: UserInput, part: u32, stamp: Stamp, dropped_before: u64) {
        if self.peers.tool_input.forwarded() {
            self.router(RouterMsg::Input(Box::new(StampedInput {
                seq: stamp.seq,
                part,
                ts_ms: stamp.ts_ms,
                dropped_before,
                input,
            })));
        }
    }

    /// An error the transport met, reported as an event to the control lane, in order.
    pub fn error(&self, error: SessionError) {
        self.router(RouterMsg::Report(Box::new(SessionEvent::Error(error))));
    }

    /// A reconnect `attempt` (1-based) begins, for `reason`.
    pub fn reconnecting(&self, attempt: u32, reason: String) {
        self.peers.hub.publish(
            Lane::Supervisor,
            LiveEvent::Reconnecting { attempt, reason },
        );
    }

    /// The connection is live again after a reconnect; `resumed` if the setup presented
    /// a resumption handle.
    pub fn reconnected(&self, resumed: bool) {
        self.telemetry.reconnected();
        self.peers
            .hub
            .publish(Lane::Supervisor, LiveEvent::Reconnected { resumed });
    }

    /// The client closes the session for good: the router hears of the disconnect (the
    /// phase moves) before the connection's end.
    pub fn disconnecting(&self) {
        self.router(RouterMsg::Lifecycle {
            step: Lifecycle::Sent(SessionCommand::Disconnect),
            ts_ms: None,
        });
    }

    /// Connection `conn` ended with `code` and `reason` (`client` when this side closed
    /// it): marked in the recording and routed as `Disconnected`. With `last` no reconnect
    /// follows: the supervisor hears why the session ends first, and the recording is
    /// flushed.
    pub fn connection_ended(
        &self,
        conn: u32,
        code: Option<u16>,
        reason: Option<String>,
        client: bool,
        last: bool,
    ) {
        if last {
            let why = describe_close(code, reason.as_deref());
            self.peers.supervisor.cast(SupervisorMsg::Ending(why));
        }
        let stamp = self.tap.mark_close(conn, code, reason.clone(), client);
        self.router(RouterMsg::LinkDown {
            code,
            reason,
            last,
            ts_ms: stamp.ts_ms,
        });
        if last {
            self.tap.flush();
        }
    }
}

/// The session is over: the router is gone and takes no more frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session is over: the router takes no more frames")]
pub struct SessionOver;
