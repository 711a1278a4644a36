//! The Transport actor: the only place bytes cross the wire.
//!
//! It opens the connection through a [`Connector`] (a WebSocket live; anything that speaks
//! the link seam in tests), sends the setup frame, waits for `setupComplete` within the setup
//! timeout; its writer task then writes commands as frames. A reader task per connection
//! stamps every inbound frame through the [`WireTap`] and hands it straight to the router.
//! Commands do not come to the actor as messages: `SessionWriter::send` pushes them onto the
//! transport's outbox (`transport/outbox.rs`), which holds them, in order, while the connection is
//! being set up or re-established; once it is live the writer task
//! (`transport/command_writer.rs`) sends them, woken by a flag and a `Notify` rather than a
//! ractor message (decision 0083). The actor keeps the connection's lifecycle: connects,
//! `setupComplete`, reconnects, closes, timeouts, and the disconnect, which sends what was
//! sent before it first.
//!
//! Reconnects: after a `goAway`, or when the connection drops without a clean close, the
//! transport reconnects (with backoff, up to a limit) and presents the latest resumption
//! handle in the new setup, so the conversation continues. The application sees it as events
//! (`Disconnected`, `Reconnecting`, `Connected`, `Reconnected`), not as a dead session. A
//! clean close by the server (1000) or a refusal (1007, 1008, …) ends the session, with the
//! close code and reason delivered to the application.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_protocol::{ApiEndpoint, FrameKind, SessionCommand, SessionConfig, SessionError};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use super::command_writer::{CommandWriter, Sending, WireEnds};
use super::link::{Connector, LinkEvent, LinkFrame, LinkOptions, LinkReceiver};
use super::outbox::{Flow, Outbox};
use super::tree_reports::{SessionOver, TreeReports};
use super::wire_tap::WireTap;
use crate::child::Child;
use crate::fault::FaultHook;
use crate::mailbox::{Origin, TransportMsg};
use crate::peers::Peers;
use crate::router::InPlaceRouter;
use crate::telemetry::TelemetryShared;

/// How reconnects are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Attempts before the session gives up (0 disables reconnecting).
    pub max_attempts: u32,
    /// Wait before the second attempt; doubled each time after.
    pub backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
        }
    }
}

impl ReconnectPolicy {
    /// The wait before `attempt` (1-based): none before the first.
    pub fn delay(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let factor = 1u32.checked_shl(attempt - 2).unwrap_or(u32::MAX);
        self.backoff.saturating_mul(factor).min(self.max_backoff)
    }
}

/// Timeouts and limits of the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportOptions {
    /// Opening a connection; frame size limit.
    pub link: LinkOptions,
    /// From the setup frame to `setupComplete`.
    pub setup_timeout: Duration,
    /// From our close frame to the server's answer.
    pub close_timeout: Duration,
    /// Reconnects.
    pub reconnect: ReconnectPolicy,
}

impl Default for TransportOptions {
    fn default() -> Self {
        TransportOptions {
            link: LinkOptions::default(),
            setup_timeout: Duration::from_secs(15),
            close_timeout: Duration::from_secs(5),
            reconnect: ReconnectPolicy::default(),
        }
    }
}

/// What the transport is given at start.
pub struct TransportArgs {
    /// Opens links.
    pub connector: Arc<dyn Connector>,
    /// Where to connect.
    pub endpoint: ApiEndpoint,
    /// The session's setup.
    pub config: SessionConfig,
    /// Timeouts and limits.
    pub options: TransportOptions,
    /// Stamps and records frames.
    pub tap: Arc<WireTap>,
    /// The latest resumption handle (the router keeps it current).
    pub resume_handle: watch::Receiver<Option<String>>,
    /// Counters.
    pub telemetry: Arc<TelemetryShared>,
    /// The session's actors.
    pub peers: Arc<Peers>,
    /// The session's fault injector, if a simulator installed one: called before each
    /// message the transport handles (see [`crate::fault`]).
    pub fault: Option<Arc<dyn FaultHook>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    /// Not connected yet, or between reconnect attempts.
    Down,
    /// Setup sent, waiting for `setupComplete`.
    AwaitingSetup,
    /// Commands flow.
    Live,
    /// We closed; waiting for the close to complete.
    Closing,
    /// Over.
    Closed,
}

/// The transport's state.
pub struct TransportState {
    args: TransportArgs,
    link: Link,
    conn: u32,
    reader: Option<JoinHandle<()>>,
    /// The writing half: the commands sent to the transport, in order (the outbox,
    /// decision 0083), and the connection's sender, which whoever writes holds (the writer
    /// task, the application in place, or this actor). It also counts the items taken.
    commands: Arc<CommandWriter>,
    /// The task that writes commands while the connection is live.
    writer: Option<JoinHandle<()>>,
    ends: WireEnds,
    /// A reconnect is under way (its `Connected` is announced as `Reconnected`).
    reconnecting: bool,
    /// The handle presented in the current connection's setup.
    presented_handle: bool,
}

impl Drop for TransportState {
    /// However the actor ends (stopped, failed, killed): its writer ends with it, and
    /// commands sent after it are refused (the sender learns the session has ended).
    fn drop(&mut self) {
        self.commands.outbox.set_flow(Flow::Stopped);
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}

/// The Transport actor.
pub struct Transport;

impl Actor for Transport {
    type Msg = TransportMsg;
    type State = TransportState;
    type Arguments = TransportArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<TransportMsg>,
        args: TransportArgs,
    ) -> Result<TransportState, ActorProcessingErr> {
        let platform = args.endpoint.platform().clone();
        let sending = Mutex::new(Sending::new(
            args.config.command_encoder(&platform),
            platform.frame_kind(),
        ));
        let outbox = Outbox::new(Arc::clone(&args.telemetry));
        let ends = WireEnds {
            tap: Arc::clone(&args.tap),
            telemetry: Arc::clone(&args.telemetry),
            peers: Arc::clone(&args.peers),
            forwards_input: args.peers.tool_input.forwarded(),
        };
        let commands = Arc::new(CommandWriter {
            outbox,
            sending,
            ends: ends.clone(),
            fault: args.fault.clone(),
            taken: AtomicU64::new(0),
            transport: myself,
        });
        // Commands reach the outbox without a message to this actor; a disconnect still
        // comes here (it ends the connection, after what was sent before it).
        let route = Arc::clone(&commands) as Arc<dyn crate::slot::Route<TransportMsg>>;
        args.peers.transport.route_through(&route);
        Ok(TransportState {
            args,
            link: Link::Down,
            conn: 0,
            reader: None,
            writer: Some(tokio::spawn(Arc::clone(&commands).run())),
            commands,
            ends,
            reconnecting: false,
            presented_handle: false,
        })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<TransportMsg>,
        state: &mut TransportState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(reader) = state.reader.take() {
            reader.abort();
        }
        state.args.tap.flush();
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<TransportMsg>,
        message: TransportMsg,
        state: &mut TransportState,
    ) -> Result<(), ActorProcessingErr> {
        let taken = state.commands.taken.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(hook) = &state.args.fault {
            hook.before(Child::Transport, taken);
        }
        match message {
            TransportMsg::Start => state.open(&myself, 0, None).await,
            TransportMsg::Send(SessionCommand::Disconnect, _) | TransportMsg::Disconnect => {
                state.disconnect(&myself).await
            }
            // Sent before the outbox's route was in place, or refused by it: in order
            // with the rest through the outbox.
            TransportMsg::Send(command, origin) => {
                if let Err((command, _)) = state.commands.push(command, origin) {
                    tracing::debug!(kind = command.kind(), "dropping a command: transport gone");
                }
            }
            TransportMsg::SetupComplete { conn } => {
                if conn == state.conn && state.link == Link::AwaitingSetup {
                    if std::mem::take(&mut state.reconnecting) {
                        state.reports().reconnected(state.presented_handle);
                    }
                    // What was held goes out now, in order, on the writer.
                    state.set_link(Link::Live);
                }
            }
            TransportMsg::WriterFailed { reason } => return Err(reason.into()),
            TransportMsg::Reconnect { reason } => {
                if matches!(state.link, Link::Live | Link::AwaitingSetup) {
                    state.retire_connection(Some(1000), &reason).await;
                    state.link_down(None, Some(reason.clone()), false, true);
                    state.begin_reconnect(&myself, reason);
                }
            }
            TransportMsg::LinkEnded { conn, code, reason } => {
                if conn != state.conn {
                    return Ok(()); // a connection already replaced
                }
                if state.link == Link::Down {
                    return Ok(()); // already re-establishing after this connection broke
                }
                // Not live from here, before the sender goes: the writer stops taking
                // commands (what it took went to the broken connection, as a command sent
                // before the reader saw the end always did), and what is sent meanwhile is
                // held for the next connection or dropped with the session's (below).
                if state.link == Link::Live {
                    state.commands.outbox.set_flow(Flow::Hold);
                }
                state.commands.sending.lock().await.set_sender(None);
                state.reader = None;
                match state.link {
                    Link::Closing | Link::Closed => state.finish(code, reason, true),
                    _ if state.should_reconnect(code) => {
                        state.link_down(code, reason.clone(), false, false);
                        let why = reason.unwrap_or_else(|| "connection lost".to_owned());
                        state.begin_reconnect(&myself, why);
                    }
                    _ => state.finish(code, reason, false),
                }
            }
            TransportMsg::SetupTimedOut { conn } => {
                if conn == state.conn && state.link == Link::AwaitingSetup {
                    let after = state.args.options.setup_timeout;
                    state.report(SessionError::SetupTimeout { after });
                    state.retire_connection(Some(1000), "setup timeout").await;
                    if state.reconnecting {
                        state.link_down(None, Some("setup timeout".to_owned()), false, true);
                        state.begin_reconnect(&myself, "setup timeout".to_owned());
                    } else {
                        let reason = format!("no setupComplete within {after:?}");
                        state.finish(None, Some(reason), true);
                    }
                }
            }
            TransportMsg::CloseTimedOut { conn } => {
                if conn == state.conn && state.link == Link::Closing {
                    state.retire_connection(None, "close timeout").await;
                    let reason = "the server did not answer the close".to_owned();
                    state.finish(None, Some(reason), true);
                }
            }
            TransportMsg::Retry { attempt, reason } => {
                if state.link == Link::Down && state.reconnecting {
                    state.open(&myself, attempt, Some(reason)).await;
                }
            }
        }
        Ok(())
    }
}

/// How long a reconnect waits for the router to route what the ended connection left in
/// its inbox (so the setup presents the latest resumption handle) before it goes on.
pub const ROUTED_BEFORE_RECONNECT: Duration = Duration::from_secs(1);

/// How many outbound audio chunks wait while the connection is being (re-)established:
/// about 2 s of 40 ms chunks. Older ones are dropped (and counted): audio that old is stale
/// by the time it could be sent, and the model should hear the user now, not then.
pub const HELD_AUDIO_CHUNKS: usize = 50;

impl TransportState {
    /// Sets the link's state and, with it, what the outbox does with commands.
    fn set_link(&mut self, link: Link) {
        self.link = link;
        self.commands.outbox.set_flow(match link {
            Link::Down | Link::AwaitingSetup => Flow::Hold,
            Link::Live => Flow::Live,
            Link::Closing | Link::Closed => Flow::Drop,
        });
    }

    /// What this transport tells the tree (shared with the tape reader).
    fn reports(&self) -> TreeReports<'_> {
        self.args.tree()
    }

    fn report(&self, error: SessionError) {
        self.reports().error(error);
    }

    /// Opens connection number `conn + 1`. `attempt` is 0 for the first connect, else the
    /// reconnect attempt.
    async fn open(
        &mut self,
        myself: &ActorRef<TransportMsg>,
        attempt: u32,
        reason: Option<String>,
    ) {
        if attempt > 0 {
            // The server's latest resumption handle may still wait in the router's inbox,
            // in a frame of the connection that ended: the setup must present it, so the
            // router routes what it holds first (not waiting for the lanes; at most
            // `ROUTED_BEFORE_RECONNECT`, as a router stuck behind a blocked callback would
            // otherwise hold the reconnect too). A router that is gone has ended the
            // session: no connection is opened for it (decision 0088).
            let routed =
                tokio::time::timeout(ROUTED_BEFORE_RECONNECT, self.reports().routed()).await;
            if matches!(routed, Ok(Err(SessionOver))) {
                return;
            }
        }
        self.conn += 1;
        let conn = self.conn;
        if attempt > 0 {
            self.reports()
                .reconnecting(attempt, reason.clone().unwrap_or_default());
        }
        let request = self.args.endpoint.connect_request();
        let (sender, receiver) = match self
            .args
            .connector
            .connect(&request, &self.args.options.link)
            .await
        {
            Ok(halves) => halves,
            Err(error) => {
                self.report(SessionError::Connect {
                    message: error.to_string(),
                });
                let policy = self.args.options.reconnect;
                if attempt > 0 && attempt < policy.max_attempts {
                    self.schedule_retry(myself, attempt + 1, reason.unwrap_or_default());
                } else {
                    self.finish(None, Some(error.to_string()), false);
                }
                return;
            }
        };
        let mut sending = self.commands.sending.lock().await;
        sending.set_sender(Some(sender));
        sending.conn = conn;
        self.reader = Some(spawn_reader(
            conn,
            receiver,
            Arc::clone(&self.args.tap),
            Arc::clone(&self.args.peers),
            Arc::clone(&self.args.telemetry),
        ));

        // The setup, presenting the latest resumption handle if resumption is on.
        let setup = self.args.connection_setup();
        self.presented_handle = setup.presented_handle;
        let setup = setup.frame;
        // Both steps carry the setup frame's time, and reach the router before the frame
        // leaves, so before anything the server answers.
        let stamp = sending.stamp(&self.ends, &setup, false, Origin::Runtime);
        self.reports().connecting(stamp);
        sending.send_frame(setup).await;
        drop(sending);
        self.set_link(Link::AwaitingSetup);
        let timeout = self.args.options.setup_timeout;
        myself.send_after(timeout, move || TransportMsg::SetupTimedOut { conn });
    }

    fn should_reconnect(&self, code: Option<u16>) -> bool {
        let transient = matches!(code, None | Some(1001 | 1006 | 1011 | 1012 | 1013 | 1014));
        transient
            && self.args.options.reconnect.max_attempts > 0
            && self.conn > 0
            && (self.link == Link::Live || self.reconnecting)
    }

    fn begin_reconnect(&mut self, myself: &ActorRef<TransportMsg>, reason: String) {
        self.reconnecting = true;
        self.set_link(Link::Down);
        self.schedule_retry(myself, 1, reason);
    }

    fn schedule_retry(&mut self, myself: &ActorRef<TransportMsg>, attempt: u32, reason: String) {
        self.set_link(Link::Down);
        let delay = self.args.options.reconnect.delay(attempt);
        if delay.is_zero() {
            let _ = myself.cast(TransportMsg::Retry { attempt, reason });
        } else {
            myself.send_after(delay, move || TransportMsg::Retry { attempt, reason });
        }
    }

    /// Closes the current connection and stops listening to it.
    async fn retire_connection(&mut self, code: Option<u16>, reason: &str) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
        }
        // Not live from here: what is sent meanwhile is held for the next connection (or
        // dropped once the session's connection is over).
        self.set_link(Link::Down);
        let sender = {
            // What a write in place left goes out on this connection before its close.
            let mut sending = self.commands.sending.lock().await;
            sending.settle().await;
            let sender = sending.sender.take();
            sending.set_sender(None);
            sender
        };
        if let Some(mut sender) = sender
            && let Some(code) = code
        {
            let _ = sender.close(code, reason.to_owned()).await;
        }
    }

    /// Marks the end of the current connection in the recording and tells the router, with
    /// a reconnect to follow (`last: false`) or not; `client` when we closed it.
    fn link_down(&self, code: Option<u16>, reason: Option<String>, last: bool, client: bool) {
        self.reports()
            .connection_ended(self.conn, code, reason, client, last);
    }

    /// The session's connection is over for good; `client` when we closed it.
    fn finish(&mut self, code: Option<u16>, reason: Option<String>, client: bool) {
        if self.link == Link::Closed {
            return;
        }
        self.set_link(Link::Closed);
        self.link_down(code, reason, true, client);
    }

    async fn disconnect(&mut self, myself: &ActorRef<TransportMsg>) {
        match self.link {
            Link::Closing | Link::Closed => {}
            Link::Down => {
                self.reports().disconnecting();
                self.finish(Some(1000), Some("client disconnect".to_owned()), true);
            }
            Link::AwaitingSetup | Link::Live => {
                // What was sent before the disconnect goes out first (all of it when live;
                // held commands of a connection still being set up are dropped, as ever).
                let commands = Arc::clone(&self.commands);
                let mut sending = commands.sending.lock().await;
                sending.send_waiting(&self.ends, &commands.outbox).await;
                self.reports().disconnecting();
                self.set_link(Link::Closing);
                if let Some(sender) = &mut sending.sender
                    && let Err(error) = sender.close(1000, "client disconnect".to_owned()).await
                {
                    tracing::debug!(%error, "close frame not sent");
                }
                drop(sending);
                let conn = self.conn;
                myself.send_after(self.args.options.close_timeout, move || {
                    TransportMsg::CloseTimedOut { conn }
                });
            }
        }
    }
}

/// How a session that ended with this close reads: `closed with code 1008: quota`.
pub fn describe_close(code: Option<u16>, reason: Option<&str>) -> String {
    match (reason, code) {
        (Some(reason), Some(code)) => format!("closed with code {code}: {reason}"),
        (Some(reason), None) => reason.to_owned(),
        (None, Some(code)) => format!("closed with code {code}"),
        (None, None) => "the connection closed".to_owned(),
    }
}

/// Reads connection `conn` until it ends: stamps and records each frame and hands it to the
/// router, then tells the transport how the connection ended.
fn spawn_reader(
    conn: u32,
    receiver: Box<dyn LinkReceiver>,
    tap: Arc<WireTap>,
    peers: Arc<Peers>,
    telemetry: Arc<TelemetryShared>,
) -> JoinHandle<()> {
    let mut reader = Reader {
        receiver,
        router: None,
        tap,
        telemetry,
        peers,
        conn,
        waiting: None,
    };
    tokio::spawn(std::future::poll_fn(move |cx| reader.poll(cx)))
}

/// A wait of the reader's, boxed: for room in the router's inbox (then in the record
/// queue), or for room in the record queue alone. Whether the session goes on.
type ReaderWait = Pin<Box<dyn Future<Output = bool> + Send>>;

/// The reader of one connection: what it keeps from frame to frame, side by side
/// (`repr(C)`, in the order a frame reads them), polled by hand.
///
/// At thousands of sessions each line of a reader's state is cold when its next frame
/// comes. Written as an `async` block, the reader's state was a future of 664 bytes over
/// which the compiler spread the locals a frame reads (four lines a frame, and two more
/// for the futures it awaited); here the task's state is this struct, two lines, and what
/// waits (rarely: backpressure from the router or the recorder) is boxed (decision 0098).
#[repr(C)]
struct Reader {
    receiver: Box<dyn LinkReceiver>,
    /// The router's handles, kept from the first frame on (decision 0090).
    router: Option<InPlaceRouter>,
    tap: Arc<WireTap>,
    telemetry: Arc<TelemetryShared>,
    peers: Arc<Peers>,
    conn: u32,
    /// What the reader waits for before it reads on, if anything.
    waiting: Option<ReaderWait>,
}

impl Reader {
    /// Reads frames until the connection ends (`Ready` then, the transport told) or the
    /// session is over (`Ready`, nothing told: the router is gone).
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if let Some(waiting) = &mut self.waiting {
                let goes_on = ready!(waiting.as_mut().poll(cx));
                self.waiting = None;
                if !goes_on {
                    return Poll::Ready(()); // the router is gone: the session is over
                }
            }
            let (code, reason) = match ready!(self.receiver.poll_recv(cx)) {
                Some(LinkEvent::Frame(frame)) => {
                    self.frame(frame);
                    continue;
                }
                Some(LinkEvent::Closed { code, reason }) => (code, reason),
                Some(LinkEvent::Failed(error)) => (None, Some(error.to_string())),
                None => (None, None),
            };
            let conn = self.conn;
            self.peers
                .transport
                .cast(TransportMsg::LinkEnded { conn, code, reason });
            return Poll::Ready(());
        }
    }

    /// Stamps and records `frame` and routes it in place if the router is idle; otherwise
    /// sets the reader waiting to push it (backpressure to the socket: the router or the
    /// recorder is full).
    fn frame(&mut self, frame: LinkFrame) {
        // Everything this frame touches read at once (decision 0093).
        std::hint::black_box((
            self.tap.warm(),
            self.telemetry.warm(),
            self.router.as_ref().map(InPlaceRouter::warm),
        ));
        let binary = frame.kind == FrameKind::Binary;
        let stamp = self.tap.stamp_in(self.conn, binary, &frame.bytes);
        let tree = TreeReports::new(&self.peers, &self.tap, &self.telemetry);
        let unrouted = tree
            .route_kept(&mut self.router, self.conn, stamp, frame)
            .err();
        if unrouted.is_none() && self.tap.room().is_none() {
            return;
        }
        let (peers, tap, telemetry) = (
            Arc::clone(&self.peers),
            Arc::clone(&self.tap),
            Arc::clone(&self.telemetry),
        );
        self.waiting = Some(Box::pin(async move {
            if let Some(inbound) = unrouted {
                let tree = TreeReports::new(&peers, &tap, &telemetry);
                if tree.push_inbound(inbound).await.is_err() {
                    return false;
                }
            }
            if let Some(room) = tap.room() {
                room.await;
            }
            true
        }));
    }
}
