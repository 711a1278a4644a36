//! Runs one plan: the session tree, the simulated model and application, on a fresh
//! current-thread runtime with paused time, within a virtual-time bound; returns what
//! everyone saw.
//!
//! A fresh runtime per run keeps runs apart (a run that hangs leaves tasks behind, which
//! die with its runtime) and makes a run a function of its plan: one thread, tokio's
//! virtual clock, no socket on the memory wire.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::persistence::SessionPersistence;
use reel_actors::session::DEFAULT_CALLBACK_TIMEOUT;
use reel_actors::telemetry::TelemetrySnapshot;
use reel_actors::testing::ScriptedServer;
use reel_actors::{EventEnvelope, EventStream, LiveEvent, LiveSessionBuilder, SessionEnd};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::journal::StateMutation;
use tokio::sync::oneshot;
use tokio::time::{Instant, sleep, timeout};

use super::app::{App, Observed};
use super::claims::{Claims, SESSION_ID};
use super::memory_link;
use super::model::{self, ModelLog};
use super::model_link::Listener;
use super::plan::{Fault, Plan};

/// The session clock's start (2024-06-10), so journal times read like dates.
pub const T0: u64 = 1_718_000_000_000;
/// A whole run must finish within this much virtual time.
pub const RUN_BOUND: Duration = Duration::from_secs(3_600);
/// `LiveHandle::disconnect` must return within this much virtual time.
pub const DISCONNECT_BOUND: Duration = Duration::from_secs(30);
/// The tree counts as quiet when no event was published for this long: longer than a
/// healthy tree may go without publishing, a lane held by a hanging callback until the
/// callback timeout gives up on it (with a tool call queued behind it, the run must not
/// disconnect before the call is answered). A plan whose callbacks can hold the control lane
/// more than once waits longer ([`quiet`]).
pub const QUIET: Duration = DEFAULT_CALLBACK_TIMEOUT.saturating_add(Duration::from_secs(2));

/// How long `plan`'s run waits without an event before it disconnects: [`QUIET`], plus a
/// callback timeout for every further hold of the control lane the plan has (a hanging
/// watcher and a slow `on_turn_complete` can fall in one stretch, and the lane publishes
/// nothing until both have timed out: seed 42463, 20 s of silence with a tool's answer
/// waiting behind them).
pub fn quiet(plan: &Plan) -> Duration {
    let holds = plan
        .faults
        .iter()
        .filter(|fault| fault.holds_the_control_lane())
        .count();
    let further = u32::try_from(holds.saturating_sub(1)).unwrap_or(u32::MAX);
    QUIET.saturating_add(DEFAULT_CALLBACK_TIMEOUT.saturating_mul(further))
}

/// Which wire the model is behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The in-memory link: deterministic.
    Memory,
    /// A loopback WebSocket (`ScriptedServer`): real sockets, real frames.
    Loopback,
}

/// Where a run got stuck.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hang {
    /// What was being waited for.
    pub stage: &'static str,
    /// For how long (virtual time).
    pub waited: Duration,
}

/// Everything a run saw.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The model's side.
    pub model: ModelLog,
    /// The application's callbacks.
    pub observed: Observed,
    /// Every event of the session, as a subscriber that always reads saw it.
    pub events: Vec<EventEnvelope>,
    /// How the session ended (`None`: it did not).
    pub end: Option<SessionEnd>,
    /// Where the run got stuck, if it did.
    pub hang: Option<Hang>,
    /// The session failed to start.
    pub start_error: Option<String>,
    /// Events waiting in the never-read stream at the end, if the plan stalls one.
    pub stalled_backlog: Option<usize>,
    /// The stalled stream, read to its end once the session ended, if the plan stalls one.
    pub stalled_read: Option<StalledRead>,
    /// Whether the session's id could be claimed again the moment `disconnect` (or a failed
    /// `connect`) returned (`None`: not tried, the session ended on its own or hung).
    pub id_reclaimed: Option<Result<(), String>>,
    /// Every state mutation, in order.
    pub journal: Vec<StateMutation>,
    /// Failed writes of the journal file, as its writer counts them.
    pub journal_file_errors: u64,
    /// The journal file, as the simulated disk holds it at the end.
    pub journal_file: Vec<u8>,
    /// Writes and flushes of the journal file the disk refused (it was full).
    pub journal_refused: u64,
    /// Wire-log sequence numbers stored, and those whose write failed.
    pub wire_stored: Vec<u64>,
    /// Wire-log sequence numbers whose write failed.
    pub wire_failed: Vec<u64>,
    /// Whether the wire recorder's planned panic happened.
    pub recorder_panicked: bool,
    /// Telemetry at the end.
    pub telemetry: Option<TelemetrySnapshot>,
    /// When the run started (virtual time: the traces give times as offsets from it).
    pub started: Instant,
    /// Virtual time the run took.
    pub took: Duration,
}

/// What a stream read only after the session ended yielded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StalledRead {
    /// Events other than `Lagged` notices.
    pub held: u64,
    /// What its `Lagged` notices say it missed.
    pub lagged: u64,
    /// Whether its last event was `SessionEnded`.
    pub ended: bool,
}

impl StalledRead {
    /// Reads what `stream` holds now, to its end if the session has ended.
    fn of(stream: &mut EventStream) -> Self {
        let mut read = StalledRead {
            held: 0,
            lagged: 0,
            ended: false,
        };
        while let Some(envelope) = stream.try_recv() {
            read.ended = matches!(envelope.event, LiveEvent::SessionEnded { .. });
            match envelope.event {
                LiveEvent::Lagged { missed } => read.lagged += missed,
                _ => read.held += 1,
            }
        }
        read
    }

    /// Events published, as a stream that yielded `events` accounts for them.
    pub fn published(events: &[EventEnvelope]) -> u64 {
        events
            .iter()
            .map(|e| match e.event {
                LiveEvent::Lagged { missed } => missed,
                _ => 1,
            })
            .sum()
    }
}

/// Runs `plan` over `wire`.
pub fn run(plan: &Plan, wire: Wire) -> Outcome {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build a tokio runtime for the simulation: {error}"),
    };
    runtime.block_on(run_on_runtime(plan, wire))
}

/// What a run shares with the tasks it starts, so that a run that hangs still reports
/// what happened before.
struct Shared {
    app: App,
    model: Arc<Mutex<ModelLog>>,
    events: Arc<Mutex<Vec<EventEnvelope>>>,
    handle: Mutex<Option<reel_actors::LiveHandle>>,
    stalled: Mutex<Option<EventStream>>,
    start_error: Mutex<Option<String>>,
    claims: Arc<Claims>,
    id_reclaimed: Mutex<Option<Result<(), String>>>,
}

async fn run_on_runtime(plan: &Plan, wire: Wire) -> Outcome {
    let started = Instant::now();
    let shared = Arc::new(Shared {
        app: App::new(plan),
        model: Arc::default(),
        events: Arc::default(),
        handle: Mutex::default(),
        stalled: Mutex::default(),
        start_error: Mutex::default(),
        claims: Arc::default(),
        id_reclaimed: Mutex::default(),
    });
    let hang = match timeout(RUN_BOUND, drive(plan, wire, &shared)).await {
        Ok(hang) => hang,
        Err(_) => Some(Hang {
            stage: "the whole run",
            waited: RUN_BOUND,
        }),
    };
    let handle = lock(&shared.handle).clone();
    let stalled_read = lock(&shared.stalled).as_mut().map(StalledRead::of);
    // The events it held, its end and notices aside (they wait beside the stream).
    let stalled_backlog = stalled_read.map(|read| (read.held - u64::from(read.ended)) as usize);
    let start_error = lock(&shared.start_error).clone();
    Outcome {
        model: lock(&shared.model).clone(),
        observed: lock(&shared.app.observed).clone(),
        events: lock(&shared.events).clone(),
        end: handle.as_ref().and_then(|h| h.ended()),
        hang,
        start_error,
        stalled_backlog,
        stalled_read,
        id_reclaimed: lock(&shared.id_reclaimed).clone(),
        journal: shared.app.journal.memory.entries(),
        journal_file_errors: shared.app.journal.file_errors(),
        journal_file: shared.app.journal.disk_file.bytes(),
        journal_refused: shared.app.journal.disk_file.refused(),
        wire_stored: shared.app.wire.stored(),
        wire_failed: shared.app.wire.failed(),
        recorder_panicked: shared.app.wire.panicked(),
        telemetry: handle.as_ref().map(|h| h.telemetry()),
        started,
        took: started.elapsed(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts everything, waits for the script to be played, lets the tree go quiet, and
/// disconnects. Returns where it got stuck, if it did.
async fn drive(plan: &Plan, wire: Wire, shared: &Arc<Shared>) -> Option<Hang> {
    let (listener, builder) = match wire {
        Wire::Memory => {
            let (connector, queue) = memory_link::pair();
            let endpoint = ApiEndpoint::google_ai("sim-key").with_base_url("ws://sim.invalid");
            let builder =
                LiveSessionBuilder::new(config(plan), endpoint).connector(Arc::new(connector));
            (Listener::Memory(queue), builder)
        }
        Wire::Loopback => {
            let server = ScriptedServer::bind().await;
            let builder = LiveSessionBuilder::new(config(plan), server.endpoint());
            (Listener::Loopback(server), builder)
        }
    };
    let builder = shared
        .app
        .install(builder.clock(Arc::new(TokioClock::anchored_at(T0))))
        .persistence(Arc::clone(&shared.claims) as Arc<dyn SessionPersistence>)
        .session_id(SESSION_ID);
    let mut events = builder.subscribe();
    if plan.has(|f| matches!(f, Fault::StalledSubscriber)) {
        *lock(&shared.stalled) = Some(builder.subscribe());
    }
    let sink = Arc::clone(&shared.events);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            lock(&sink).push(event);
        }
    });
    let (finished_tx, finished) = oneshot::channel();
    tokio::spawn(model::play(
        Arc::new(plan.clone()),
        listener,
        Arc::clone(&shared.model),
        finished_tx,
    ));

    let handle = match builder.connect().await {
        Ok(handle) => handle,
        Err(error) => {
            *lock(&shared.start_error) = Some(error.to_string());
            // The id is free the moment a failed connect returns.
            *lock(&shared.id_reclaimed) = Some(shared.claims.reclaim().await);
            return None;
        }
    };
    *lock(&shared.handle) = Some(handle.clone());
    // The caller speaks while the model may listen.
    let caller = shared
        .app
        .listens
        .then(|| tokio::spawn(App::speak(shared.app.observed.clone(), handle.clone())));

    // The script is played, or the session ended on its own.
    tokio::select! {
        _ = finished => {}
        _ = handle.join() => {}
    }
    if let Some(caller) = caller {
        caller.abort();
    }
    // Let tools, slow callbacks and re-sent events finish: until no event comes for a while.
    let mut seen = lock(&shared.events).len();
    let quiet = quiet(plan);
    loop {
        sleep(quiet).await;
        let now = lock(&shared.events).len();
        if now == seen {
            break;
        }
        seen = now;
    }
    if handle.ended().is_none() {
        let disconnect = handle.disconnect();
        if timeout(DISCONNECT_BOUND, disconnect).await.is_err() {
            return Some(Hang {
                stage: "LiveHandle::disconnect",
                waited: DISCONNECT_BOUND,
            });
        }
        // The id is free the moment `disconnect` returns.
        *lock(&shared.id_reclaimed) = Some(shared.claims.reclaim().await);
    }
    // The children stop after the end is announced: let them (the recorder reports its
    // errors to telemetry as it stops).
    sleep(Duration::from_millis(100)).await;
    None
}

/// The session's config: text, with resumption if the plan asks for it.
fn config(plan: &Plan) -> SessionConfig {
    SessionConfig::new("sim-model")
        .text_only()
        .session_resume(plan.resumption)
}
