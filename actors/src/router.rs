//! The Router: decodes inbound frames into events and routes them to the lanes.
//!
//! It is the only reader of the inbound stream after the transport, so it also keeps what
//! must see every event in order: the session phase ([`PhaseTracker`]), the latest resumption
//! handle, and the time from the end of a user turn to the model's first output. It does no
//! other work: no callbacks, no state, no waiting.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_protocol::{
    DecodeLimits, EventDecoder, PhaseInput, PhaseTracker, SessionCommand, SessionError,
    SessionEvent, SessionPhase, decode_server_with,
};
use tokio::sync::watch;

use crate::control_lane::ControlMsg;
use crate::fast_lane::FastMsg;
use crate::lane_feed::{LaneFeed, LaneProgress};
use crate::peers::Peers;
use crate::telemetry::{TelemetryMsg, TelemetryShared};
use crate::transport::{LinkFrame, Stamp, TransportMsg};

/// Messages to the router.
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
    /// A lane (`fast_lane`, `control_lane`, `telemetry`) was restarted: send it what its
    /// failed instance had not finished.
    Restarted(&'static str),
    /// Replies with the sequence number of the last event sent to the fast lane, the control
    /// lane and telemetry, after everything received before it was routed. With
    /// [`LaneProgress::wait_done`] it tells when the tree has consumed those frames.
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
    /// Progress of the fast lane, the control lane and telemetry (survives restarts).
    pub progress: [Arc<LaneProgress>; 3],
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
    fast: LaneFeed<FastMsg>,
    control: LaneFeed<ControlMsg>,
    telemetry_feed: LaneFeed<TelemetryMsg>,
    phase: watch::Sender<SessionPhase>,
    resume_handle: watch::Sender<Option<String>>,
    telemetry: Arc<TelemetryShared>,
    /// Session time the user's turn ended, until the model's first output.
    awaiting_response_since: Option<u64>,
    /// Session time of the last frame the router saw (inbound, or an outbound frame a
    /// lifecycle step reported): the time every routed event carries.
    event_time: u64,
    /// Scratch buffers, reused for every frame.
    events: Vec<SessionEvent>,
}

/// The Router actor.
pub struct Router;

impl Actor for Router {
    type Msg = RouterMsg;
    type State = RouterState;
    type Arguments = RouterArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<RouterMsg>,
        args: RouterArgs,
    ) -> Result<RouterState, ActorProcessingErr> {
        let [fast, control, telemetry] = args.progress;
        Ok(RouterState {
            fast: LaneFeed::new(Arc::clone(&args.peers.fast), fast),
            control: LaneFeed::new(Arc::clone(&args.peers.control), control),
            telemetry_feed: LaneFeed::new(Arc::clone(&args.peers.telemetry), telemetry),
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
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<RouterMsg>,
        message: RouterMsg,
        state: &mut RouterState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RouterMsg::Inbound { conn, stamp, frame } => state.inbound(conn, stamp, frame),
            RouterMsg::Lifecycle { step, ts_ms } => {
                let ts_ms = state.advance(ts_ms);
                state.lifecycle(step, ts_ms)
            }
            RouterMsg::LinkDown {
                code,
                reason,
                last,
                ts_ms,
            } => {
                let ts_ms = state.advance(Some(ts_ms));
                state.route(vec![SessionEvent::Disconnected { code, reason }], ts_ms);
                if last {
                    state.fast.send_shutdown();
                    state.control.send_shutdown();
                    state.telemetry_feed.send_shutdown();
                }
            }
            RouterMsg::Report(event) => {
                let ts_ms = state.event_time;
                state.route(vec![*event], ts_ms);
            }
            RouterMsg::Barrier(reply) => {
                let _ = reply.send([
                    state.fast.last_sent(),
                    state.control.last_sent(),
                    state.telemetry_feed.last_sent(),
                ]);
            }
            RouterMsg::Restarted(actor) => {
                let failed = match actor {
                    "fast_lane" => state.fast.resend().map(|e| ("fast", e)),
                    "control_lane" => state.control.resend().map(|e| ("control", e)),
                    "telemetry" => state.telemetry_feed.resend().map(|e| ("telemetry", e)),
                    _ => None,
                };
                if let Some((lane, event)) = failed {
                    // The event whose handling failed is not retried; it is reported.
                    let report = SessionEvent::Error(SessionError::CallbackPanicked {
                        lane,
                        event: event.kind(),
                        message: "the lane failed while handling it and was restarted".to_owned(),
                    });
                    let ts_ms = state.event_time;
                    state.route(vec![report], ts_ms);
                }
            }
        }
        Ok(())
    }
}

/// Which lanes an event goes to: (fast, control, telemetry).
fn destinations(event: &SessionEvent) -> (bool, bool, bool) {
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
        let message = match decode_server_with(&frame.bytes, self.limits) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(seq = stamp.seq, conn, %error, "skipping an inbound frame that does not decode");
                let report = SessionEvent::Error(SessionError::Decode {
                    seq: stamp.seq,
                    error,
                });
                self.route(vec![report], ts_ms);
                return;
            }
        };
        let mut events = std::mem::take(&mut self.events);
        self.decoder.decode(message, &mut events);
        for event in &events {
            match event {
                SessionEvent::Connected { .. } => {
                    if let Some(transport) = self.peers.transport.get() {
                        let _ = transport.cast(TransportMsg::SetupComplete { conn });
                    }
                }
                SessionEvent::GoAway { .. } => {
                    if let Some(transport) = self.peers.transport.get() {
                        let _ = transport.cast(TransportMsg::Reconnect {
                            reason: "go_away".to_owned(),
                        });
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
            self.measure_first_response(event, ts_ms);
        }
        // Drained, not moved: the buffer keeps its capacity for the next frame.
        self.route(events.drain(..), ts_ms);
        self.events = events;
    }

    fn lifecycle(&mut self, step: Lifecycle, ts_ms: u64) {
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
                return self.route([SessionEvent::UserText(text)], ts_ms);
            }
        };
        if let Some((from, to)) = self.tracker.apply(input) {
            self.phase.send_replace(to);
            self.route([SessionEvent::PhaseChanged { from, to }], ts_ms);
        }
    }

    /// Tracks the phase over `events`, inserting `PhaseChanged` right after the event that
    /// caused it, and sends each lane its share as one batch.
    fn route(&mut self, events: impl IntoIterator<Item = SessionEvent>, ts_ms: u64) {
        let mut fast = Vec::new();
        let mut control = Vec::new();
        let mut telemetry = Vec::new();
        for event in events {
            let change = self.tracker.apply(PhaseInput::Event(&event));
            for event in std::iter::once(event).chain(change.map(|(from, to)| {
                self.phase.send_replace(to);
                SessionEvent::PhaseChanged { from, to }
            })) {
                let (to_fast, to_control, to_telemetry) = destinations(&event);
                if to_telemetry {
                    telemetry.push(event.clone());
                }
                match (to_fast, to_control) {
                    (true, true) => {
                        control.push(event.clone());
                        fast.push(event);
                    }
                    (true, false) => fast.push(event),
                    (false, _) => control.push(event),
                }
            }
        }
        self.fast.send(ts_ms, fast);
        self.control.send(ts_ms, control);
        self.telemetry_feed.send(ts_ms, telemetry);
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
