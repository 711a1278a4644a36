//! The live transport's writing half: [`Sending`], the connection's sender and what turns a
//! command into a frame, and the writer task that sends what waits in the [`Outbox`].
//!
//! Whoever writes holds [`Sending`]'s lock, and takes the next command from the outbox only
//! under it: the writer task while the connection is live, the Transport actor for the
//! setup frame, a close, and the last commands before a disconnect. So frames are stamped
//! (sequence numbers, the wire log) in the order they go out, whoever writes them, and no
//! command overtakes one pushed before it.
//!
//! The application's own task writes in place while the writer is idle
//! ([`CommandWriter::write_in_place`], decision 0091): it takes the lock without waiting
//! and writes what the link takes without waiting ([`LinkSender::try_send`]). What the link
//! could not take whole (a frame not taken, a flush not finished) is kept in [`Sending`]
//! and finished by the next writer before anything else goes out on the link.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::FutureExt;
use ractor::ActorRef;
use reel_protocol::{CommandEncoder, FrameKind, SessionCommand, encode_audio_input};
use tokio::sync::Mutex;

use super::link::{LinkFrame, LinkSender, Stamp, TrySent};
use super::outbox::{Outbox, Outgoing, Pushed, Queued};
use super::tree_reports::TreeReports;
use super::wire_tap::WireTap;
use crate::child::Child;
use crate::fault::FaultHook;
use crate::mailbox::{Origin, TransportMsg};
use crate::panic_message::panic_message;
use crate::peers::Peers;
use crate::slot::Route;
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
    /// Whether the session has tools that consume the user's input (fixed before the
    /// transport starts): only then is the application's audio reported to the tree.
    pub forwards_input: bool,
}

impl WireEnds {
    /// What the transport tells the tree.
    pub(crate) fn reports(&self) -> TreeReports<'_> {
        TreeReports::new(&self.peers, &self.tap, &self.telemetry)
    }
}

/// The current connection's sender and what a command becomes on its wire.
///
/// `repr(C)`, in this order: what writing an audio chunk reads (the sender, the connection's
/// number and frame kind, whether a write in place left anything) first, so that with the
/// lock's own fields before them they fill one cache line of the [`CommandWriter`]; the
/// encoder, which an audio chunk does not read, and the frame left unsent after.
#[repr(C)]
pub(crate) struct Sending {
    /// The current connection's sender, while there is one.
    pub sender: Option<Box<dyn LinkSender>>,
    /// The current connection's number (each frame's stamp names it).
    pub conn: u32,
    frame_kind: FrameKind,
    /// A frame written in place whose flush did not finish: flushed next.
    unflushed: bool,
    /// Whether `unsent` holds a frame: read on every write, beside the sender, where
    /// `unsent` itself is not.
    unsent_waits: bool,
    encoder: CommandEncoder,
    /// A frame written in place that the link did not take: stamped, sent next. Boxed:
    /// rare, and a pointer keeps the sender's lock and this struct to two lines.
    unsent: Option<Box<Bytes>>,
}

impl Sending {
    /// No connection yet; commands encoded with `encoder` into `frame_kind` frames.
    pub(crate) fn new(encoder: CommandEncoder, frame_kind: FrameKind) -> Self {
        Sending {
            sender: None,
            conn: 0,
            encoder,
            frame_kind,
            unflushed: false,
            unsent_waits: false,
            unsent: None,
        }
    }

    /// Sets the connection's sender (`None`: the connection is gone). What a write in
    /// place left for the previous one goes with it, as a frame sent to a broken link does.
    pub(crate) fn set_sender(&mut self, sender: Option<Box<dyn LinkSender>>) {
        self.sender = sender;
        self.unsent = None;
        self.unsent_waits = false;
        self.unflushed = false;
    }

    /// Whether nothing a write in place left waits.
    fn is_settled(&self) -> bool {
        !self.unsent_waits && !self.unflushed
    }

    /// Finishes what a write in place left: the frame the link did not take, then the
    /// flush that did not finish. Everything that writes to the link calls it first.
    pub(crate) async fn settle(&mut self) {
        if std::mem::take(&mut self.unsent_waits)
            && let Some(bytes) = self.unsent.take()
        {
            self.write(*bytes).await;
        }
        if std::mem::take(&mut self.unflushed)
            && let Some(sender) = &mut self.sender
            && let Err(error) = sender.flush().await
        {
            tracing::warn!(%error, conn = self.conn, "could not write a frame");
        }
    }

    /// Encodes and writes a command; tells the router about the ones the phase or the
    /// latency measure depend on.
    pub(crate) async fn send_command(&mut self, ends: &WireEnds, out: Outgoing) {
        if let Some(bytes) = self.frame_of(ends, out) {
            self.send_frame(bytes).await;
        }
    }

    /// The frame `command` goes out as, stamped, recorded and reported to the tree; `None`
    /// if it has none (suppressed).
    fn frame_of(&self, ends: &WireEnds, out: Outgoing) -> Option<Bytes> {
        let Outgoing {
            command,
            origin,
            dropped_before,
        } = out;
        // Audio, most of what goes out, is encoded without the encoder, which it does not
        // need: read for every command, the encoder's line (the writer's third) was a cache
        // miss a chunk at thousands of sessions.
        let encoded = match &command {
            SessionCommand::SendAudio(pcm) => Some(encode_audio_input(pcm)),
            other => self.encoder.encode(other),
        };
        let Some(bytes) = encoded else {
            tracing::debug!(kind = command.kind(), "command has no frame (suppressed)");
            return None;
        };
        let bytes = Bytes::from(bytes);
        let audio = matches!(command, SessionCommand::SendAudio(_));
        let stamp = self.stamp_dropped(ends, &bytes, audio, origin, dropped_before);
        // Live, the application's text is on the wire: the user's text. Audio is reported
        // only as the user's input to tools that consume it (the rest of the tree does
        // not hear of it): a voice session's fifty chunks a second skip the tree then.
        if !audio || ends.forwards_input {
            ends.reports()
                .sent(command, origin, stamp, true, dropped_before);
        }
        Some(bytes)
    }

    /// Stamps and records a frame about to be sent.
    pub(crate) fn stamp(
        &self,
        ends: &WireEnds,
        bytes: &Bytes,
        audio: bool,
        origin: Origin,
    ) -> Stamp {
        self.stamp_dropped(ends, bytes, audio, origin, 0)
    }

    /// [`Sending::stamp`], for a frame after which `dropped_before` of the application's
    /// audio chunks were dropped unsent.
    fn stamp_dropped(
        &self,
        ends: &WireEnds,
        bytes: &Bytes,
        audio: bool,
        origin: Origin,
        dropped_before: u64,
    ) -> Stamp {
        let binary = self.frame_kind == FrameKind::Binary;
        ends.telemetry.frame_out(bytes.len(), audio);
        ends.tap
            .stamp_out_dropped(self.conn, binary, origin, bytes, dropped_before)
    }

    /// Writes a stamped frame, after what a write in place left.
    pub(crate) async fn send_frame(&mut self, bytes: Bytes) {
        self.settle().await;
        self.write(bytes).await;
    }

    async fn write(&mut self, bytes: Bytes) {
        let Some(sender) = &mut self.sender else {
            return;
        };
        if let Err(error) = sender.send(LinkFrame::new(self.frame_kind, bytes)).await {
            // The reader sees the broken connection and reports it; nothing else to do here.
            tracing::warn!(%error, conn = self.conn, "could not write a frame");
        }
    }

    /// [`Sending::send_command`] without waiting, for a write in place: encodes, stamps
    /// and reports the command, and writes its frame if the link takes it now. Returns
    /// whether it is all written; if not, what is left is kept for [`Sending::settle`].
    /// Only while settled (nothing left from before).
    fn send_command_now(&mut self, ends: &WireEnds, out: Outgoing) -> bool {
        let Some(bytes) = self.frame_of(ends, out) else {
            return true;
        };
        let Some(sender) = &mut self.sender else {
            return true;
        };
        match sender.try_send(LinkFrame::new(self.frame_kind, bytes)) {
            TrySent::Sent => true,
            TrySent::Unflushed => {
                self.unflushed = true;
                false
            }
            TrySent::WouldWait(frame) => {
                self.unsent = Some(Box::new(frame.bytes));
                self.unsent_waits = true;
                false
            }
            TrySent::Failed(error) => {
                // As `write`: the reader sees the broken connection and reports it.
                tracing::warn!(%error, conn = self.conn, "could not write a frame");
                true
            }
        }
    }

    /// Sends every command the outbox lets out now, in order (all of them while live),
    /// after what a write in place left.
    pub(crate) async fn send_waiting(&mut self, ends: &WireEnds, outbox: &Outbox) {
        self.settle().await;
        while let Some(out) = outbox.pop() {
            self.send_command(ends, out).await;
        }
    }
}

/// The transport's writing half, one allocation a session: the outbox, the connection's
/// sender and what stamps a frame, shared by the writer task, the application's pushes
/// (through the transport's [`Slot`](crate::slot::Slot), which holds it weakly) and the
/// Transport actor. A command on its way out touches this, the wire tap and the link.
///
/// `repr(C)`, aligned to a cache line, in this order: what an audio chunk written in place
/// reads lies in three lines — the ends, the item count and the fault hook (with the
/// transport's handle, rarely read, filling the line); the sender's lock and [`Sending`]'s
/// hot fields; after [`Sending`]'s cold fields, the outbox's lock, state and live flag —
/// and the rest after. At thousands of sessions each line is a cache miss a chunk; laid
/// out by the compiler, a chunk touched four or five of the six it spanned (decision 0098).
/// A test below holds the layout.
#[repr(C, align(64))]
pub(crate) struct CommandWriter {
    /// Stamps, records, reports.
    pub ends: WireEnds,
    /// The transport's items taken so far (the fault hook's item numbers), shared with the
    /// actor: a command the writer sends is one of the transport's items, as it was when
    /// each came as a message.
    pub taken: AtomicU64,
    /// The session's fault injector, if a simulator installed one.
    pub fault: Option<Arc<dyn FaultHook>>,
    /// Told when the writer fails.
    pub transport: ActorRef<TransportMsg>,
    /// The connection's sender; the Transport actor takes it too (setup, close,
    /// reconnect).
    pub sending: Mutex<Sending>,
    /// What it sends.
    pub outbox: Outbox,
}

/// The Transport actor's slot hands commands here (`Slot::route_through`): every `Send`
/// but a disconnect, which goes to the actor (it ends the connection, after what was sent
/// before it). A command comes back only once the transport is gone.
impl Route<TransportMsg> for CommandWriter {
    fn take(&self, message: TransportMsg) -> Option<TransportMsg> {
        match message {
            TransportMsg::Send(command, origin) if command != SessionCommand::Disconnect => self
                .push(command, origin)
                .err()
                .map(|(command, origin)| TransportMsg::Send(command, origin)),
            other => Some(other),
        }
    }
}

impl CommandWriter {
    /// Pushes `command` to the outbox and, if the writer was idle, writes what waits in
    /// place; gives it back only once the transport is gone.
    pub(crate) fn push(&self, command: SessionCommand, origin: Origin) -> Result<(), Queued> {
        // What writing it touches, read at once (decision 0093).
        std::hint::black_box((self.ends.tap.warm(), self.ends.telemetry.warm()));
        match self.outbox.push(command, origin)? {
            Pushed::Queued => {}
            Pushed::Rung => self.write_in_place(None),
            Pushed::Write(out) => self.write_in_place(Some(out)),
        }
        Ok(())
    }

    /// Sends what the outbox lets out each time it is rung, until the session ends. A panic
    /// while sending (a bug, a simulator's fault) fails the Transport actor with its text, as
    /// a panic in the actor's handler did.
    pub(crate) async fn run(self: Arc<Self>) {
        loop {
            self.outbox.rung().await;
            let sent = std::panic::AssertUnwindSafe(self.send_all())
                .catch_unwind()
                .await;
            if let Err(payload) = sent {
                self.fail(payload.as_ref());
                return;
            }
        }
    }

    async fn send_all(&self) {
        // Uncontended but for a reconnect, a disconnect or a write in place: taken without
        // building the semaphore's future when it is free.
        let mut sending = match self.sending.try_lock() {
            Ok(sending) => sending,
            Err(_) => self.sending.lock().await,
        };
        sending.settle().await;
        while let Some(out) = self.outbox.pop() {
            self.before_sending();
            sending.send_command(&self.ends, out).await;
        }
    }

    /// Writes `first` (a command the outbox handed out unqueued, [`Pushed::Write`]) and
    /// what the outbox holds on the caller's task, without waiting: called by
    /// [`CommandWriter::push`] when a command is pushed while the writer is idle (the
    /// outbox then counts it rung). If the connection's sender is in use, or the link
    /// cannot take a frame whole now, the writer's task is rung for the rest, which it
    /// sends after what was left; `first` goes back to the outbox's front then, and if the
    /// connection stopped being live before it could be written.
    pub(crate) fn write_in_place(&self, first: Option<Outgoing>) {
        let Ok(mut sending) = self.sending.try_lock() else {
            self.ring_for(first);
            return;
        };
        if !sending.is_settled() {
            drop(sending);
            self.ring_for(first);
            return;
        }
        // Checked under the sender's lock: the Transport actor leaves `Live` before it
        // takes the lock to drop the connection's sender, so a command written here still
        // goes out on a live connection's sender, as one popped just before would.
        let first = match first {
            Some(out) if !self.outbox.is_live() => {
                self.outbox.unpop(out);
                None
            }
            first => first,
        };
        let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut next = first;
            while let Some(out) = next.take().or_else(|| self.outbox.pop()) {
                self.before_sending();
                if !sending.send_command_now(&self.ends, out) {
                    self.outbox.ring();
                    return;
                }
            }
        }));
        if let Err(payload) = written {
            self.fail(payload.as_ref());
        }
    }

    /// Leaves `first` (if any) and what waits to the writer's task.
    fn ring_for(&self, first: Option<Outgoing>) {
        if let Some(out) = first {
            self.outbox.unpop(out);
        }
        self.outbox.ring();
    }

    /// Counts the transport's next item and asks the fault hook about it.
    fn before_sending(&self) {
        let taken = self.taken.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(hook) = &self.fault {
            hook.before(Child::Transport, taken);
        }
    }

    /// Sending failed with `payload` (a panic): the outbox refuses from now on, and the
    /// Transport actor fails with its text.
    fn fail(&self, payload: &(dyn std::any::Any + Send)) {
        self.outbox.set_flow(super::outbox::Flow::Stopped);
        let reason = panic_message(payload);
        let _ = self.transport.cast(TransportMsg::WriterFailed { reason });
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    /// What a chunk written in place reads lies in three of the writer's lines: the ends,
    /// the count and the hook in the first; the sender's lock (its fields before the
    /// guarded value's) and [`Sending`]'s hot fields in the second; the outbox's lock,
    /// state and live flag in the fourth (the third holds [`Sending`]'s cold fields).
    /// Fails if a field or a dependency's lock grows.
    #[test]
    fn a_chunk_written_in_place_reads_three_lines() {
        let line = |offset: usize| offset / 64;
        assert_eq!(line(offset_of!(CommandWriter, ends)), 0);
        assert_eq!(line(offset_of!(CommandWriter, fault) + 15), 0);
        let sending = offset_of!(CommandWriter, sending);
        assert_eq!(sending, 64);
        let lock_fields = size_of::<Mutex<Sending>>() - size_of::<Sending>();
        assert_eq!(
            line(sending + lock_fields + offset_of!(Sending, unsent_waits)),
            1
        );
        let outbox = offset_of!(CommandWriter, outbox);
        assert_eq!(outbox, 192);
        assert_eq!(line(outbox + super::super::outbox::HOT_BYTES - 1), 3);
    }
}
