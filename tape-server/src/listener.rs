//! Binding, accepting, and the handle of a running server.
//!
//! One task accepts; every connection gets its own task, numbered from 1 in accept order,
//! so a client that sends garbage, an oversize frame or drops mid-handshake only ends its
//! own task. Shutting down stops accepting, lets every session close (a replay closes with
//! 1001; a recording proxy finishes the owed turn and its file) and waits for them.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reel_recorder::redact::Redactor;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::error::ServeError;
use super::live_path::{GOOGLE_AI_LIVE_PATH, VERTEX_LIVE_PATH};
use super::local_access::LocalAccess;
use super::matching::FrameMatcher;
use super::open_recordings::OpenRecordings;
use super::replay_session::Pace;
use super::report::ConnectionReport;
use super::rest_cassettes::RestIndex;
use super::tape_index::TapeIndex;
use super::upstream::Upstream;
use super::{Mode, TapeServer, connection};

/// How many connection reports wait for [`RunningServer::next_report`] before a new one
/// waits for room ([`TapeServer::keep_every_report`](crate::TapeServer::keep_every_report))
/// or is dropped and counted ([`RunningServer::dropped_reports`]); every report is logged
/// either way.
pub const REPORT_BACKLOG: usize = 1024;

/// What every connection of a server shares.
pub(crate) struct Shared {
    pub mode: Mode,
    pub index: TapeIndex,
    pub upstream: Option<Upstream>,
    pub record_dir: Option<PathBuf>,
    pub pace: Pace,
    pub drain_timeout: Duration,
    pub handshake_timeout: Duration,
    pub setup_timeout: Duration,
    pub max_frame_bytes: usize,
    /// Who may connect.
    pub access: LocalAccess,
    /// The recordings being written.
    pub open_recordings: OpenRecordings,
    pub tls: Option<TlsAcceptor>,
    pub shutdown: CancellationToken,
    pub reports: mpsc::Sender<ConnectionReport>,
    /// Whether a connection waits for room for its report rather than dropping it.
    pub keep_every_report: bool,
    /// Reports dropped because [`REPORT_BACKLOG`] waited unread.
    pub dropped_reports: Arc<AtomicU64>,
    pub redactor: Option<Redactor>,
    /// The REST calls answered beside Live.
    pub rest: RestIndex,
    /// One writer of cassettes at a time (a cassette is rewritten whole).
    pub rest_writes: tokio::sync::Mutex<()>,
}

/// A running tape server. Dropping it stops the server (as [`RunningServer::shutdown`]
/// does, without waiting).
#[derive(Debug)]
pub struct RunningServer {
    local_addr: SocketAddr,
    tls: bool,
    mode: Mode,
    tapes: usize,
    shutdown: CancellationToken,
    accept_loop: Option<JoinHandle<()>>,
    reports: mpsc::Receiver<ConnectionReport>,
    /// Reports taken off the channel while [`RunningServer::shutdown`] waited for the
    /// sessions (so that a session waiting for room for its report can end), not read yet.
    held: VecDeque<ConnectionReport>,
    dropped_reports: Arc<AtomicU64>,
    open_recordings: OpenRecordings,
}

pub(crate) async fn start(config: TapeServer) -> Result<RunningServer, ServeError> {
    if let Pace::Recorded { speed } = config.pace
        && !(speed.is_finite() && speed > 0.0)
    {
        return Err(ServeError::InvalidSpeed { speed });
    }
    let matcher = FrameMatcher::new(&config.matching)?;
    let index = TapeIndex::build(&config.tapes, matcher)?;
    if let Some(dir) = &config.record_dir {
        std::fs::create_dir_all(dir).map_err(|source| ServeError::RecordDir {
            path: dir.clone(),
            source,
        })?;
    }
    let tls = config
        .tls
        .as_ref()
        .map(|identity| identity.acceptor())
        .transpose()?;
    let addr = format!("{}:{}", bracketed(&config.host), config.port);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let (report_sender, reports) = mpsc::channel(REPORT_BACKLOG);
    let shutdown = CancellationToken::new();
    let tapes = index.len();
    let is_tls = tls.is_some();
    let open_recordings = OpenRecordings::default();
    let dropped_reports = Arc::new(AtomicU64::new(0));
    let shared = Arc::new(Shared {
        open_recordings: open_recordings.clone(),
        mode: config.mode,
        index,
        upstream: config.upstream,
        record_dir: config.record_dir,
        pace: config.pace,
        drain_timeout: config.drain_timeout,
        handshake_timeout: config.handshake_timeout,
        setup_timeout: config.setup_timeout,
        max_frame_bytes: config.max_frame_bytes,
        access: config
            .allowed_origins
            .iter()
            .fold(LocalAccess::for_bind(local_addr.ip()), |access, origin| {
                access.allow_origin(origin)
            }),
        tls,
        shutdown: shutdown.clone(),
        reports: report_sender,
        keep_every_report: config.keep_every_report,
        dropped_reports: Arc::clone(&dropped_reports),
        redactor: config.redactor,
        rest: RestIndex::build(&config.cassettes),
        rest_writes: tokio::sync::Mutex::new(()),
    });
    tracing::info!(
        addr = %local_addr,
        mode = ?shared.mode,
        tls = is_tls,
        recorded_connections = tapes,
        "tape server listening"
    );
    let accept_loop = tokio::spawn(accept_loop(listener, shared));
    Ok(RunningServer {
        local_addr,
        tls: is_tls,
        mode: config.mode,
        tapes,
        shutdown,
        accept_loop: Some(accept_loop),
        reports,
        held: VecDeque::new(),
        dropped_reports,
        open_recordings,
    })
}

/// An IPv6 literal in brackets, for `host:port`.
fn bracketed(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut sessions = JoinSet::new();
    let mut next_conn = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    next_conn += 1;
                    let span = tracing::info_span!("conn", n = next_conn, %peer);
                    sessions.spawn(
                        connection::serve(tcp, next_conn, shared.clone()).instrument(span),
                    );
                }
                Err(error) if is_transient(&error) => continue,
                Err(error) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    tracing::error!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(joined) = sessions.join_next(), if !sessions.is_empty() => {
                if let Err(error) = joined {
                    tracing::error!(%error, "a connection task failed");
                }
            }
            () = shared.shutdown.cancelled() => break,
        }
    }
    drop(listener);
    while let Some(joined) = sessions.join_next().await {
        if let Err(error) = joined {
            tracing::error!(%error, "a connection task failed");
        }
    }
    tracing::info!("tape server stopped");
}

fn is_transient(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted
    )
}

impl RunningServer {
    /// The address the server listens on (the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Whether the server listens on a loopback address only (when not, it checks no
    /// `Host` header, and anyone who can reach the port can use it).
    pub fn is_loopback(&self) -> bool {
        self.local_addr.ip().is_loopback()
    }

    /// Whether the server speaks TLS (`wss://`).
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many recorded connections the server started with.
    pub fn recorded_connections(&self) -> usize {
        self.tapes
    }

    /// `ws://HOST:PORT` (`wss://` with TLS), the base URL to give an SDK. A server on an
    /// unspecified address (`0.0.0.0`, `::`) is named by the loopback address.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        let mut addr = self.local_addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        format!("{scheme}://{addr}")
    }

    /// The Google AI Live URL (API version `v1`; any version is served).
    pub fn live_url(&self) -> String {
        format!("{}{GOOGLE_AI_LIVE_PATH}", self.base_url())
    }

    /// The Vertex AI Live URL.
    pub fn vertex_url(&self) -> String {
        format!("{}{VERTEX_LIVE_PATH}", self.base_url())
    }

    /// The next connection report, in the order connections end; `None` once the server
    /// has stopped and every report was read.
    pub async fn next_report(&mut self) -> Option<ConnectionReport> {
        match self.held.pop_front() {
            Some(report) => Some(report),
            None => self.reports.recv().await,
        }
    }

    /// How many connection reports were dropped because [`REPORT_BACKLOG`] of them waited
    /// unread (never, with [`TapeServer::keep_every_report`](crate::TapeServer::keep_every_report)).
    pub fn dropped_reports(&self) -> u64 {
        self.dropped_reports.load(Ordering::Relaxed)
    }

    /// The recordings being written now (a recording proxy's sessions in progress), in
    /// path order: what a server stopped at once, without [`RunningServer::shutdown`],
    /// leaves unfinished.
    pub fn open_recordings(&self) -> Vec<PathBuf> {
        self.open_recordings.paths()
    }

    /// A report if one is waiting.
    pub fn try_next_report(&mut self) -> Option<ConnectionReport> {
        self.held
            .pop_front()
            .or_else(|| self.reports.try_recv().ok())
    }

    /// Stops accepting, closes every session (a replay with 1001; a recording proxy
    /// finishes the owed turn and its file) and waits for them to end.
    /// Reports of the sessions it closed can still be read afterwards.
    pub async fn shutdown(&mut self) {
        self.shutdown.cancel();
        let Some(mut accept_loop) = self.accept_loop.take() else {
            return;
        };
        // The sessions' reports are taken off the channel while they end: a session that
        // waits for room for its report (`keep_every_report`) must not wait for a reader
        // that is waiting for this.
        loop {
            tokio::select! {
                joined = &mut accept_loop => {
                    if let Err(error) = joined {
                        tracing::error!(%error, "the accept loop failed");
                    }
                    return;
                }
                Some(report) = self.reports.recv() => self.held.push_back(report),
            }
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
