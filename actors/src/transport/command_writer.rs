//! The live transport's writing half: [`Sending`], the connection's sender and what turns a
//! command into a frame, and the writer task that sends what waits in the [`Outbox`].
//!
//! Whoever writes holds [`Sending`]'s lock, and takes the next command from the outbox only
//! under it: the writer task while the connection is live, the Transport actor for the
//! setup frame, a close, and the last commands before a disconnect. So frames are stamped
//! (sequence numbers, the wire log) in the order they go out, whoever writes them, and no
//! command overtakes one pushed before it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::FutureExt;
use ractor::ActorRef;
use reel_protocol::{CommandEncoder, FrameKind, SessionCommand};
use tokio::sync::Mutex;

use super::link::{LinkFrame, LinkSender, Stamp};
use super::outbox::Outbox;
use super::tree_reports::TreeReports;
use super::wire_tap::WireTap;
use crate::child::Child;
use crate::fault::FaultHook;
use crate::mailbox::{Origin, TransportMsg};
use crate::panic_message::panic_message;
use crate::peers::Peers;
use crate::telemetry::TelemetryShared;

/// What a frame going out is stamped, recorded and reported with.
#[derive(Clone)]
pub(crate) struct WireEnds {
    /// Stamps and records frames.
    pub tap: Arc<WireTap>,
    /// Counts frames.
    pub telemetry: Arc<TelemetryShared>,
    /// The tree the commands sent are reported to.
    pub peers: Arc<Peers>,
}

impl WireEnds {
    /// What the transport tells the tree.
    pub(crate) fn reports(&self) -> TreeReports<'_> {
        TreeReports::new(&self.peers, &self.tap, &self.telemetry)
    }
}

/// The current connection's sender and what a command becomes on its wire.
pub(crate) struct Sending {
    /// The current connection's sender, while there is one.
    pub sender: Option<Box<dyn LinkSender>>,
    /// The current connection's number (each frame's stamp names it).
    pub conn: u32,
    encoder: CommandEncoder,
    frame_kind: FrameKind,
}

impl Sending {
    /// No connection yet; commands encoded with `encoder` into `frame_kind` frames.
    pub(crate) fn new(encoder: CommandEncoder, frame_kind: FrameKind) -> Self {
        Sending {
            sender: None,
            conn: 0,
            encoder,
            frame_kind,
        }
    }

    /// Encodes and writes a command; tells the router about the ones the phase or the
    /// latency measure depend on.
    pub(crate) async fn send_command(
        &mut self,
        ends: &WireEnds,
        command: SessionCommand,
        origin: Origin,
    ) {
        let Some(bytes) = self.encoder.encode(&command) else {
            tracing::debug!(kind = command.kind(), "command has no frame (suppressed)");
            return;
        };
        let bytes = Bytes::from(bytes);
        let audio = matches!(command, SessionCommand::SendAudio(_));
        let stamp = self.stamp(ends, &bytes, audio, origin);
        // Live, the application's text is on the wire: the user's text.
        ends.reports().sent(command, origin, stamp, true);
        self.send_frame(bytes).await;
    }

    /// Stamps and records a frame about to be sent.
    pub(crate) fn stamp(
        &self,
        ends: &WireEnds,
        bytes: &Bytes,
        audio: bool,
        origin: Origin,
    ) -> Stamp {
        let binary = self.frame_kind == FrameKind::Binary;
        ends.telemetry.frame_out(bytes.len(), audio);
        ends.tap.stamp_out(self.conn, binary, origin, bytes)
    }

    /// Writes a stamped frame.
    pub(crate) async fn send_frame(&mut self, bytes: Bytes) {
        let Some(sender) = &mut self.sender else {
            return;
        };
        if let Err(error) = sender.send(LinkFrame::new(self.frame_kind, bytes)).await {
            // The reader sees the broken connection and reports it; nothing else to do here.
            tracing::warn!(%error, conn = self.conn, "could not write a frame");
        }
    }

    /// Sends every command the outbox lets out now, in order (all of them while live).
    pub(crate) async fn send_waiting(&mut self, ends: &WireEnds, outbox: &Outbox) {
        while let Some((command, origin)) = outbox.pop() {
            self.send_command(ends, command, origin).await;
        }
    }
}

/// What the writer task is given.
pub(crate) struct CommandWriter {
    /// What it sends.
    pub outbox: Arc<Outbox>,
    /// The connection's sender, shared with the Transport actor.
    pub sending: Arc<Mutex<Sending>>,
    /// Stamps, records, reports.
    pub ends: WireEnds,
    /// The session's fault injector, if a simulator installed one.
    pub fault: Option<Arc<dyn FaultHook>>,
    /// The transport's items taken so far (the fault hook's item numbers), shared with the
    /// actor: a command the writer sends is one of the transport's items, as it was when
    /// each came as a message.
    pub taken: Arc<AtomicU64>,
    /// Told when the writer fails.
    pub transport: ActorRef<TransportMsg>,
}

impl CommandWriter {
    /// Sends what the outbox lets out each time it is rung, until the session ends. A panic
    /// while sending (a bug, a simulator's fault) fails the Transport actor with its text, as
    /// a panic in the actor's handler did.
    pub(crate) async fn run(self) {
        loop {
            self.outbox.rung().await;
            let sent = std::panic::AssertUnwindSafe(self.send_all())
                .catch_unwind()
                .await;
            if let Err(payload) = sent {
                self.outbox.set_flow(super::outbox::Flow::Stopped);
                let reason = panic_message(payload.as_ref());
                let _ = self.transport.cast(TransportMsg::WriterFailed { reason });
                return;
            }
        }
    }

    async fn send_all(&self) {
        // Uncontended but for a reconnect or a disconnect: taken without building the
        // semaphore's future when it is free.
        let mut sending = match self.sending.try_lock() {
            Ok(sending) => sending,
            Err(_) => self.sending.lock().await,
        };
        while let Some((command, origin)) = self.outbox.pop() {
            let taken = self.taken.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(hook) = &self.fault {
                hook.before(Child::Transport, taken);
            }
            sending.send_command(&self.ends, command, origin).await;
        }
    }
}
