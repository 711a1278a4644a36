//! The tape-reading transport: stands behind `TransportMsg` in place of the live transport,
//! and plays a recorded session to the real tree.
//!
//! A reader task walks the tape in order. It opens each recorded connection the way the
//! live transport does (phase steps, a setup frame built from the session config and compared
//! with the recorded one), stamps each recorded inbound frame with its recorded time on the
//! session clock and hands it to the router, reports each recorded connection end exactly as
//! the live transport reported it, and reconnects when the recording did. Only the setup
//! handshake flows until the harness releases the tape. Frames the runtime sends are compared
//! with the recorded ones; frames the application sent are recorded for audit only and not
//! re-sent.
//!
//! It stands on the transport seam and on nothing else of the tree: it names only
//! `reel_actors::transport::seam` (a test, `tape_reader_seam`, reads this file to hold it
//! there). The setup frame comes from [`TransportArgs::connection_setup`], as the live
//! transport's does; frames reach the router through [`TreeReports::deliver`]; the pauses
//! for the tree to catch up are [`TreeReports::barrier`] and
//! [`TreeReports::tool_input_room`].

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SpawnErr};
use reel_actors::transport::seam::{
    LinkFrame, ManualClock, Origin, TransportArgs, TransportFactory, TransportMsg, TreeReports,
};
use reel_protocol::{
    ClientMessage, ClientMessageKind, CommandEncoder, FrameKind, SessionCommand, UserInput,
    client_frame_may_be, decode_client, decode_server,
};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use crate::outbound::OutboundMatcher;
use crate::pacing::Pacing;
use crate::tape::{Tape, TapeItem, is_app_outbound};
use crate::tape_scan::{CallFrame, answers_of, call_frame};

/// With [`Pacing::AsFastAsConsumed`] and [`Pacing::Causal`], how many frames may be handed
/// to the tree before the tape waits for it to consume them: enough to keep every actor
/// busy, few enough to keep memory bounded whatever the tape's length.
pub const CONSUMED_WINDOW: usize = 128;

/// The least time a recorded runtime frame that the tape cannot
/// tie to what provokes it (anything but a tool response with call ids) is waited for: a
/// busy machine is slower than the recording was. See [`ReplayOptions::produce_timeout`].
pub const MIN_PRODUCE_WAIT: Duration = Duration::from_secs(5);

/// How many times the recorded gap (from the inbound frame before
/// a runtime frame to the frame) such a frame is waited for, at least [`MIN_PRODUCE_WAIT`]
/// and at most [`ReplayOptions::produce_timeout`].
pub const PRODUCE_GAP_FACTOR: u32 = 4;

/// What a replay transport shares with the harness that drives it.
#[derive(Debug)]
pub struct ReplayShared {
    /// Recorded and replayed outbound frames.
    pub matcher: OutboundMatcher,
    /// The session's frame clock, set to each recorded frame's time.
    pub clock: Arc<ManualClock>,
    /// Set by the harness to let the recorded frames flow.
    pub release: watch::Sender<bool>,
    /// Set once the first setup handshake has been played.
    pub handshake: watch::Sender<bool>,
    /// Set once every recorded frame has been handed over and consumed.
    pub drained: watch::Sender<bool>,
    reconnecting: AtomicBool,
    presented_handle: AtomicBool,
}

impl ReplayShared {
    /// Shared state for a replay whose recording starts at `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        ReplayShared {
            matcher: OutboundMatcher::default(),
            clock: Arc::new(ManualClock::new(start_ms)),
            release: watch::channel(false).0,
            handshake: watch::channel(false).0,
            drained: watch::channel(false).0,
            reconnecting: AtomicBool::new(false),
            presented_handle: AtomicBool::new(false),
        }
    }
}

/// How a replay runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayOptions {
    /// Pacing of recorded frames.
    pub pacing: Pacing,
    /// At every pacing, the longest wait for the runtime to produce a recorded frame
    /// before reporting it missing and going on. The wait is decided from the recording
    /// (decision 0023): a tool response to calls the tape delivered is waited for this
    /// long; one to calls the tape never made cannot be produced and is reported missing at
    /// once; any other runtime frame is waited for [`PRODUCE_GAP_FACTOR`] times its
    /// recorded gap, at least [`MIN_PRODUCE_WAIT`], at most this.
    pub produce_timeout: Duration,
    /// The session runs without the application's phases and callbacks (the command line
    /// replays a log with no application code): runtime frames only they produce —
    /// instruction updates, prompts a callback sent — are taken from the recording at their
    /// place instead of expected, and listed by [`crate::Replay::taken_from_recording`].
    pub without_application: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            pacing: Pacing::default(),
            produce_timeout: Duration::from_secs(10),
            without_application: false,
        }
    }
}

/// Spawns a [`ReplayTransport`] reading `tape`.
pub struct ReplayTransportFactory {
    /// The recording.
    pub tape: Tape,
    /// Shared with the harness.
    pub shared: Arc<ReplayShared>,
    /// Pacing and timeouts.
    pub options: ReplayOptions,
}

impl TransportFactory for ReplayTransportFactory {
    fn spawn(
        self: Box<Self>,
        args: TransportArgs,
        supervisor: ActorCell,
    ) -> BoxFuture<'static, Result<ActorRef<TransportMsg>, SpawnErr>> {
        Box::pin(async move {
            let factory = *self;
            let (actor, _) =
                Actor::spawn_linked(None, ReplayTransport, (args, factory), supervisor).await?;
            Ok(actor)
        })
    }
}

/// The ReplayTransport actor.
pub struct ReplayTransport;

/// The replay transport's state.
pub struct ReplayTransportState {
    args: Arc<TransportArgs>,
    shared: Arc<ReplayShared>,
    encoder: CommandEncoder,
    frame_kind: FrameKind,
    reader: Option<(Tape, ReplayOptions)>,
    task: Option<JoinHandle<()>>,
    /// Whether the session's end has been reported.
    finished: Arc<AtomicBool>,
    /// Serializes writes by the reader task and the actor (one connection at a time).
    conn: Arc<Mutex<u32>>,
}

impl Actor for ReplayTransport {
    type Msg = TransportMsg;
    type State = ReplayTransportState;
    type Arguments = (TransportArgs, ReplayTransportFactory);

    async fn pre_start(
        &self,
        _myself: ActorRef<TransportMsg>,
        (args, factory): (TransportArgs, ReplayTransportFactory),
    ) -> Result<ReplayTransportState, ActorProcessingErr> {
        let platform = args.endpoint.platform().clone();
        Ok(ReplayTransportState {
            encoder: args.config.command_encoder(&platform),
            frame_kind: platform.frame_kind(),
            args: Arc::new(args),
            shared: factory.shared,
            reader: Some((factory.tape, factory.options)),
            task: None,
            finished: Arc::new(AtomicBool::new(false)),
            conn: Arc::new(Mutex::new(0)),
        })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<TransportMsg>,
        state: &mut ReplayTransportState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(task) = state.task.take() {
            task.abort();
        }
        state.args.tap.flush();
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<TransportMsg>,
        message: TransportMsg,
        state: &mut ReplayTransportState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            TransportMsg::Start => {
                if let Some((tape, options)) = state.reader.take() {
                    let reader = TapeReader {
                        args: Arc::clone(&state.args),
                        shared: Arc::clone(&state.shared),
                        tape,
                        options,
                        finished: Arc::clone(&state.finished),
                        conn: Arc::clone(&state.conn),
                        setup_next: false,
                    };
                    state.task = Some(tokio::spawn(reader.run()));
                }
            }
            TransportMsg::Send(SessionCommand::Disconnect, _) | TransportMsg::Disconnect => {
                state.disconnect().await;
            }
            TransportMsg::Send(command, origin) => state.send(command, origin).await,
            TransportMsg::SetupComplete { .. }
                if state.shared.reconnecting.swap(false, Ordering::AcqRel) =>
            {
                let resumed = state.shared.presented_handle.load(Ordering::Acquire);
                reports(&state.args).reconnected(resumed);
            }
            // The tape says when connections end and reconnect; the live transport's own
            // timers and link events have no counterpart here.
            _ => {}
        }
        Ok(())
    }
}

impl ReplayTransportState {
    async fn send(&mut self, command: SessionCommand, origin: Origin) {
        let Some(bytes) = self.encoder.encode(&command) else {
            return;
        };
        let bytes = Bytes::from(bytes);
        let binary = self.frame_kind == FrameKind::Binary;
        let stamp = match origin {
            Origin::App => {
                let conn = self.conn.lock().await;
                let stamp = self.args.tap.stamp_out(*conn, binary, origin, &bytes);
                self.shared
                    .matcher
                    .captured_app_frame(self.frame_kind, bytes);
                stamp
            }
            Origin::Runtime => {
                // Waits until the tape reaches the recorded frame, without the connection
                // lock: the tape reader takes it to hand over every frame before that one
                // (a tool answered while hundreds of audio frames are still to come).
                let expected = self.shared.matcher.next_expected().await;
                if let Some(entry) = &expected {
                    self.shared.clock.set(entry.ts_ms);
                }
                let conn = self.conn.lock().await;
                let stamp = self.args.tap.stamp_out(*conn, binary, origin, &bytes);
                // The tree hears of the frame before the tape is told it was produced: the
                // tape then hands over the frames recorded after it, which must reach the
                // router after this report, as live they came off the socket after it went
                // out (the phase's move back to `Active` before the next frame's events).
                reports(&self.args).sent(command, origin, stamp, false, 0);
                self.shared
                    .matcher
                    .produced(self.frame_kind, bytes, expected);
                return;
            }
        };
        // The application's text is not the user's here: the recording's own app frames
        // carry that (see `replay_app_frame`).
        reports(&self.args).sent(command, origin, stamp, false, 0);
    }

    /// The application ended a replay before its recording ended.
    async fn disconnect(&mut self) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let conn = *self.conn.lock().await;
        end_session(
            &self.args,
            conn,
            Some(1000),
            Some("client disconnect".to_owned()),
            true,
            true,
        );
    }
}

/// What this transport tells the tree: the same reports as the live transport's.
fn reports(args: &TransportArgs) -> TreeReports<'_> {
    args.tree()
}

/// Reports the end of connection `conn` exactly as the live transport does.
fn end_session(
    args: &TransportArgs,
    conn: u32,
    code: Option<u16>,
    reason: Option<String>,
    client: bool,
    last: bool,
) {
    let reports = reports(args);
    if client && last {
        reports.disconnecting();
    }
    reports.connection_ended(conn, code, reason, client, last);
}

/// Walks the tape and plays it.
struct TapeReader {
    args: Arc<TransportArgs>,
    shared: Arc<ReplayShared>,
    tape: Tape,
    options: ReplayOptions,
    finished: Arc<AtomicBool>,
    conn: Arc<Mutex<u32>>,
    /// The next entry on the tape is the recorded setup of the connection just opened
    /// ([`TapeReader::open_connection`] decoded it to compare): not decoded again.
    setup_next: bool,
}

impl TapeReader {
    async fn run(mut self) {
        let mut handshake_done = false;
        let mut setup_seen = false;
        let mut previous_ts: Option<u64> = None;
        // The last inbound frame's recorded time, and the calls delivered and not answered
        // yet: what decides how long a recorded runtime frame is waited for.
        let mut last_inbound_ts: Option<u64> = None;
        let mut open_calls: HashSet<String> = HashSet::new();
        // Frames handed over since the tree was last seen to have consumed everything.
        let mut in_flight = 0usize;
        self.open_connection().await;
        while let Some(next) = self.tape.next_entry() {
            let entry = match next {
                Ok(entry) => entry,
                Err(error) => {
                    tracing::warn!(%error, "the replay stops at a bad tape entry");
                    break;
                }
            };
            let known_setup = std::mem::take(&mut self.setup_next);
            match TapeItem::of(entry) {
                TapeItem::Inbound(entry) => {
                    if handshake_done {
                        self.wait_for_release().await;
                    }
                    if let Pacing::Recorded { speed } = self.options.pacing
                        && let Some(previous) = previous_ts
                        && speed > 0.0
                    {
                        let gap = entry.ts_ms.saturating_sub(previous) as f64 / speed;
                        tokio::time::sleep(Duration::from_secs_f64(gap / 1000.0)).await;
                    }
                    previous_ts = Some(entry.ts_ms);
                    last_inbound_ts = Some(entry.ts_ms);
                    // The frame is scanned once for the calls it makes: that tells both
                    // which calls are open and whether it starts calls.
                    let mut makes_calls = false;
                    if let Some(CallFrame::Calls(ids)) = call_frame(&entry.payload) {
                        makes_calls = true;
                        open_calls.extend(ids);
                    }
                    let is_setup_complete = !handshake_done
                        && decode_server(&entry.payload).is_ok_and(|m| m.setup_complete.is_some());
                    // A call that may read input starts here: the input that follows goes to
                    // it once the lane has started it (so the tape paces itself on it).
                    let starts_calls = makes_calls && reports(&self.args).forwards_input();
                    self.deliver(entry).await;
                    if is_setup_complete && !handshake_done {
                        handshake_done = true;
                        self.shared.handshake.send_replace(true);
                    }
                    in_flight += 1;
                    if self.options.pacing.waits_for_consumption()
                        && (in_flight >= CONSUMED_WINDOW || starts_calls)
                    {
                        self.barrier().await;
                        in_flight = 0;
                    }
                }
                TapeItem::RuntimeOutbound(entry) => {
                    if !setup_seen && known_setup {
                        // The setup of the connection just opened: the reader produced it.
                        setup_seen = true;
                        continue;
                    }
                    // Decoded once for every question below (a setup, the application's,
                    // the calls it answers, context).
                    let message = decode_client(&entry.payload).ok();
                    if !setup_seen && message.as_ref().is_some_and(|m| m.setup.is_some()) {
                        setup_seen = true;
                        continue;
                    }
                    if self.options.without_application
                        && message.as_ref().is_some_and(is_application_driven)
                    {
                        self.take_from_recording(&entry).await;
                        continue;
                    }
                    // The frames that followed it in the recording wait for it, at every
                    // pacing: handed over before it, they would change what the runtime
                    // does (a goAway routed ahead of a turn's end defers the instruction
                    // that turn sent to the next connection). Recorded gaps are no
                    // guarantee on a busy machine; how long it is waited for is decided
                    // from the recording (decision 0023).
                    let wait = match provoked(message.as_ref(), &mut open_calls) {
                        Some(false) => {
                            self.shared.matcher.unprovoked(entry);
                            continue;
                        }
                        Some(true) => self.options.produce_timeout,
                        None => self.gap_wait(entry.ts_ms, last_inbound_ts),
                    };
                    if message.as_ref().is_some_and(is_context_frame) && self.app_frame_next() {
                        // Live, deferred context leaves just before the application's next
                        // send: once the tree has handled what came before, the same flush.
                        self.barrier().await;
                        reports(&self.args).flush_deferred_context();
                    }
                    self.shared.matcher.expect(entry);
                    self.shared.matcher.wait_all_paired(wait).await;
                }
                TapeItem::AppOutbound(entry) => {
                    let message = decode_client(&entry.payload).ok();
                    if message.as_ref().is_some_and(|m| m.client_content.is_some()) {
                        // Live, the application sent its turn once the tree had handled
                        // what came before (it answers the model's turn): what follows it
                        // on the tape (the model's answer, a tool call whose tool writes
                        // state) must not overtake that handling (the turn's pipeline and
                        // its state writes), or the journal's order would depend on the
                        // machine. At every pacing. Realtime input streams: no wait.
                        self.barrier().await;
                        in_flight = 0;
                    }
                    let handed = self.replay_app_frame(&entry, message).await;
                    // Input handed to a running tool: the tape waits until it has room for
                    // more (see `barrier`).
                    if handed > 0
                        && self.options.pacing.waits_for_consumption()
                        && reports(&self.args).input_running()
                    {
                        self.barrier().await;
                        in_flight = 0;
                    }
                }
                TapeItem::Close(entry) => {
                    // Live, the connection ended after the tree had handled every frame
                    // before the marker and sent every runtime frame recorded before it
                    // (a terminal phase's instruction right after the last turnComplete):
                    // at any pacing, the marker waits for both.
                    self.settle().await;
                    in_flight = 0;
                    self.shared.clock.set(entry.ts_ms);
                    let Some(mark) = entry.close.clone() else {
                        continue; // `TapeItem::Close` always carries a mark
                    };
                    let last = self.tape.peek().is_none();
                    let conn = *self.conn.lock().await;
                    if last {
                        if !self.finished.swap(true, Ordering::AcqRel) {
                            end_session(
                                &self.args,
                                conn,
                                mark.code,
                                mark.reason,
                                mark.client,
                                true,
                            );
                        }
                    } else {
                        end_session(
                            &self.args,
                            conn,
                            mark.code,
                            mark.reason.clone(),
                            mark.client,
                            false,
                        );
                        let reason = mark.reason.unwrap_or_else(|| "connection lost".to_owned());
                        reports(&self.args).reconnecting(1, reason);
                        self.shared.reconnecting.store(true, Ordering::Release);
                        setup_seen = false;
                        self.open_connection().await;
                        // The new connection's setup and setupComplete follow on the tape.
                    }
                }
            }
        }
        // A tape cut without a close marker: what it recorded is still owed.
        self.settle().await;
        self.shared.matcher.tape_done();
        self.shared.matcher.report_missing();
        self.shared.drained.send_replace(true);
    }

    /// Opens the next connection as the live transport does: phase steps around a setup
    /// frame built from the config, presenting the latest resumption handle. The setup is
    /// compared with the recorded one, which must come next on the tape.
    async fn open_connection(&mut self) {
        let mut conn = self.conn.lock().await;
        *conn += 1;
        let setup = self.args.connection_setup();
        self.shared
            .presented_handle
            .store(setup.presented_handle, Ordering::Release);
        let setup = setup.frame;
        let recorded = self.tape.peek().cloned().filter(|e| is_setup(&e.payload));
        if let Some(entry) = &recorded {
            self.shared.clock.set(entry.ts_ms);
        }
        self.setup_next = recorded.is_some();
        let kind = self.args.endpoint.platform().frame_kind();
        let binary = kind == FrameKind::Binary;
        let stamp = self
            .args
            .tap
            .stamp_out(*conn, binary, Origin::Runtime, &setup);
        self.shared.matcher.produced(kind, setup, recorded);
        reports(&self.args).connecting(stamp);
    }

    async fn deliver(&self, entry: reel_recorder::wire_log::WireEntry) {
        let conn = *self.conn.lock().await;
        self.shared.clock.set(entry.ts_ms);
        let stamp = self.args.tap.stamp_in(conn, entry.binary, &entry.payload);
        let kind = if entry.binary {
            FrameKind::Binary
        } else {
            FrameKind::Text
        };
        // Waits while the router is full, as the live reader does.
        let frame = LinkFrame::new(kind, entry.payload);
        let _ = reports(&self.args).deliver(conn, stamp, frame).await;
    }

    /// A frame the application sent is not re-sent (there is no wire), but it keeps its
    /// place in the session: it is stamped with its recorded time, its user text reaches the
    /// transcript, what it did to the session phase (answering tool calls by hand) is
    /// reproduced, and its activity signals (client VAD, or `activity_end` by hand) reach
    /// the router as they did live, where the end of the user's turn starts the
    /// first-response measure. Its realtime input reaches the tools that consume input, if
    /// the session has any: returns how many pieces were handed over. `message` is the
    /// frame decoded (`None`: not a Live client frame, which only keeps its place).
    async fn replay_app_frame(
        &self,
        entry: &reel_recorder::wire_log::WireEntry,
        message: Option<ClientMessage>,
    ) -> usize {
        let conn = *self.conn.lock().await;
        self.shared.clock.set(entry.ts_ms);
        // The application's audio chunks dropped unsent before this one, as recorded.
        let dropped_before = entry.dropped_before.unwrap_or(0);
        let stamp = self.args.tap.stamp_out_dropped(
            conn,
            entry.binary,
            Origin::App,
            &entry.payload,
            dropped_before,
        );
        let Some(message) = message else {
            return 0;
        };
        let reports = reports(&self.args);
        if let Some(text) = message.user_text() {
            reports.app_text(text, stamp);
        }
        // In the order the live transport reports them: the text, the input, the command.
        let mut handed = 0;
        if reports.forwards_input() {
            for (part, input) in (0..).zip(UserInput::of_message(&message)) {
                let dropped_before = if part == 0 { dropped_before } else { 0 };
                reports.app_input(input, part, stamp, dropped_before);
                handed += 1;
            }
        }
        // The session's first video frame makes it an audio-video one
        // (`session:session_type`), as the live transport's report of it does.
        if let Some(video) = UserInput::of_message(&message)
            .into_iter()
            .find_map(|input| match input {
                UserInput::Video(data) => Some(data),
                _ => None,
            })
        {
            reports.sent(
                SessionCommand::SendVideo(video),
                Origin::App,
                stamp,
                false,
                0,
            );
        }
        if let Some(input) = &message.realtime_input {
            let signals = [
                (
                    input.activity_start.is_some(),
                    SessionCommand::ActivityStart,
                ),
                (input.activity_end.is_some(), SessionCommand::ActivityEnd),
                (
                    input.audio_stream_end == Some(true),
                    SessionCommand::AudioStreamEnd,
                ),
            ];
            for (present, command) in signals {
                if present {
                    reports.sent(command, Origin::App, stamp, false, 0);
                }
            }
        }
        // The application's instruction: the control lane sends the latest again after a
        // reconnect. A replay without the application takes the runtime's instruction
        // updates from the recording, so its control lane must not send one of its own.
        if let Some(text) = message.instruction_update()
            && !self.options.without_application
        {
            let command = SessionCommand::UpdateInstruction(text);
            reports.sent(command, Origin::App, stamp, false, 0);
        }
        if let Some(responses) = message.tool_response.and_then(|r| r.function_responses) {
            let command = SessionCommand::SendToolResponse(responses);
            reports.sent(command, Origin::App, stamp, false, 0);
        }
        handed
    }

    /// A runtime frame only application code produces, in a replay without it: stamped at
    /// its place (so sequence numbers stay aligned) and noted, not expected.
    async fn take_from_recording(&self, entry: &reel_recorder::wire_log::WireEntry) {
        let conn = *self.conn.lock().await;
        self.shared.clock.set(entry.ts_ms);
        self.args
            .tap
            .stamp_out(conn, entry.binary, Origin::Runtime, &entry.payload);
        self.shared.matcher.taken_from_recording(entry.seq);
    }

    /// How long a runtime frame recorded at `ts_ms` is waited for when nothing on the tape
    /// ties it to what provokes it: [`PRODUCE_GAP_FACTOR`] times its recorded gap from the
    /// inbound frame before it, at least [`MIN_PRODUCE_WAIT`], at most the produce timeout.
    fn gap_wait(&self, ts_ms: u64, last_inbound_ts: Option<u64>) -> Duration {
        let gap = Duration::from_millis(ts_ms.saturating_sub(last_inbound_ts.unwrap_or(ts_ms)));
        gap.saturating_mul(PRODUCE_GAP_FACTOR)
            .max(MIN_PRODUCE_WAIT)
            .min(self.options.produce_timeout)
    }

    async fn wait_for_release(&self) {
        let mut release = self.shared.release.subscribe();
        let _ = release.wait_for(|released| *released).await;
    }

    /// Waits until the tree has handled every frame handed over so far and produced every
    /// recorded runtime frame the tape has reached (those it does not produce within
    /// `produce_timeout` are reported missing).
    async fn settle(&self) {
        self.barrier().await;
        self.shared
            .matcher
            .wait_all_paired(self.options.produce_timeout)
            .await;
    }

    /// Whether the next entry on the tape is a frame the application sent.
    fn app_frame_next(&mut self) -> bool {
        self.tape.peek().is_some_and(is_app_outbound)
    }

    /// Waits until every lane has handled everything routed so far.
    async fn barrier(&self) {
        let tree = reports(&self.args);
        if tree.barrier().await.is_err() {
            return; // the session is over
        }
        // Live, the user's input comes in real time and a tool has time to take it; here it
        // comes as fast as the tree takes it: the tape waits for the tools to make room.
        if !tree.tool_input_room(self.options.produce_timeout).await {
            tracing::warn!("a tool does not take its input: the replay reads on");
        }
    }
}

/// Whether a recorded runtime frame is context the runtime sends (a `clientContent` of
/// model turns that does not ask the model to answer): the frame deferred delivery holds
/// back until the application's next send (`docs/decisions/0050-conversation-control.md`).
fn is_context_frame(message: &ClientMessage) -> bool {
    let Some(content) = &message.client_content else {
        return false;
    };
    content.turn_complete != Some(true)
        && content.turns.as_ref().is_some_and(|turns| {
            !turns.is_empty() && turns.iter().all(|t| t.role.as_deref() == Some("model"))
        })
}

/// Whether a recorded runtime frame can be provoked by what the tape delivered: for a tool
/// response with call ids, `Some(true)` when it answers a call the tape made and that was
/// not closed yet (a call's last answer takes it off `open_calls`; a streaming tool's
/// partial results, `willContinue`, leave it open), `Some(false)` when it answers none (a
/// call deleted from the log: the runtime cannot produce it); `None` for any other frame.
fn provoked(message: Option<&ClientMessage>, open_calls: &mut HashSet<String>) -> Option<bool> {
    let answers = message.map(answers_of).unwrap_or_default();
    if answers.is_empty() {
        return None;
    }
    let mut any = false;
    for (id, last) in &answers {
        let open = if *last {
            open_calls.remove(id)
        } else {
            open_calls.contains(id)
        };
        any |= open;
    }
    Some(any)
}

/// Whether a recorded frame is a setup (a frame whose top-level key is another is not
/// decoded to tell).
fn is_setup(payload: &[u8]) -> bool {
    client_frame_may_be(payload, &[ClientMessageKind::Setup])
        && decode_client(payload).is_ok_and(|m| m.setup.is_some())
}

/// Whether a runtime frame comes from application code (phases, callbacks) rather than the
/// runtime's own protocol work: an instruction update, or content the runtime sent for a
/// callback. Setups and tool responses are the runtime's.
fn is_application_driven(m: &ClientMessage) -> bool {
    m.context_update.is_some() || m.client_content.is_some() || m.realtime_input.is_some()
}
