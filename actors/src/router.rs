//! The Router: decodes inbound frames into events and routes them to the lanes.
//!
//! It is the only reader of the inbound stream after the transport, so it also keeps what
//! must see every event in order: the session phase ([`PhaseTracker`]), the latest resumption
//! handle, and the time from the end of a user turn to the model's first output. It does no
//! other work: no callbacks, no state.
//!
//! Everything it routes arrives through one [`RouterInbox`], in order: frames from the
//! transport's reader, the transport's steps, reports, barriers. It pushes each lane its
//! share into the lane's inbox; when a lane's inbox is full it waits for room, so a slow
//! lane slows the router, the router's full inbox slows the reader, and the reader stops
//! reading the socket: backpressure, never an unbounded queue and never a dropped event.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_protocol::{
    DecodeLimits, EventDecoder, PhaseInput, PhaseTracker, SessionCommand, SessionError,
    SessionEvent, SessionPhase, UserInput, decode_server_partial_with,
};
use tokio::sync::watch;

use crate::go_away::{GoAwayStep, GoAwayTimer};
use crate::inbox::{Bound, Inbox};
use crate::lane_inbox::{LaneInbox, LaneItem};
use crate::peers::Peers;
use crate::telemetry::TelemetryShared;
use crate::tools::StampedInput;
use crate::transport::{LinkFrame, Stamp, TransportMsg};

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

/// How many items the router handles per wake.
const ROUTER_CHUNK: usize = 64;

/// How many items the router gathers for one lane before it pushes them, within a wake.
const LANE_BATCH: usize = 64;

/// The router's inbox.
pub type RouterInbox = Inbox<RouterMsg>;

/// Messages to the router's mailbox (what it routes waits in its inbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterWake {
    /// Items wait in the inbox.
    Wake,
    /// The deadline of a `goAway` that waited for a turn in flight (see
    /// [`crate::go_away`]).
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
    /// Replies with the number of the last item pushed to the fast lane, the control lane
    /// and telemetry, after everything received before it was routed. With
    /// [`Inbox::wait_finished`] it tells when the tree has consumed those frames.
    Barrier(tokio::sync::oneshot::Sender<[u64; 3]>),
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

/// What the router is given at start.
pub struct RouterArgs {
    /// The session's actors.
    pub peers: Arc<Peers>,
    /// Frame size limit.
    pub limits: DecodeLimits,
    /// Where the phase is published.
    pub phase: watch::Sender<SessionPhase>,
    /// Where the latest resumption handle is published.
    pub resume_handle: watch::Sender<Option<String>>,
    /// Counters.
    pub telemetry: Arc<TelemetryShared>,
}

/// The router's state.
pub struct RouterState {
    peers: Arc<Peers>,
    decoder: EventDecoder,
    tracker: PhaseTracker,
    limits: DecodeLimits,
    phase: watch::Sender<SessionPhase>,
    resume_handle: watch::Sender<Option<String>>,
    telemetry: Arc<TelemetryShared>,
    /// Session time the user's turn ended, until the model's first output.
    awaiting_response_since: Option<u64>,
    /// Session time of the last frame the router saw (inbound, or an outbound frame a
    /// lifecycle step reported): the time every routed event carries.
    event_time: u64,
    /// Scratch buffer, reused for every frame.
    events: Vec<SessionEvent>,
    /// The items taken from the inbox in one go, reused for every wake.
    batch: Vec<RouterMsg>,
    /// What is routed to each lane (fast, control, telemetry) and not pushed yet: the
    /// router pushes each lane its share once per wake, under one lock (see
    /// [`RouterState::flush`]).
    pending: [Vec<LaneItem>; 3],
    /// Whether the lanes were told the events are over.
    ended: bool,
    /// When a `goAway` turns into a reconnect.
    go_away: GoAwayTimer,
    /// This router, for the `goAway` timer.
    myself: ActorRef<RouterWake>,
}

/// The Router actor.
pub struct Router;

impl Actor for Router {
    type Msg = RouterWake;
    type State = RouterState;
    type Arguments = RouterArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<RouterWake>,
        args: RouterArgs,
    ) -> Result<RouterState, ActorProcessingErr> {
        // The router is not restarted (its failure ends the session), so there is no
        // predecessor's item to recover; this arms the doorbell for `post_start`.
        let _ = args.peers.router.recover();
        Ok(RouterState {
            peers: args.peers,
            decoder: EventDecoder::new(),
            tracker: PhaseTracker::new(),
            limits: args.limits,
            phase: args.phase,
            resume_handle: args.resume_handle,
            telemetry: args.telemetry,
            awaiting_response_since: None,
            event_time: 0,
            events: Vec::new(),
            batch: Vec::new(),
            pending: Default::default(),
            ended: false,
            go_away: GoAwayTimer::default(),
            myself,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<RouterWake>,
        _state: &mut RouterState,
    ) -> Result<(), ActorProcessingErr> {
        // Whatever was pushed before the slot pointed here.
        let _ = myself.cast(RouterWake::Wake);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<RouterWake>,
        message: RouterWake,
        state: &mut RouterState,
    ) -> Result<(), ActorProcessingErr> {
        if let RouterWake::GoAwayDue(id) = message {
            if state.go_away.due(id) {
                state.reconnect();
            }
            return Ok(());
        }
        let inbox = Arc::clone(&state.peers.router);
        // Taken a chunk at a time under one lock: the router is never restarted (its
        // failure ends the session), so nothing needs recovering item by item.
        let mut batch = std::mem::take(&mut state.batch);
        let Some(taken) = inbox.take_batch(ROUTER_CHUNK, &mut batch) else {
            state.batch = batch;
            state.flush().await;
            return Ok(());
        };
        let last = *taken.end();
        for (seq, message) in taken.zip(batch.drain(..)) {
            inbox.before_handling(seq);
            state.handle(message).await;
        }
        state.batch = batch;
        inbox.done(last);
        state.flush().await;
        // More may wait: let the mailbox breathe, then go on.
        let _ = myself.cast(RouterWake::Wake);
        Ok(())
    }
}

impl RouterState {
    async fn handle(&mut self, message: RouterMsg) {
        let state = self;
        match message {
            RouterMsg::Inbound { conn, stamp, frame } => state.inbound(conn, stamp, frame).await,
            RouterMsg::Lifecycle { step, ts_ms } => {
                let ts_ms = state.advance(ts_ms);
                state.lifecycle(step, ts_ms).await
            }
            RouterMsg::LinkDown {
                code,
                reason,
                last,
                ts_ms,
            } => {
                let ts_ms = state.advance(Some(ts_ms));
                state
                    .route([SessionEvent::Disconnected { code, reason }], ts_ms)
                    .await;
                if last && !std::mem::replace(&mut state.ended, true) {
                    state.flush().await;
                    for lane in state.lanes() {
                        let _ = lane.push(LaneItem::End);
                    }
                }
            }
            RouterMsg::Report(event) => {
                let ts_ms = state.event_time;
                state.route([*event], ts_ms).await;
            }
            RouterMsg::Input(input) => {
                state.advance(Some(input.ts_ms));
                state.push_control(LaneItem::Input(input)).await;
            }
            RouterMsg::Barrier(reply) => {
                state.flush().await;
                let [fast, control, telemetry] = state.lanes();
                let _ = reply.send([
                    fast.last_pushed(),
                    control.last_pushed(),
                    telemetry.last_pushed(),
                ]);
            }
        }
    }
}

/// Which lanes the router sends an event to: (fast, control, telemetry). Public so that a
/// viewer of a recording (`reel studio`) shows each frame's events on the lanes that
/// handled them, by the router's own rule.
///
/// ```
/// use reel_actors::router::destinations;
/// use reel_protocol::SessionEvent;
///
/// assert_eq!(destinations(&SessionEvent::Interrupted), (true, true, true));
/// ```
pub fn destinations(event: &SessionEvent) -> (bool, bool, bool) {
    use SessionEvent as E;
    match event {
        E::TextDelta(_) | E::Thought(_) | E::AudioData(_) | E::Media { .. } => (true, false, false),
        E::InterimInputTranscription(_) => (true, false, false),
        E::InputTranscription { is_final, .. } | E::OutputTranscription { is_final, .. } => {
            (true, *is_final, false)
        }
        E::TextComplete(_) | E::VoiceActivityStart | E::VoiceActivityEnd => (true, true, false),
        E::PhaseChanged { .. } => (true, true, false),
        E::Interrupted => (true, true, true),
        E::Usage(_) => (false, true, true),
        E::TurnComplete { .. } | E::ToolCall(_) | E::Connected { .. } | E::Disconnected { .. } => {
            (false, true, true)
        }
        _ => (false, true, false),
    }
}

impl RouterState {
    /// Asks the transport to reconnect after a `goAway`, presenting the latest handle.
    fn reconnect(&self) {
        if let Some(transport) = self.peers.transport.get() {
            let _ = transport.cast(TransportMsg::Reconnect {
                reason: "go_away".to_owned(),
            });
        }
    }

    /// The lanes' inboxes: fast, control, telemetry.
    fn lanes(&self) -> [&LaneInbox; 3] {
        [&self.peers.fast, &self.peers.control, &self.peers.telemetry]
    }

    /// Moves event time to `ts_ms` (never backwards) and returns it.
    fn advance(&mut self, ts_ms: Option<u64>) -> u64 {
        if let Some(ts_ms) = ts_ms {
            self.event_time = self.event_time.max(ts_ms);
        }
        self.event_time
    }

    async fn inbound(&mut self, conn: u32, stamp: Stamp, frame: LinkFrame) {
        let ts_ms = self.advance(Some(stamp.ts_ms));
        self.telemetry.frame_in(frame.bytes.len());
        let mut events = std::mem::take(&mut self.events);
        // The frames that stream (text, audio, transcription chunks) are read by the short
        // reader; every other frame, and any it does not take, by the general decoder.
        if !self
            .decoder
            .decode_streamed(&frame.bytes, self.limits, &mut events)
            && let Err(report) = self.decode(conn, stamp.seq, &frame.bytes, &mut events)
        {
            self.events = events;
            self.route([report], ts_ms).await;
            return;
        }
        if self.peers.tool_input.forwarded()
            && events
                .iter()
                .any(|event| matches!(event, SessionEvent::ToolCall(_)))
        {
            // The input of the calls this frame starts begins after it.
            self.push_control(LaneItem::FrameSeq(stamp.seq)).await;
        }
        for event in &events {
            match event {
                SessionEvent::Connected { .. } => {
                    if let Some(transport) = self.peers.transport.get() {
                        let _ = transport.cast(TransportMsg::SetupComplete { conn });
                    }
                }

                SessionEvent::SessionResumeUpdate(info) => {
                    if let Some(handle) = &info.handle {
                        self.resume_handle.send_replace(Some(handle.clone()));
                    }
                }
                SessionEvent::AudioData(_) => self.telemetry.audio_chunk_in(),
                _ => {}
            }
            match self.go_away.observe(event) {
                GoAwayStep::Nothing => {}
                GoAwayStep::Reconnect => self.reconnect(),
                GoAwayStep::Wait { id, after } => {
                    self.myself
                        .send_after(after, move || RouterWake::GoAwayDue(id));
                }
            }
            self.measure_first_response(event, ts_ms);
        }
        // Drained, not moved: the buffer keeps its capacity for the next frame.
        self.route(events.drain(..), ts_ms).await;
        self.events = events;
    }

    /// Appends the events of a frame read by the general decoder; the error event to report
    /// when it does not decode.
    fn decode(
        &mut self,
        conn: u32,
        seq: u64,
        bytes: &[u8],
        events: &mut Vec<SessionEvent>,
    ) -> Result<(), SessionEvent> {
        // The message is read and turned into events where it is, never moved: it is over
        // a kilobyte.
        let mut decoded = decode_server_partial_with(bytes, self.limits);
        let message = match &mut decoded {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(seq, conn, %error, "skipping an inbound frame that does not decode");
                // Cloned, not moved out: a frame that does not decode is rare.
                return Err(SessionEvent::Error(SessionError::Decode {
                    seq,
                    error: error.clone(),
                }));
            }
        };
        for error in &message.field_errors {
            tracing::warn!(seq, conn, %error, "an inbound frame has a field that does not decode; the rest of it is used");
        }
        self.decoder.decode_partial_in_place(seq, message, events);
        Ok(())
    }

    async fn lifecycle(&mut self, step: Lifecycle, ts_ms: u64) {
        let input = match step {
            Lifecycle::ConnectStarted => PhaseInput::ConnectStarted,
            Lifecycle::SetupSent => PhaseInput::SetupSent,
            Lifecycle::Sent(ref command) => {
                if ends_user_turn(command) {
                    self.awaiting_response_since = Some(ts_ms);
                }
                PhaseInput::Command(command)
            }
            // Not a phase step: an event for the control lane.
            Lifecycle::AppText(text) => {
                return self.route([SessionEvent::UserText(text)], ts_ms).await;
            }
        };
        if let Some((from, to)) = self.tracker.apply(input) {
            self.phase.send_replace(to);
            self.route([SessionEvent::PhaseChanged { from, to }], ts_ms)
                .await;
        }
    }

    /// Tracks the phase over `events`, inserting `PhaseChanged` right after the event that
    /// caused it, and adds each lane its share to what [`RouterState::flush`] pushes.
    async fn route(&mut self, events: impl IntoIterator<Item = SessionEvent>, ts_ms: u64) {
        let starts = self.pending.each_ref().map(Vec::len);
        for event in events {
            let change = self.tracker.apply(PhaseInput::Event(&event));
            for event in std::iter::once(event).chain(change.map(|(from, to)| {
                self.phase.send_replace(to);
                SessionEvent::PhaseChanged { from, to }
            })) {
                let (to_fast, to_control, to_telemetry) = destinations(&event);
                let [fast, control, telemetry] = &mut self.pending;
                let item = |event| LaneItem::Event {
                    ts_ms,
                    event,
                    frame_end: false,
                };
                if to_telemetry {
                    telemetry.push(item(event.clone()));
                }
                match (to_fast, to_control) {
                    (true, true) => {
                        control.push(item(event.clone()));
                        fast.push(item(event));
                    }
                    (true, false) => fast.push(item(event)),
                    (false, _) => control.push(item(event)),
                }
            }
        }
        for (pending, start) in self.pending.iter_mut().zip(starts) {
            if pending.len() > start
                && let Some(LaneItem::Event { frame_end, .. }) = pending.last_mut()
            {
                *frame_end = true;
            }
        }
        if self
            .pending
            .iter()
            .any(|pending| pending.len() >= LANE_BATCH)
        {
            self.flush().await;
        }
    }

    /// Adds `item` to what the control lane is pushed next, in order with the events.
    async fn push_control(&mut self, item: LaneItem) {
        self.pending[1].push(item);
        if self.pending[1].len() >= LANE_BATCH {
            self.flush().await;
        }
    }

    /// Pushes each lane what was routed to it since the last flush, in order, under one
    /// lock and with at most one wake-up; waits first until the lane has room for all of it
    /// (backpressure: a slow lane slows the router).
    async fn flush(&mut self) {
        let [fast, control, telemetry] = &mut self.pending;
        for (inbox, pending) in [
            (&self.peers.fast, fast),
            (&self.peers.control, control),
            (&self.peers.telemetry, telemetry),
        ] {
            if pending.is_empty() {
                continue;
            }
            inbox.room_for(pending.len()).await;
            // Refused only once the lane stopped for good (the session is over).
            let _ = inbox.push_all(pending.drain(..));
        }
    }

    fn measure_first_response(&mut self, event: &SessionEvent, ts_ms: u64) {
        match event {
            SessionEvent::VoiceActivityEnd => self.awaiting_response_since = Some(ts_ms),
            SessionEvent::AudioData(_)
            | SessionEvent::TextDelta(_)
            | SessionEvent::OutputTranscription { .. }
            | SessionEvent::ToolCall(_) => {
                if let Some(since) = self.awaiting_response_since.take() {
                    self.telemetry.first_response(ts_ms.saturating_sub(since));
                }
            }
            _ => {}
        }
    }
}

/// Commands after which the model is expected to answer.
fn ends_user_turn(command: &SessionCommand) -> bool {
    matches!(
        command,
        SessionCommand::SendText(_)
            | SessionCommand::SendClientContent {
                turn_complete: true,
                ..
            }
            | SessionCommand::ActivityEnd
            | SessionCommand::AudioStreamEnd
            | SessionCommand::SendToolResponse(_)
    )
}
