//! The Router: decodes inbound frames into events and routes them to the lanes.
//!
//! It is the only reader of the inbound stream after the transport, so it also keeps what
//! must see every event in order: the session phase ([`PhaseTracker`]), the latest resumption
//! handle, and the time from the end of a user turn to the model's first output. It keeps no
//! state of the application's; the one other work it does is the fast lane's, in place,
//! when that lane is idle (decision 0086: the lane's callbacks then run on this task).
//!
//! Everything it routes arrives through its one inbox ([`Peers::router`]), in order: frames from the
//! transport's reader, the transport's steps, reports, barriers. It pushes each lane its
//! share into the lane's inbox; when a lane's inbox is full it waits for room, so a slow
//! lane slows the router, the router's full inbox slows the reader, and the reader stops
//! reading the socket: backpressure, never an unbounded queue and never a dropped event.
//!
//! Its state ([`RouterState`]) is shared with the transport's reader, which routes a frame
//! itself, in place, when the router is idle (decision 0090, [`route_in_place`]): the router's
//! task then is not woken for it. Whoever routes holds the state's lock; the inbox's claim
//! keeps the order.

mod in_place;
mod scratch;

pub use in_place::{InPlaceRouter, route_in_place};

use std::sync::Arc;

use ractor::ActorProcessingErr;
use reel_protocol::{
    DecodeLimits, EventDecoder, PhaseInput, PhaseTracker, SessionCommand, SessionError,
    SessionEvent, SessionPhase, decode_server_partial_with,
};
use tokio::sync::{Mutex, oneshot, watch};

use crate::child::Child;
use crate::events::EventHub;
use crate::fast_lane::FastWork;
use crate::go_away::{GoAwayStep, GoAwayTimer};
use crate::inbox::{Failed, Inbox};
use crate::mailbox::{
    Consumer, ConsumerMailbox, ControlItem, EventItem, Instance, LaneItems, LaneMailbox, Lanes,
    Lifecycle, RouterMsg, RouterTimer, TransportMsg, run_in_place,
};
use crate::peers::Peers;
use crate::telemetry::TelemetryShared;
use crate::transport::link::{LinkFrame, Stamp};

/// How many items the router handles per wake.
const ROUTER_CHUNK: usize = 64;

/// How many items the router gathers for one lane before it pushes them, within a wake.
const LANE_BATCH: usize = 64;

/// What the router is given at start.
pub struct RouterArgs {
    /// The session's actors.
    pub peers: Arc<Peers>,
    /// The fast lane's work, for the items the router runs in place (decision 0086).
    pub fast: FastWork,
    /// Frame size limit.
    pub limits: DecodeLimits,
    /// Where the phase is published.
    pub phase: watch::Sender<SessionPhase>,
    /// Where the latest resumption handle is published.
    pub resume_handle: watch::Sender<Option<String>>,
    /// Counters.
    pub telemetry: Arc<TelemetryShared>,
    /// Whether the router counts telemetry's events itself, as it routes them, instead of
    /// feeding them to a Telemetry actor: a session without an `on_usage` callback has no
    /// Telemetry actor (decision 0075).
    pub counts_telemetry: bool,
}

/// The router's state, shared by its task and the reader that routes in place (see the
/// module's documentation); whoever routes holds its lock.
pub type SharedRouterState = Arc<Mutex<RouterState>>;

/// The router: its one instance holds the state it shares.
pub struct Router {
    state: SharedRouterState,
}

/// What the router keeps from item to item.
pub struct RouterState {
    peers: Arc<Peers>,
    /// The fast lane's work, run here when the lane is idle (decision 0086).
    fast: FastWork,
    /// The fast lane's mailbox and the event hub, copied from the peers: a frame whose
    /// share this state handles in place reads them here, beside the rest of what it
    /// touches, not through the peers' allocation (a cache miss a frame at thousands of
    /// sessions).
    fast_lane: LaneMailbox<EventItem>,
    hub: Arc<EventHub>,
    decoder: EventDecoder,
    tracker: PhaseTracker,
    limits: DecodeLimits,
    phase: watch::Sender<SessionPhase>,
    resume_handle: watch::Sender<Option<String>>,
    telemetry: Arc<TelemetryShared>,
    /// Whether telemetry's events are counted here rather than routed (no Telemetry actor).
    counts_telemetry: bool,
    /// Session time the user's turn ended, until the model's first output.
    awaiting_response_since: Option<u64>,
    /// Session time of the last frame the router saw (inbound, or an outbound frame a
    /// lifecycle step reported): the time every routed event carries.
    event_time: u64,
    /// The items taken from the inbox in one go, reused for every wake.
    batch: Vec<RouterMsg>,
    /// What is routed to each lane and not pushed yet: the router pushes each lane its
    /// share once per wake, under one lock (see [`RouterState::flush`]).
    pending: LaneItems,
    /// Whether the lanes were told the events are over.
    ended: bool,
    /// Whether the control lane was told a video frame went out (once per session).
    video_sent: bool,
    /// When a `goAway` turns into a reconnect.
    go_away: GoAwayTimer,
    /// This router, for the `goAway` timer.
    myself: Instance<RouterTimer>,
}

impl Consumer for Router {
    type Item = RouterMsg;
    type Label = ();
    type Msg = RouterTimer;
    type Args = RouterArgs;

    const CHILD: Child = Child::Router;
    const CHUNK: usize = ROUTER_CHUNK;

    fn mailbox(args: &RouterArgs) -> &ConsumerMailbox<Self> {
        &args.peers.router
    }

    async fn start(
        args: RouterArgs,
        // The router is not restarted (its failure ends the session): no predecessor.
        _failed: Option<Failed<()>>,
        myself: &Instance<RouterTimer>,
    ) -> Result<Self, ActorProcessingErr> {
        let peers = Arc::clone(&args.peers);
        let state = Arc::new(Mutex::new(RouterState {
            fast_lane: args.peers.lanes.fast.clone(),
            hub: Arc::clone(&args.peers.hub),
            peers: args.peers,
            fast: args.fast,
            decoder: EventDecoder::new(),
            tracker: PhaseTracker::new(),
            limits: args.limits,
            phase: args.phase,
            resume_handle: args.resume_handle,
            telemetry: args.telemetry,
            counts_telemetry: args.counts_telemetry,
            awaiting_response_since: None,
            event_time: 0,
            batch: Vec::new(),
            pending: LaneItems::default(),
            ended: false,
            video_sent: false,
            go_away: GoAwayTimer::default(),
            myself: myself.clone(),
        }));
        // Set once: the router is never restarted (its failure ends the session).
        let _ = peers.router_state.set(Arc::downgrade(&state));
        Ok(Router { state })
    }

    async fn handle(&mut self, message: RouterMsg) -> Result<(), ActorProcessingErr> {
        let mut state = self.state.lock().await;
        state.handle(message).await;
        state.flush().await;
        Ok(())
    }

    /// Taken in batches under one lock: the router is never restarted (its failure ends
    /// the session), so nothing needs recovering item by item. A wake takes until the inbox
    /// is empty (which disarms the doorbell) or a chunk is handled, so a lone frame costs
    /// one wake, not a second one that only finds the inbox empty. Each wake ends with
    /// every lane's share pushed.
    async fn drain(&mut self, inbox: &Arc<Inbox<RouterMsg>>) -> Result<bool, ActorProcessingErr> {
        let mut state = self.state.lock().await;
        let mut batch = std::mem::take(&mut state.batch);
        let mut handled = 0;
        while handled < ROUTER_CHUNK {
            let Some(taken) = inbox.take_batch(ROUTER_CHUNK - handled, &mut batch) else {
                state.batch = batch;
                state.flush().await;
                return Ok(false);
            };
            let last = *taken.end();
            handled += batch.len();
            for (seq, message) in taken.zip(batch.drain(..)) {
                inbox.before_handling(seq);
                state.handle(message).await;
            }
            inbox.done(last);
        }
        state.batch = batch;
        state.flush().await;
        Ok(true)
    }

    async fn message(
        &mut self,
        RouterTimer::GoAwayDue(id): RouterTimer,
        _myself: &Instance<RouterTimer>,
    ) -> Result<(), ActorProcessingErr> {
        let mut state = self.state.lock().await;
        if state.go_away.due(id) {
            state.reconnect();
        }
        Ok(())
    }
}

/// What must follow an item once everything routed before it is pushed to the lanes.
enum AfterFlush {
    /// Tell a barrier how far each lane was pushed.
    Reply(oneshot::Sender<Lanes<u64>>),
    /// Tell the lanes the events are over.
    End,
}

impl RouterState {
    /// Routes `message` on the router's own task: what it adds to a lane is pushed once a
    /// lane has a batch, waiting for the lane's room.
    async fn handle(&mut self, message: RouterMsg) {
        let after = self.route_message(message);
        if let Some(after) = after {
            self.flush().await;
            self.finish(after);
        } else if self.pending.lens().iter().any(|len| *len >= LANE_BATCH) {
            self.flush().await;
        }
    }

    /// Routes `message` into what the lanes are pushed next; what must follow once that is
    /// pushed, if anything. It never waits, so a producer can route in place.
    fn route_message(&mut self, message: RouterMsg) -> Option<AfterFlush> {
        match message {
            RouterMsg::Inbound { conn, stamp, frame } => self.inbound(conn, stamp, frame),
            RouterMsg::Lifecycle { step, ts_ms } => {
                let ts_ms = self.advance(ts_ms);
                self.lifecycle(step, ts_ms);
            }
            RouterMsg::LinkDown {
                code,
                reason,
                last,
                ts_ms,
            } => {
                let ts_ms = self.advance(Some(ts_ms));
                self.route([SessionEvent::Disconnected { code, reason }], ts_ms);
                if last && !std::mem::replace(&mut self.ended, true) {
                    return Some(AfterFlush::End);
                }
            }
            RouterMsg::Report(event) => {
                let ts_ms = self.event_time;
                self.route([*event], ts_ms);
            }
            RouterMsg::Input(input) => {
                self.advance(Some(input.ts_ms));
                self.pending.control.push(ControlItem::Input(input));
            }
            RouterMsg::Barrier(reply) => return Some(AfterFlush::Reply(reply)),
            // Pushed by the flush every wake ends with.
            RouterMsg::Flush => {}
        }
        None
    }

    /// Does what follows a flush.
    fn finish(&self, after: AfterFlush) {
        match after {
            AfterFlush::Reply(reply) => {
                let _ = reply.send(self.peers.lanes.last_pushed());
            }
            AfterFlush::End => self.peers.lanes.push_end(),
        }
    }
}

/// Which lanes the router sends an event to. Public so that a viewer of a recording
/// (`reel studio`) shows each frame's events on the lanes that handled them, by the
/// router's own rule.
///
/// ```
/// use reel_actors::mailbox::Lanes;
/// use reel_actors::router::destinations;
/// use reel_protocol::SessionEvent;
///
/// let all = Lanes { fast: true, control: true, telemetry: true };
/// assert_eq!(destinations(&SessionEvent::Interrupted), all);
/// ```
pub fn destinations(event: &SessionEvent) -> Lanes<bool> {
    use SessionEvent as E;
    Lanes {
        // What plays or shows as it streams, and what changes how it plays.
        fast: matches!(
            event,
            E::TextDelta(_)
                | E::Thought(_)
                | E::AudioData(_)
                | E::Media { .. }
                | E::InterimInputTranscription(_)
                | E::InputTranscription { .. }
                | E::OutputTranscription { .. }
                | E::TextComplete(_)
                | E::VoiceActivityStart
                | E::VoiceActivityEnd
                | E::PhaseChanged { .. }
                | E::Interrupted
        ),
        // Everything but the stream's pieces (transcripts only once final).
        control: match event {
            E::TextDelta(_)
            | E::Thought(_)
            | E::AudioData(_)
            | E::Media { .. }
            | E::InterimInputTranscription(_) => false,
            E::InputTranscription { is_final, .. } | E::OutputTranscription { is_final, .. } => {
                *is_final
            }
            _ => true,
        },
        // What is counted.
        telemetry: matches!(
            event,
            E::Interrupted
                | E::Usage(_)
                | E::TurnComplete { .. }
                | E::ToolCall(_)
                | E::Connected { .. }
                | E::Disconnected { .. }
        ),
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

    /// Moves event time to `ts_ms` (never backwards) and returns it.
    fn advance(&mut self, ts_ms: Option<u64>) -> u64 {
        if let Some(ts_ms) = ts_ms {
            self.event_time = self.event_time.max(ts_ms);
        }
        self.event_time
    }

    fn inbound(&mut self, conn: u32, stamp: Stamp, frame: LinkFrame) {
        let ts_ms = self.advance(Some(stamp.ts_ms));
        self.telemetry.frame_in(frame.bytes.len());
        let mut events = scratch::take();
        // The frames that stream (text, audio, transcription chunks) are read by the short
        // reader; every other frame, and any it does not take, by the general decoder.
        if !self
            .decoder
            .decode_streamed(&frame.bytes, self.limits, &mut events)
            && let Err(report) = self.decode(conn, stamp.seq, &frame.bytes, &mut events)
        {
            scratch::give_back(events);
            self.route([report], ts_ms);
            return;
        }
        if events
            .iter()
            .any(|event| matches!(event, SessionEvent::ToolCall(_)))
        {
            // The input of the calls this frame starts begins after it; a governed
            // session's gate is told the frame that carried each call.
            self.pending.control.push(ControlItem::FrameSeq(stamp.seq));
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
                        .send_after(after, move || RouterTimer::GoAwayDue(id));
                }
            }
            self.measure_first_response(event, ts_ms);
        }
        // Drained, not moved: the buffer keeps its capacity for the next frame.
        self.route(events.drain(..), ts_ms);
        scratch::give_back(events);
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

    fn lifecycle(&mut self, step: Lifecycle, ts_ms: u64) {
        let input = match step {
            Lifecycle::ConnectStarted => PhaseInput::ConnectStarted,
            Lifecycle::SetupSent => PhaseInput::SetupSent,
            Lifecycle::Sent(ref command) => {
                if let SessionCommand::UpdateInstruction(text) = command {
                    // In the wire's order, whoever sent it: the control lane keeps the
                    // latest for the next connection (decision 0051).
                    self.pending
                        .control
                        .push(ControlItem::InstructionSent(text.clone()));
                }
                if matches!(command, SessionCommand::SendVideo(_))
                    && !std::mem::replace(&mut self.video_sent, true)
                {
                    self.pending.control.push(ControlItem::VideoSent);
                }
                if ends_user_turn(command) {
                    self.awaiting_response_since = Some(ts_ms);
                }
                PhaseInput::Command(command)
            }
            // Not a phase step: an event for the control lane.
            Lifecycle::AppText(text) => {
                return self.route([SessionEvent::UserText(text)], ts_ms);
            }
        };
        if let Some((from, to)) = self.tracker.apply(input) {
            self.phase.send_replace(to);
            self.route([SessionEvent::PhaseChanged { from, to }], ts_ms);
        }
    }

    /// Tracks the phase over `events`, inserting `PhaseChanged` right after the event that
    /// caused it, and adds each lane its share to what [`RouterState::flush`] pushes.
    fn route(&mut self, events: impl IntoIterator<Item = SessionEvent>, ts_ms: u64) {
        let starts = self.pending.lens();
        for event in events {
            let change = self.tracker.apply(PhaseInput::Event(&event));
            for event in std::iter::once(event).chain(change.map(|(from, to)| {
                self.phase.send_replace(to);
                SessionEvent::PhaseChanged { from, to }
            })) {
                let to = self.lanes_of(&event);
                self.pending.add(to, ts_ms, event);
            }
        }
        self.pending.end_frame(starts);
    }

    /// The lanes `event` goes to ([`destinations`]); in a session without a Telemetry actor,
    /// telemetry's share is counted here instead of routed.
    fn lanes_of(&self, event: &SessionEvent) -> Lanes<bool> {
        let mut to = destinations(event);
        if self.counts_telemetry && to.telemetry {
            self.telemetry.count(event);
            to.telemetry = false;
        }
        to
    }

    /// Pushes each lane what was routed to it since the last flush, in order, under one
    /// lock and with at most one wake-up; waits first until the lane has room for all of it
    /// (backpressure: a slow lane slows the router).
    ///
    /// The fast lane's share is handled here, on the router's task, when the lane is idle
    /// (no item waits, none is handled, no wake is on its way): a lone audio frame then
    /// costs no wake of the lane's task (decision 0086). Otherwise it is pushed, behind
    /// what waits.
    async fn flush(&mut self) {
        self.run_fast_in_place();
        self.peers.lanes.push(&mut self.pending).await;
    }

    /// [`RouterState::flush`] without waiting, for a producer routing in place: pushes
    /// each lane its share if it has room now; whether everything went.
    fn try_flush(&mut self) -> bool {
        self.run_fast_in_place();
        self.peers.lanes.try_push(&mut self.pending)
    }

    /// Handles the fast lane's share here if the lane is idle (decision 0086).
    fn run_fast_in_place(&mut self) {
        let (fast, peers, hub) = (&self.fast, &self.peers, &self.hub);
        run_in_place(&self.fast_lane, &mut self.pending.fast, |item| {
            fast.handle(peers, hub, item)
        });
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

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use reel_protocol::{FunctionCall, SessionEvent as E};

    use super::*;

    /// Each event's lanes, by the router's rule: fast, control, telemetry.
    #[test]
    fn every_kind_of_event_goes_to_its_lanes() {
        let events = [
            E::TextDelta("a".into()),
            E::Thought("a".into()),
            E::AudioData(Bytes::from_static(b"pcm")),
            E::Media {
                mime_type: "image/png".into(),
                data: Bytes::new(),
            },
            E::InterimInputTranscription("a".into()),
            E::InputTranscription {
                text: "a".into(),
                is_final: false,
            },
            E::InputTranscription {
                text: "a".into(),
                is_final: true,
            },
            E::OutputTranscription {
                text: "a".into(),
                is_final: false,
            },
            E::OutputTranscription {
                text: "a".into(),
                is_final: true,
            },
            E::TextComplete("a".into()),
            E::VoiceActivityStart,
            E::VoiceActivityEnd,
            E::PhaseChanged {
                from: SessionPhase::Active,
                to: SessionPhase::ModelSpeaking,
            },
            E::Interrupted,
            E::Usage(Box::default()),
            E::TurnComplete {
                reason: None,
                waiting_for_input: false,
            },
            E::ToolCall(vec![FunctionCall::default()]),
            E::Connected { session_id: None },
            E::Disconnected {
                code: None,
                reason: None,
            },
            E::UserText("a".into()),
            E::GenerationComplete,
            E::ToolCallCancelled(Vec::new()),
            E::GoAway { time_left: None },
        ];
        let rows: Vec<(String, [bool; 3])> = events
            .iter()
            .map(|event| {
                let to = destinations(event);
                let final_ = match event {
                    E::InputTranscription { is_final, .. }
                    | E::OutputTranscription { is_final, .. } => {
                        if *is_final {
                            " final"
                        } else {
                            " partial"
                        }
                    }
                    _ => "",
                };
                (
                    format!("{}{final_}", event.kind()),
                    [to.fast, to.control, to.telemetry],
                )
            })
            .collect();
        let row = |kind: &str, lanes: [bool; 3]| (kind.to_owned(), lanes);
        // No event goes to telemetry alone, nor to the fast lane and telemetry only.
        let (f, c, fc, ct, fct) = (
            [true, false, false],
            [false, true, false],
            [true, true, false],
            [false, true, true],
            [true, true, true],
        );
        assert_eq!(
            rows,
            vec![
                row("text", f),
                row("thought", f),
                row("audio", f),
                row("media", f),
                row("interim_input_transcription", f),
                row("input_transcription partial", f),
                row("input_transcription final", fc),
                row("output_transcription partial", f),
                row("output_transcription final", fc),
                row("text_complete", fc),
                row("vad_start", fc),
                row("vad_end", fc),
                row("phase_changed", fc),
                row("interrupted", fct),
                row("usage", ct),
                row("turn_complete", ct),
                row("tool_call", ct),
                row("connected", ct),
                row("disconnected", ct),
                row("user_text", c),
                row("generation_complete", c),
                row("tool_call_cancelled", c),
                row("go_away", c),
            ]
        );
    }
}
