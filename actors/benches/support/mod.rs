//! Shared by the reel-actors benchmarks: an in-memory link behind the `Connector` seam, a
//! loopback WebSocket server that plays frames, a link-timing wrapper, percentiles, RSS and
//! CPU time.

#![allow(dead_code)] // each bench target uses its own subset

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use reel_actors::LiveSessionBuilder;
use reel_actors::transport::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
    TrySent, WebSocketConnector,
};
use reel_protocol::{ApiEndpoint, ConnectRequest, SessionConfig};
use tokio::net::{TcpListener, TcpStream};

#[path = "../../../benches/shared/proc_stats.rs"]
mod proc_stats;
// `many_sessions` includes both this file and the other that includes `per_thread.rs` (the
// histogram, the link's support): the module is compiled twice there, each copy numbering
// the threads on its own — the same code, no state shared between the copies.
#[allow(clippy::duplicate_mod)]
#[path = "../../../benches/shared/per_thread.rs"]
mod per_thread;
pub use per_thread::PerThread;
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::protocol::Message;

/// A text `serverContent` frame as the server writes it (the frame of the protocol codec
/// bench's `decode_server/text_camel`).
pub const TEXT_FRAME: &str = r#"{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"The weather in London is 21 degrees and sunny."}]}}}"#;

/// The server's answer to the setup.
pub const SETUP_COMPLETE: &str = r#"{"setupComplete":{}}"#;

/// A tokio runtime with 2 worker threads (the machine has 2 cores).
pub fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

/// A current-thread tokio runtime for a thread of its own (`what` names it in the panic
/// if it cannot be built).
pub fn current_thread_runtime(what: &str) -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build {what}'s runtime: {error}"),
    }
}

/// A text-only session at `endpoint` through `connector`.
pub fn builder(endpoint: ApiEndpoint, connector: Arc<dyn Connector>) -> LiveSessionBuilder {
    LiveSessionBuilder::new(SessionConfig::new("bench-model").text_only(), endpoint)
        .connector(connector)
}

/// A session over an in-memory link (the endpoint is never dialled).
pub fn memory_builder(connector: MemoryConnector) -> LiveSessionBuilder {
    builder(ApiEndpoint::google_ai("bench-key"), Arc::new(connector))
}

// ---------------------------------------------------------------------------------------
// The in-memory link.
// ---------------------------------------------------------------------------------------

/// A frame fed to a [`Source::Fed`] link; `index` says where to write its hand-off time.
pub struct Fed {
    /// Slot in the link's [`Stamps`], if the frame is timed.
    pub index: Option<usize>,
    /// The frame.
    pub frame: LinkFrame,
}

/// A fed link's frames on their way: one lock and one pair of lines a frame, as a socket's
/// buffer is one structure of the kernel's. A channel of tokio's took four to six lines a
/// frame at thousands of sessions — its sender's and its waker's padded lines, its block's
/// slot and ready bits — charged to the tree and the floor alike as the bench's own cost
/// (`docs/bench-log/fleet.md`, "a lean fed link"). The frame at the head waits in the
/// queue's own lines, not in a buffer allocated elsewhere (a voice session's link holds one
/// frame at a time); aligned to the pair of lines a core fetches together.
#[repr(C, align(128))]
struct FedQueue {
    state: Mutex<FedState>,
}

#[repr(C)]
struct FedState {
    /// The receiver's waker while it waits for a frame.
    waker: Option<std::task::Waker>,
    /// The receiver dropped: sends fail, as a channel's do.
    receiver_gone: bool,
    /// The oldest frame sent and not yet taken; `None` only while `later` is empty too.
    first: Option<Fed>,
    /// Sent after `first`, not yet taken, in order.
    later: VecDeque<Fed>,
}

/// The bench's end of a fed link: sends frames to the session's receiver (cheap to clone).
#[derive(Clone)]
pub struct FedSender(Arc<FedQueue>);

impl FedSender {
    /// Queues `fed` for the receiver and wakes it if it waits; gives `fed` back if the
    /// receiver is gone (the session ended).
    pub fn send(&self, fed: Fed) -> Result<(), Fed> {
        let waker = {
            let mut state = lock(&self.0.state);
            if state.receiver_gone {
                return Err(fed);
            }
            if state.first.is_none() {
                state.first = Some(fed);
            } else {
                state.later.push_back(fed);
            }
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }
}

/// The session's end of a fed link.
pub struct FedReceiver(Arc<FedQueue>);

impl FedReceiver {
    /// The next frame sent, in order (the floor's session task awaits it).
    pub async fn recv(&mut self) -> Fed {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next frame sent, in order; pending (woken by the next send) while none waits.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Fed> {
        let mut state = lock(&self.0.state);
        if let Some(fed) = state.first.take() {
            state.first = state.later.pop_front();
            return Poll::Ready(fed);
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for FedReceiver {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.receiver_gone = true;
        state.first = None;
        state.later.clear();
        state.waker = None;
    }
}

/// A fed link's two ends.
pub fn fed_queue() -> (FedSender, FedReceiver) {
    let queue = Arc::new(FedQueue {
        state: Mutex::new(FedState {
            waker: None,
            receiver_gone: false,
            first: None,
            later: VecDeque::new(),
        }),
    });
    (FedSender(Arc::clone(&queue)), FedReceiver(queue))
}

/// Where a memory link's frames come from once it has answered the setup.
pub enum Source {
    /// These frames, as fast as they are pulled, once `go` is notified.
    Burst {
        /// Starts the burst.
        go: Arc<Notify>,
        /// The frames, yielded in order (each a cheap `Bytes` clone).
        frames: Arc<[LinkFrame]>,
    },
    /// Frames the bench sends; a timed frame's hand-off time goes into `stamps`.
    Fed {
        /// The frames.
        rx: FedReceiver,
        /// Where a timed frame's hand-off is noted.
        stamps: Option<Arc<dyn HandOff>>,
    },
}

/// Where a link notes the moment it hands a timed frame (by its index) to the session.
pub trait HandOff: Send + Sync {
    /// Frame `index` is being handed over now.
    fn handed(&self, index: usize);
}

impl HandOff for Stamps {
    fn handed(&self, index: usize) {
        self.record(index);
    }
}

/// Nanoseconds since a common base, by frame index (0 = not yet).
pub struct Stamps {
    base: Instant,
    ns: Vec<AtomicU64>,
}

impl Stamps {
    /// `len` empty slots, timed from `base`.
    pub fn new(base: Instant, len: usize) -> Self {
        Stamps {
            base,
            ns: (0..len).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Writes now into slot `index`.
    pub fn record(&self, index: usize) {
        if let Some(slot) = self.ns.get(index) {
            slot.store(nanos_since(self.base), Ordering::Release);
        }
    }

    /// Slot `index` (0 if never written).
    pub fn get(&self, index: usize) -> u64 {
        self.ns
            .get(index)
            .map_or(0, |slot| slot.load(Ordering::Acquire))
    }

    /// How many slots.
    pub fn len(&self) -> usize {
        self.ns.len()
    }
}

/// Nanoseconds from `base` to now (at least 1, so 0 can mean "unset").
pub fn nanos_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// What in-memory links carried: the frames and bytes the session wrote, by kind, and the
/// bytes it was handed (the setup included) — what the benches read; one link's, or every
/// link's of a run when the run hands them all the same counters.
///
/// Counted a copy a thread and added up when read: a session's writes and its reads run on
/// either core, and counts on lines both cores bump moved between them a frame — a cost of
/// the bench's bookkeeping, not of the session (`docs/bench-log/fleet.md`, "the harness's
/// shared lines").
#[derive(Default)]
pub struct LinkCounters {
    copies: PerThread<Counts>,
}

/// One thread's counts of a [`LinkCounters`].
#[derive(Default)]
struct Counts {
    frames_out: AtomicU64,
    bytes_out: AtomicU64,
    realtime_out: AtomicU64,
    tool_responses_out: AtomicU64,
    bytes_in: AtomicU64,
}

impl LinkCounters {
    /// Counts a frame of `bytes` bytes the session wrote; `realtime` for the application's
    /// audio (`realtimeInput`), `tool_response` for a `toolResponse`.
    pub fn wrote(&self, bytes: usize, realtime: bool, tool_response: bool) {
        let mine = self.copies.mine();
        mine.frames_out.fetch_add(1, Ordering::Relaxed);
        mine.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
        if realtime {
            mine.realtime_out.fetch_add(1, Ordering::Relaxed);
        }
        if tool_response {
            mine.tool_responses_out.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a frame of `bytes` bytes the link handed to the session.
    pub fn handed(&self, bytes: usize) {
        self.copies
            .mine()
            .bytes_in
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn sum(&self, field: impl Fn(&Counts) -> &AtomicU64) -> u64 {
        self.copies
            .each()
            .map(|counts| field(counts).load(Ordering::Acquire))
            .sum()
    }

    /// Frames the session wrote to the link.
    pub fn frames_out(&self) -> u64 {
        self.sum(|c| &c.frames_out)
    }

    /// Bytes of those frames.
    pub fn bytes_out(&self) -> u64 {
        self.sum(|c| &c.bytes_out)
    }

    /// `realtimeInput` frames the session wrote (the application's audio).
    pub fn realtime_out(&self) -> u64 {
        self.sum(|c| &c.realtime_out)
    }

    /// `toolResponse` frames the session wrote.
    pub fn tool_responses_out(&self) -> u64 {
        self.sum(|c| &c.tool_responses_out)
    }

    /// Bytes of those frames.
    pub fn bytes_in(&self) -> u64 {
        self.sum(|c| &c.bytes_in)
    }
}

struct LinkShared {
    counters: Arc<LinkCounters>,
    setup_seen: Notify,
    closed: AtomicBool,
    close_seen: Notify,
    /// A fed link's own sender: the close is queued behind the frames fed before it (an
    /// empty frame), so the receiver waits on its queue alone, as a socket's reader waits
    /// on its socket, not on the queue and a `Notify` (two locks a frame).
    fed_closer: Mutex<Option<FedSender>>,
    /// Told the moment the session writes a `toolResponse` frame (see
    /// [`MemoryConnector::tool_responses`]).
    tool_responses: Mutex<Option<mpsc::UnboundedSender<Instant>>>,
}

/// A connector for exactly one in-memory link: its sender takes the setup (and anything
/// else) and answers nothing; its receiver yields `{"setupComplete":{}}` once the setup has
/// been sent, then the frames of its [`Source`], then, once the session closes the link, a
/// clean close (1000).
pub struct MemoryConnector {
    link: Mutex<Option<LinkHalves>>,
    shared: Arc<LinkShared>,
}

impl MemoryConnector {
    /// A link playing `source`.
    pub fn new(source: Source) -> Self {
        MemoryConnector::counted(source, Arc::default())
    }

    /// A link playing `source` that counts what it carries into `counters`.
    pub fn counted(source: Source, counters: Arc<LinkCounters>) -> Self {
        let shared = Arc::new(LinkShared {
            counters,
            setup_seen: Notify::new(),
            closed: AtomicBool::new(false),
            close_seen: Notify::new(),
            fed_closer: Mutex::new(None),
            tool_responses: Mutex::new(None),
        });
        let sender = MemorySender {
            counters: Arc::clone(&shared.counters),
            shared: Arc::clone(&shared),
            set_up: false,
        };
        let receiver = MemoryReceiver {
            counters: Arc::clone(&shared.counters),
            shared: Arc::clone(&shared),
            source,
            stage: Stage::AwaitSetup,
            gated: true,
            position: 0,
            waiting: None,
        };
        MemoryConnector {
            link: Mutex::new(Some((Box::new(sender), Box::new(receiver)))),
            shared,
        }
    }

    /// A link that bursts `frames` once `go` is notified.
    pub fn burst(go: Arc<Notify>, frames: Arc<[LinkFrame]>) -> Self {
        MemoryConnector::new(Source::Burst { go, frames })
    }

    /// A link fed through the returned sender.
    pub fn fed(stamps: Option<Arc<dyn HandOff>>) -> (Self, FedSender) {
        MemoryConnector::fed_counted(stamps, Arc::default())
    }

    /// A link fed through the returned sender, counting what it carries into `counters`.
    pub fn fed_counted(
        stamps: Option<Arc<dyn HandOff>>,
        counters: Arc<LinkCounters>,
    ) -> (Self, FedSender) {
        let (tx, rx) = fed_queue();
        let connector = MemoryConnector::counted(Source::Fed { rx, stamps }, counters);
        *lock(&connector.shared.fed_closer) = Some(tx.clone());
        (connector, tx)
    }

    /// The times at which the session writes `toolResponse` frames to the link, from now on.
    pub fn tool_responses(&self) -> mpsc::UnboundedReceiver<Instant> {
        let (tx, rx) = mpsc::unbounded_channel();
        *lock(&self.shared.tool_responses) = Some(tx);
        rx
    }

    /// The link's counters, to read after the connector has gone into a session.
    pub fn counters(&self) -> Arc<LinkCounters> {
        Arc::clone(&self.shared.counters)
    }

    /// Frames the session has written (the setup included).
    pub fn frames_sent(&self) -> u64 {
        self.shared.counters.frames_out()
    }
}

impl Connector for MemoryConnector {
    fn connect(
        &self,
        _request: &ConnectRequest,
        _options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let halves = self
            .link
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        Box::pin(async move {
            halves.ok_or_else(|| LinkError::Connect {
                url: "memory://bench".to_owned(),
                message: "a memory link connects once".to_owned(),
            })
        })
    }
}

/// The counters are held beside the shared state, not read through it: a frame written
/// touches the counters alone, as a socket's writer touches its own state (the shared state
/// only for a link's first frame, a `toolResponse` and the close).
struct MemorySender {
    counters: Arc<LinkCounters>,
    shared: Arc<LinkShared>,
    /// The setup (the first frame) is written.
    set_up: bool,
}

impl LinkSender for MemorySender {
    fn send(&mut self, frame: LinkFrame) -> BoxFuture<'_, Result<(), LinkError>> {
        self.write(&frame);
        Box::pin(async { Ok(()) })
    }

    /// A memory link never waits: written at once, as `send` writes it.
    fn try_send(&mut self, frame: LinkFrame) -> TrySent {
        self.write(&frame);
        TrySent::Sent
    }

    fn close(&mut self, _code: u16, _reason: String) -> BoxFuture<'_, Result<(), LinkError>> {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.close_seen.notify_one();
        if let Some(closer) = lock(&self.shared.fed_closer).take() {
            // The receiver may be gone already; then nobody waits for the close.
            let _ = closer.send(Fed {
                index: None,
                frame: LinkFrame::text(""),
            });
        }
        Box::pin(async { Ok(()) })
    }
}

impl MemorySender {
    /// Counts a frame written, notes a `toolResponse`'s time, and tells the bench the
    /// setup went out.
    fn write(&mut self, frame: &LinkFrame) {
        let realtime = frame.bytes.starts_with(b"{\"realtimeInput\"");
        let tool_response = !realtime && frame.bytes.starts_with(b"{\"toolResponse\"");
        self.counters
            .wrote(frame.bytes.len(), realtime, tool_response);
        if tool_response && let Some(tap) = lock(&self.shared.tool_responses).as_ref() {
            // The bench may have stopped listening; the stamp is then of no use to anyone.
            let _ = tap.send(Instant::now());
        }
        if !self.set_up {
            self.set_up = true;
            self.shared.setup_seen.notify_one();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    AwaitSetup,
    Streaming,
    Ended,
}

/// `repr(C)`, aligned to a line: what a fed frame reads (the wait, the stage, the source,
/// the counters) in its first line, wherever the allocator puts it.
#[repr(C, align(64))]
struct MemoryReceiver {
    /// A wait that is not for a frame (the setup, a burst's `go`, the close), while it
    /// lasts: owned, so the receiver is polled without a future of its own a frame.
    waiting: Option<BoxFuture<'static, Woken>>,
    stage: Stage,
    /// A burst waits for its `go`.
    gated: bool,
    source: Source,
    /// Held beside the shared state (see [`MemorySender`]): a fed frame touches the
    /// queue, the stamps and the counters, not the shared state.
    counters: Arc<LinkCounters>,
    shared: Arc<LinkShared>,
    position: usize,
}

/// How a wait that is not for a frame ended.
enum Woken {
    /// The session sent its setup.
    Setup,
    /// A burst's `go` came.
    Go,
    /// The session closed the link.
    Closed,
}

fn clean_close() -> Option<LinkEvent> {
    Some(LinkEvent::Closed {
        code: Some(1000),
        reason: Some("bench link closed".to_owned()),
    })
}

/// Until the setup is sent or the link closed.
fn wait_for_setup(shared: Arc<LinkShared>) -> BoxFuture<'static, Woken> {
    Box::pin(async move {
        tokio::select! {
            _ = shared.setup_seen.notified() => Woken::Setup,
            _ = shared.close_seen.notified() => Woken::Closed,
        }
    })
}

/// Until a burst's `go` or the link's close.
fn wait_for_go(go: Arc<Notify>, shared: Arc<LinkShared>) -> BoxFuture<'static, Woken> {
    Box::pin(async move {
        tokio::select! {
            _ = go.notified() => Woken::Go,
            _ = shared.close_seen.notified() => Woken::Closed,
        }
    })
}

/// Until the session closes the link.
fn wait_for_close(shared: Arc<LinkShared>) -> BoxFuture<'static, Woken> {
    Box::pin(async move {
        shared.close_seen.notified().await;
        Woken::Closed
    })
}

impl MemoryReceiver {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        loop {
            if let Some(waiting) = &mut self.waiting {
                let woken = std::task::ready!(waiting.as_mut().poll(cx));
                self.waiting = None;
                match woken {
                    Woken::Setup => {
                        self.stage = Stage::Streaming;
                        return Poll::Ready(Some(LinkEvent::Frame(LinkFrame::text(
                            SETUP_COMPLETE,
                        ))));
                    }
                    Woken::Go => self.gated = false,
                    Woken::Closed => {
                        self.stage = Stage::Ended;
                        return Poll::Ready(clean_close());
                    }
                }
            }
            match self.stage {
                Stage::Ended => return Poll::Ready(None),
                Stage::AwaitSetup => {
                    self.waiting = Some(wait_for_setup(Arc::clone(&self.shared)));
                    continue;
                }
                Stage::Streaming => {}
            }
            // A fed link's close comes down its queue (below); a burst's is read here.
            if matches!(self.source, Source::Burst { .. })
                && self.shared.closed.load(Ordering::Acquire)
            {
                self.stage = Stage::Ended;
                return Poll::Ready(clean_close());
            }
            match &mut self.source {
                Source::Burst { go, frames } => {
                    if self.gated {
                        self.waiting = Some(wait_for_go(Arc::clone(go), Arc::clone(&self.shared)));
                        continue;
                    }
                    if let Some(frame) = frames.get(self.position) {
                        self.position += 1;
                        return Poll::Ready(Some(LinkEvent::Frame(frame.clone())));
                    }
                }
                Source::Fed { rx, stamps } => {
                    // The close comes down the queue, behind what was fed before it (see
                    // `LinkShared::fed_closer`).
                    let fed = std::task::ready!(rx.poll_recv(cx));
                    if fed.frame.bytes.is_empty() && self.shared.closed.load(Ordering::Acquire) {
                        self.stage = Stage::Ended;
                        return Poll::Ready(clean_close());
                    }
                    if let (Some(index), Some(stamps)) = (fed.index, stamps.as_ref()) {
                        stamps.handed(index);
                    }
                    return Poll::Ready(Some(LinkEvent::Frame(fed.frame)));
                }
            }
            // Nothing more to yield: wait for the session to close the link.
            self.waiting = Some(wait_for_close(Arc::clone(&self.shared)));
        }
    }
}

impl LinkReceiver for MemoryReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        let event = std::task::ready!(self.poll_next(cx));
        if let Some(LinkEvent::Frame(frame)) = &event {
            self.counters.handed(frame.bytes.len());
        }
        Poll::Ready(event)
    }
}

// ---------------------------------------------------------------------------------------
// Timing a real link: a connector wrapper that notes when each data frame is handed over.
// ---------------------------------------------------------------------------------------

/// Per-session timing: hand-off times of `serverContent` frames, in order, and the
/// latencies the fast lane's callback measured against them.
#[derive(Default)]
pub struct Probe {
    handed: Mutex<VecDeque<Instant>>,
    latencies_ns: Mutex<Vec<u64>>,
    /// Callbacks seen.
    pub count: AtomicU64,
}

impl Probe {
    /// Notes the hand-off of a timed frame.
    pub fn handed_over(&self) {
        lock(&self.handed).push_back(Instant::now());
    }

    /// The fast-lane callback of the oldest timed frame not yet matched ran now.
    pub fn called_back(&self) {
        let now = Instant::now();
        if let Some(handed) = lock(&self.handed).pop_front() {
            let ns = u64::try_from(now.duration_since(handed).as_nanos()).unwrap_or(u64::MAX);
            lock(&self.latencies_ns).push(ns);
        }
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// The latencies measured so far.
    pub fn take_latencies(&self) -> Vec<u64> {
        std::mem::take(&mut *lock(&self.latencies_ns))
    }
}

/// A [`WebSocketConnector`] whose receiver tells a [`Probe`] when it hands a
/// `serverContent` frame to the transport.
pub struct TimedConnector {
    inner: WebSocketConnector,
    probe: Arc<Probe>,
}

impl TimedConnector {
    /// Wraps a plain WebSocket connector.
    pub fn new(probe: Arc<Probe>) -> Self {
        TimedConnector {
            inner: WebSocketConnector::new(),
            probe,
        }
    }
}

impl Connector for TimedConnector {
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let connecting = self.inner.connect(request, options);
        let probe = Arc::clone(&self.probe);
        Box::pin(async move {
            let (sender, inner) = connecting.await?;
            let receiver: Box<dyn LinkReceiver> = Box::new(TimedReceiver { inner, probe });
            Ok((sender, receiver))
        })
    }
}

struct TimedReceiver {
    inner: Box<dyn LinkReceiver>,
    probe: Arc<Probe>,
}

impl LinkReceiver for TimedReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        let event = std::task::ready!(self.inner.poll_recv(cx));
        if let Some(LinkEvent::Frame(frame)) = &event
            && frame.bytes.starts_with(b"{\"serverContent\"")
        {
            self.probe.handed_over();
        }
        Poll::Ready(event)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------------------
// A loopback WebSocket server that plays frames on command.
// ---------------------------------------------------------------------------------------

/// Serves every connection accepted on `listener`: answers the setup with
/// `{"setupComplete":{}}`, then obeys the client's text turns:
///
/// - `burst N`: writes `N` copies of [`TEXT_FRAME`] back to back (flushing every 64);
/// - `pace N HZ DELAY_US`: after `DELAY_US` µs, writes `N` copies at `HZ` frames per second,
///   each flushed on its own.
///
/// A close from the client is answered; then the connection ends.
pub async fn serve(listener: TcpListener) {
    let frame = Utf8Bytes::from_static(TEXT_FRAME);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(play(tcp, frame.clone()));
    }
}

async fn play(tcp: TcpStream, frame: Utf8Bytes) {
    let _ = tcp.set_nodelay(true);
    let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
        return;
    };
    // The setup.
    match ws.next().await {
        Some(Ok(Message::Text(_) | Message::Binary(_))) => {}
        _ => return,
    }
    if ws
        .send(Message::Text(Utf8Bytes::from_static(SETUP_COMPLETE)))
        .await
        .is_err()
    {
        return;
    }
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue; // a close is answered by tungstenite; the stream then ends
        };
        let command = client_text(&text);
        let words: Vec<&str> = command.split_whitespace().collect();
        match words.as_slice() {
            ["burst", n] => {
                let n: usize = n.parse().unwrap_or(0);
                for i in 0..n {
                    if ws.feed(Message::Text(frame.clone())).await.is_err() {
                        return;
                    }
                    if i % 64 == 63 && ws.flush().await.is_err() {
                        return;
                    }
                }
                if ws.flush().await.is_err() {
                    return;
                }
            }
            ["pace", n, hz, delay_us] => {
                let n: usize = n.parse().unwrap_or(0);
                let hz: u64 = hz.parse().unwrap_or(1).max(1);
                let delay_us: u64 = delay_us.parse().unwrap_or(0);
                tokio::time::sleep(Duration::from_micros(delay_us)).await;
                let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / hz));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                for _ in 0..n {
                    tick.tick().await;
                    if ws.send(Message::Text(frame.clone())).await.is_err() {
                        return;
                    }
                }
            }
            _ => {}
        }
    }
}

/// The text of a `clientContent` turn (what `LiveHandle::send_text` sends).
fn client_text(frame: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(frame).unwrap_or_default();
    value["clientContent"]["turns"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Starts [`serve`] on its own thread and current-thread runtime; returns its `ws://` URL.
pub fn serve_on_thread() -> String {
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(error) => panic!("cannot bind 127.0.0.1:0: {error}"),
    };
    let addr = match listener.local_addr() {
        Ok(addr) => addr,
        Err(error) => panic!("no local address: {error}"),
    };
    if let Err(error) = listener.set_nonblocking(true) {
        panic!("cannot make the listener non-blocking: {error}");
    }
    std::thread::spawn(move || {
        current_thread_runtime("the server").block_on(async move {
            match TcpListener::from_std(listener) {
                Ok(listener) => serve(listener).await,
                Err(error) => panic!("cannot adopt the listener: {error}"),
            }
        });
    });
    format!("ws://{addr}")
}

/// A Google AI endpoint at `url` (a loopback server).
pub fn loopback_endpoint(url: &str) -> ApiEndpoint {
    ApiEndpoint::google_ai("bench-key").with_base_url(url)
}

// ---------------------------------------------------------------------------------------
// Numbers.
// ---------------------------------------------------------------------------------------

/// Percentiles of a set of latencies, in nanoseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Summary {
    /// Samples.
    pub n: usize,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

/// Nearest-rank percentiles of `samples`.
pub fn summarize(mut samples: Vec<u64>) -> Summary {
    samples.sort_unstable();
    let n = samples.len();
    if n == 0 {
        return Summary::default();
    }
    let rank = |p: f64| -> u64 {
        let index = ((p / 100.0) * n as f64).ceil() as usize;
        samples[index.clamp(1, n) - 1]
    };
    Summary {
        n,
        p50: rank(50.0),
        p90: rank(90.0),
        p99: rank(99.0),
        p999: rank(99.9),
        max: samples[n - 1],
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let us = |ns: u64| ns as f64 / 1_000.0;
        write!(
            f,
            "n={:>6}  p50={:>8.1} µs  p90={:>8.1} µs  p99={:>8.1} µs  p99.9={:>8.1} µs  max={:>9.1} µs",
            self.n,
            us(self.p50),
            us(self.p90),
            us(self.p99),
            us(self.p999),
            us(self.max)
        )
    }
}

/// `VmRSS` of this process, in bytes.
pub fn rss_bytes() -> u64 {
    proc_stats::rss_bytes_of("self")
}

/// This process's anonymous memory backed by transparent huge pages, in bytes.
pub fn anon_huge_bytes() -> u64 {
    proc_stats::anon_huge_bytes_of("self")
}

/// The machine's transparent huge page mode (`always`, `madvise`, `never`).
pub fn transparent_huge_pages() -> String {
    proc_stats::transparent_huge_pages()
}

/// CPU time this process has used (user + system).
pub fn cpu_time() -> Duration {
    proc_stats::cpu_time_of("self")
}

/// The 1-minute load average, to judge how quiet the machine was.
pub fn load_average() -> String {
    proc_stats::load_average()
}

/// Waits until `done()` holds, checking every millisecond, for at most `max`. Whether it did.
pub async fn wait_until(max: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + max;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}
