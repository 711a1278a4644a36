//! The floor of `many_sessions`' workload (`--floor`): each session one plain task that does
//! only what the wire and the application demand of a voice call, with no tree around it.
//!
//! It takes the model's frames from the same fed queue a memory link reads, stamps the
//! hand-off as the link's receiver does, decodes each frame with the session's own decoder
//! (`EventDecoder::decode_streamed`, as the router does), calls the same `FastCallbacks`,
//! and writes the application's chunks with the session's own encoder
//! (`CommandEncoder::encode`, as the command writer does) on the application's own task,
//! under the session's lock (as the tree writes in place, decision 0091; until 2026-11-29
//! they went through a channel to the session's task, a second wake a chunk the tree no
//! longer pays), counted as the memory link's sender counts them; a tool call is answered
//! on the spot. What it leaves out is
//! everything the tree adds: supervision, the lanes, the event hub, the phase, the wire
//! tap's stamps, backpressure. So the CPU it takes is what no session runtime, however
//! lean, could go below on this machine with this harness — the bench's own link and
//! pacers included — and the tree's overhead is the difference.
//!
//! **The guarantees, priced one at a time** (`--floor-with stamp,route,…`, decision 0089):
//! each of the tree's per-frame guarantees can be added to the floor alone, implemented the
//! leanest way a one-task session could hold it (inside the task's own state, with the
//! tree's own structures where those are already lean: the [`WireTap`], the [`EventHub`],
//! the [`PhaseTracker`], [`TelemetryShared`]), so what each costs at 10,000 sessions is
//! known before a session core is built around them. See [`Guarantees`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use reel_actors::Lane;
use reel_actors::callbacks::FastCallbacks;
use reel_actors::clock::TokioClock;
use reel_actors::events::{EventHub, LiveEvent};
use reel_actors::mailbox::Origin;
use reel_actors::router::destinations;
use reel_actors::telemetry::TelemetryShared;
use reel_actors::transport::WireTap;
use reel_protocol::{
    CommandEncoder, DecodeLimits, EventDecoder, FunctionResponse, PhaseInput, PhaseTracker,
    SessionCommand, SessionEvent, SessionPhase, decode_server_partial_with,
};
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::support::{Fed, FedReceiver, FedSender, HandOff, LinkCounters};

/// The application's bytes a session holds unwritten before it refuses more (what the
/// tree's outbox bounds by bytes): 64 chunks of 20 ms.
const OUTBOX_BYTES: usize = 64 * 640;

/// Which of the tree's per-frame guarantees a floor session keeps (none: the bare floor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Guarantees {
    /// `stamp`: every frame both ways takes the next sequence number and the session time
    /// from the clock, through the session's [`WireTap`] (a lock, a clock read; nothing
    /// recorded).
    pub stamp: bool,
    /// `route`: every event is given its lanes ([`destinations`]) and numbered in each lane's
    /// sequence on the session's [`EventHub`] (no subscriber, as in the bench's tree).
    pub route: bool,
    /// `phase`: every event and command moves the session's [`PhaseTracker`]; a change is
    /// published on a `watch` and routed as an event, as the router does.
    pub phase: bool,
    /// `telemetry`: frames, bytes and counted events into the session's [`TelemetryShared`].
    pub telemetry: bool,
    /// `backpressure`: the application's chunks are bounded by bytes — counted in when
    /// handed over, out when written, refused beyond [`OUTBOX_BYTES`]. Since the floor
    /// writes in place, only writers at once hold bytes unwritten, so in the bench the bound
    /// is never reached: what this prices is the count a chunk, as the tree's outbox keeps
    /// it.
    pub backpressure: bool,
    /// `guard`: each callback runs under `catch_unwind` with its event held in the
    /// session's slot until it returns (what a restart recovers), after the fault hook is
    /// asked about it.
    pub guard: bool,
}

impl Guarantees {
    /// The names `--floor-with` takes, in the order they are listed.
    pub const NAMES: [&'static str; 6] = [
        "stamp",
        "route",
        "phase",
        "telemetry",
        "backpressure",
        "guard",
    ];

    /// Reads a comma-separated list of names (`all` for every one).
    pub fn parse(list: &str) -> Result<Guarantees, String> {
        let mut kept = Guarantees::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "all" => {
                    kept = Guarantees {
                        stamp: true,
                        route: true,
                        phase: true,
                        telemetry: true,
                        backpressure: true,
                        guard: true,
                    }
                }
                "stamp" => kept.stamp = true,
                "route" => kept.route = true,
                "phase" => kept.phase = true,
                "telemetry" => kept.telemetry = true,
                "backpressure" => kept.backpressure = true,
                "guard" => kept.guard = true,
                other => {
                    return Err(format!(
                        "--floor-with: no guarantee named {other:?} (known: {}, all)",
                        Guarantees::NAMES.join(", ")
                    ));
                }
            }
        }
        Ok(kept)
    }

    /// The names kept, comma-separated; `-` for none.
    pub fn label(self) -> String {
        let on = [
            self.stamp,
            self.route,
            self.phase,
            self.telemetry,
            self.backpressure,
            self.guard,
        ];
        let names: Vec<&str> = Guarantees::NAMES
            .iter()
            .zip(on)
            .filter_map(|(name, on)| on.then_some(*name))
            .collect();
        if names.is_empty() {
            "-".to_owned()
        } else {
            names.join(",")
        }
    }
}

/// The fault hook's question of an item, as the tree's hook is asked: `true` fails it.
type FaultHook = Arc<dyn Fn(&SessionEvent) -> bool + Send + Sync>;

/// One floor session: its state, its feed and its task.
///
/// The application's chunk is encoded and written on the caller's task, under the state's
/// lock (as the tree's command writer writes in place while idle, decision 0091): a plain
/// session needs no queue and no second wake between the application and the link.
pub struct FloorSession {
    state: Arc<Mutex<State>>,
    link: FedSender,
    /// The application's bytes handed over and not yet written (with `backpressure`).
    queued: Option<Arc<AtomicUsize>>,
    task: JoinHandle<()>,
}

impl FloorSession {
    /// Starts a session reading the model's frames from `model` (fed through `link`),
    /// stamping timed frames' hand-off into `handed`, counting both ways into `counters`
    /// and calling `callbacks`, keeping the guarantees `kept`.
    pub fn spawn(
        link: FedSender,
        model: FedReceiver,
        handed: Arc<dyn HandOff>,
        counters: Arc<LinkCounters>,
        callbacks: FastCallbacks,
        kept: Guarantees,
    ) -> FloorSession {
        let queued = kept.backpressure.then(Arc::default);
        let state = Arc::new(Mutex::new(State::new(handed, counters, callbacks, kept)));
        let task = tokio::spawn(serve(Arc::clone(&state), model));
        FloorSession {
            state,
            link,
            queued,
            task,
        }
    }

    /// Writes the application's 20 ms chunk; `false` once the session has ended, or (with
    /// `backpressure`) when it holds its bound of unwritten bytes.
    pub fn send_audio(&self, pcm: Bytes) -> bool {
        let len = pcm.len();
        if let Some(queued) = &self.queued
            && queued.fetch_add(len, Ordering::AcqRel) + len > OUTBOX_BYTES
        {
            queued.fetch_sub(len, Ordering::AcqRel);
            return false;
        }
        let written = {
            let mut state = lock(&self.state);
            // Read under the lock the session's own lines are: not the task's header.
            !state.ended && {
                state.write(SessionCommand::SendAudio(pcm), Origin::App, true);
                true
            }
        };
        if let Some(queued) = &self.queued {
            queued.fetch_sub(len, Ordering::AcqRel);
        }
        written
    }

    /// Ends the session behind what was fed before (an empty frame, as the memory link's
    /// close) and waits for its task: `true` if it ended without a panic.
    pub async fn close(self) -> bool {
        let _ = self.link.send(Fed {
            index: None,
            frame: reel_actors::transport::LinkFrame::text(""),
        });
        self.task.await.is_ok()
    }
}

/// The state's lock; a panic while it was held (none is expected: the callbacks run under
/// `catch_unwind` with `guard`, and the bench's own do not panic) leaves it usable.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The session's task: each of the model's frames, until the feed's close; then the
/// session refuses the application's chunks.
async fn serve(state: Arc<Mutex<State>>, mut model: FedReceiver) {
    loop {
        let fed = model.recv().await;
        if fed.frame.bytes.is_empty() {
            break;
        }
        lock(&state).inbound(fed);
    }
    lock(&state).ended = true;
}

/// A tracker taken through a connection's opening, as the tree's is before the streaming,
/// and where its phase is published.
fn live_phase() -> (PhaseTracker, watch::Sender<SessionPhase>) {
    let mut tracker = PhaseTracker::new();
    tracker.apply(PhaseInput::ConnectStarted);
    tracker.apply(PhaseInput::SetupSent);
    let connected = SessionEvent::Connected { session_id: None };
    let phase = tracker
        .apply(PhaseInput::Event(&connected))
        .map_or(SessionPhase::Disconnected, |(_, to)| to);
    (tracker, watch::channel(phase).0)
}

/// What one floor session's task holds.
struct State {
    handed: Arc<dyn HandOff>,
    counters: Arc<LinkCounters>,
    callbacks: FastCallbacks,
    decoder: EventDecoder,
    encoder: CommandEncoder,
    limits: DecodeLimits,
    events: Vec<SessionEvent>,
    kept: Guarantees,
    /// `stamp`: the session's tap (no recorder) and the time of its last frame.
    tap: Option<WireTap>,
    event_time: u64,
    /// `route`: the session's hub.
    hub: Option<EventHub>,
    /// `phase`: the tracker and where it is published.
    phase: Option<(PhaseTracker, watch::Sender<SessionPhase>)>,
    /// `telemetry`: the session's counters.
    telemetry: Option<TelemetryShared>,
    /// `guard`: the fault hook (none in the bench, as in the tree's) and the item in flight.
    fault: Option<FaultHook>,
    in_flight: Option<SessionEvent>,
    /// The feed closed: the application's chunks are refused.
    ended: bool,
}

impl State {
    fn new(
        handed: Arc<dyn HandOff>,
        counters: Arc<LinkCounters>,
        callbacks: FastCallbacks,
        kept: Guarantees,
    ) -> State {
        State {
            handed,
            counters,
            callbacks,
            decoder: EventDecoder::new(),
            encoder: CommandEncoder::default(),
            limits: DecodeLimits::default(),
            events: Vec::new(),
            kept,
            tap: kept
                .stamp
                .then(|| WireTap::new(Arc::new(TokioClock::from_wall_clock()), None)),
            event_time: 0,
            hub: kept.route.then(EventHub::new),
            phase: kept.phase.then(live_phase),
            telemetry: kept.telemetry.then(TelemetryShared::default),
            fault: None,
            in_flight: None,
            ended: false,
        }
    }

    fn inbound(&mut self, fed: Fed) {
        if let Some(index) = fed.index {
            self.handed.handed(index);
        }
        let bytes = &fed.frame.bytes;
        self.counters.handed(bytes.len());
        if let Some(tap) = &self.tap {
            let stamp = tap.stamp_in(1, false, bytes);
            self.event_time = self.event_time.max(stamp.ts_ms);
        }
        if let Some(telemetry) = &self.telemetry {
            telemetry.frame_in(bytes.len());
        }
        let mut events = std::mem::take(&mut self.events);
        // As the router: the short reader takes the frames that stream, the general
        // decoder every other.
        if !self
            .decoder
            .decode_streamed(bytes, self.limits, &mut events)
            && let Ok(mut message) = decode_server_partial_with(bytes, self.limits)
        {
            self.decoder
                .decode_partial_in_place(0, &mut message, &mut events);
        }
        for event in events.drain(..) {
            let change = self
                .phase
                .as_mut()
                .and_then(|(tracker, _)| tracker.apply(PhaseInput::Event(&event)));
            self.route(event);
            if let Some((from, to)) = change {
                if let Some((_, published)) = &self.phase {
                    published.send_replace(to);
                }
                self.route(SessionEvent::PhaseChanged { from, to });
            }
        }
        self.events = events;
    }

    /// Numbers `event` on its lanes and handles it.
    fn route(&mut self, event: SessionEvent) {
        if let Some(telemetry) = &self.telemetry
            && let SessionEvent::AudioData(_) = event
        {
            telemetry.audio_chunk_in();
        }
        if self.kept.route {
            let to = destinations(&event);
            if let Some(telemetry) = &self.telemetry
                && to.telemetry
            {
                telemetry.count(&event);
            }
            if let Some(hub) = &self.hub {
                if to.fast {
                    hub.publish_with(Lane::Fast, || LiveEvent::Session(event.clone()));
                }
                if to.control {
                    hub.publish_with(Lane::Control, || LiveEvent::Session(event.clone()));
                }
            }
        }
        if self.kept.guard {
            if self.fault.as_ref().is_some_and(|hook| hook(&event)) {
                return;
            }
            self.in_flight = Some(event);
            let handled = {
                let state = &mut *self;
                catch_unwind(AssertUnwindSafe(|| {
                    state
                        .in_flight
                        .as_ref()
                        .and_then(|event| state.handle(event))
                }))
            };
            let reply = match handled {
                Ok(reply) => {
                    self.in_flight = None;
                    reply
                }
                // Kept in flight: what a restart would hand the lane's successor.
                Err(_) => None,
            };
            if let Some(reply) = reply {
                self.write(reply, Origin::Runtime, false);
            }
        } else if let Some(reply) = self.handle(&event) {
            self.write(reply, Origin::Runtime, false);
        }
    }

    /// Calls the application back with `event`; what to send back (a tool call's answer).
    fn handle(&self, event: &SessionEvent) -> Option<SessionCommand> {
        match event {
            SessionEvent::AudioData(pcm) => {
                if let Some(on_audio) = &self.callbacks.on_audio {
                    on_audio(pcm);
                }
                None
            }
            SessionEvent::InterimInputTranscription(text) => {
                if let Some(on_transcript) = &self.callbacks.on_input_transcript {
                    on_transcript(text, false);
                }
                None
            }
            SessionEvent::InputTranscription { text, is_final } => {
                if let Some(on_transcript) = &self.callbacks.on_input_transcript {
                    on_transcript(text, *is_final);
                }
                None
            }
            SessionEvent::ToolCall(calls) => {
                let responses = calls
                    .iter()
                    .map(|call| {
                        let args = call.args.as_ref().map(|args| args.value().clone());
                        FunctionResponse::new(
                            call.id.clone().unwrap_or_default(),
                            call.name.clone().unwrap_or_default(),
                            json!({"echo": args}),
                        )
                    })
                    .collect();
                Some(SessionCommand::SendToolResponse(responses))
            }
            _ => None,
        }
    }

    /// Encodes `command` and writes it to the link (counted as the memory link's sender
    /// counts), stamping it and moving the phase when those are kept (the phase by every
    /// command but audio, as the tree's writer reports them).
    fn write(&mut self, command: SessionCommand, origin: Origin, realtime: bool) {
        let Some(bytes) = self.encoder.encode(&command) else {
            return;
        };
        let bytes = Bytes::from(bytes);
        if !matches!(command, SessionCommand::SendAudio(_))
            && let Some((tracker, published)) = &mut self.phase
            && let Some((from, to)) = tracker.apply(PhaseInput::Command(&command))
        {
            published.send_replace(to);
            self.route(SessionEvent::PhaseChanged { from, to });
        }
        if let Some(tap) = &self.tap {
            tap.stamp_out(1, false, origin, &bytes);
        }
        if let Some(telemetry) = &self.telemetry {
            telemetry.frame_out(bytes.len(), realtime);
        }
        self.counters.wrote(bytes.len(), realtime, !realtime);
    }
}
