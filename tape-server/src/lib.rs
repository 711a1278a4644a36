//! The tape server: a WebSocket server that speaks the Live protocol to any client (the
//! official SDKs, reel itself, anything else), replaying recorded sessions, recording new
//! ones through the real API, or both.
//!
//! - [`TapeServer::replay`]: each client's setup picks the recorded connection to replay
//!   ([`TapeLibrary`]); each client frame must then match the recorded one ([`Matching`]:
//!   strict canonical equality, or loose with [`MatchRules`]), and the server frames that
//!   followed it in the recording are sent back, at once or at the recorded pace ([`Pace`]).
//! - [`TapeServer::record`]: a recording proxy to an [`Upstream`]; every client connection
//!   becomes a wire log `<model>-<n>.wire.jsonl` ([`recording_stem`]), completed even when
//!   the client leaves mid-turn.
//! - [`TapeServer::auto`]: replay when a tape's setup matches, record otherwise; what is
//!   recorded is replayed to the next client with the same setup.
//! - [`TapeServer::once`]: record a test's session only when the test has no tape yet,
//!   otherwise replay strictly and refuse a miss (vcrpy's `once`): a changed prompt fails
//!   the test instead of calling the API.
//! - [`TapeServer::passthrough`]: forward to the upstream, record nothing.
//!
//! A client names its test with the `x-reel-test` header (or the `reel_test` query
//! parameter): it is then replayed only that test's tapes, and recorded into
//! `<test>.wire.jsonl` ([`TestName`]). What a proxy records can be redacted on the way to
//! the file ([`TapeServer::redact`]). A plain `GET /healthz` answers `200` with the mode and
//! the number of recorded connections, for a test runner waiting for the server.
//!
//! Beside Live, the same port answers the REST calls an SDK client makes too
//! (`generateContent`, `streamGenerateContent`: [`RestPath`]), from cassettes
//! ([`CassetteLibrary`], [`TapeServer::cassettes`]) in replay, and recorded into
//! `<test>.cassette.json` through the upstream in the recording modes.
//!
//! ```no_run
//! use reel_tape_server::{Matching, TapeLibrary, TapeServer};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut server = TapeServer::replay(TapeLibrary::open("tests/tapes")?)
//!     .matching(Matching::loose())
//!     .start()
//!     .await?;
//! println!("point the SDK at {}", server.base_url());
//! while let Some(report) = server.next_report().await {
//!     eprintln!("{report}");
//! }
//! # Ok(()) }
//! ```
//!
//! ## Close codes
//!
//! | code | reason | when |
//! |---|---|---|
//! | recorded | recorded | the tape's server closed the connection there (a recorded drop, or a code a close frame cannot carry, drops the connection) |
//! | [`CLOSE_MISMATCH`] 4001 | `reel: frame N does not match the tape at PATH` | a client frame differs from the recorded one (PATH: the first differing JSON path) |
//! | [`CLOSE_MISMATCH`] 4001 | `reel: frame N is past the end of the tape` | the recorded client had sent no more frames |
//! | [`CLOSE_NO_TAPE`] 4004 | `reel: no tape matches this setup` | no recorded connection starts with this setup |
//! | [`CLOSE_NO_TAPE`] 4004 | `reel: test T has no tape` | the client named test T, and T has no tape (replay, or `once` with T's tapes on disk) |
//! | [`CLOSE_NO_TAPE`] 4004 | `reel: no tape of test T matches this setup` | T has tapes, but none starts with this setup |
//! | [`CLOSE_BAD_REQUEST`] 4400 | `reel: bad test name: WHY` | the `x-reel-test` header or `reel_test` parameter cannot name a file (empty, only dots, over 200 bytes, not UTF-8, two different names) |
//! | [`CLOSE_INVALID_FRAME`] 1007 | `reel: frame N is not a Live client frame` | a frame reel cannot read (replay) |
//! | [`CLOSE_TOO_LARGE`] 1009 | `reel: frame over the L-byte limit` | a frame over [`TapeServer::max_frame_bytes`] |
//! | [`CLOSE_UPSTREAM`] 1011 | `reel: the upstream could not be reached` | record mode, upstream connect failed |
//! | [`CLOSE_UPSTREAM`] 1011 | `reel: cannot create the recording` | record mode, the recording file cannot be created |
//! | [`CLOSE_INVALID_FRAME`] 1007 | `reel: frame N is not valid UTF-8 text` | a text frame that is not UTF-8 (every mode) |
//! | [`CLOSE_SETUP_TIMEOUT`] 4408 | `reel: no setup frame within N s` | the client sent no frame within [`TapeServer::setup_timeout`] of the upgrade |
//! | [`CLOSE_SHUTDOWN`] 1001 | `reel: the server is shutting down` | [`RunningServer::shutdown`] |
//!
//! A path that is not a Live path is refused before the upgrade with HTTP 404 and a body
//! listing the served paths ([`LivePath`]); a plain HTTP request (no upgrade) gets the same
//! 404, or 426 on a Live path. A request that is not HTTP, or an upgrade without
//! `Sec-WebSocket-Key` or with a version other than 13, gets HTTP 400 with the reason.
//! Credentials in the query or headers are accepted and never recorded or logged; logs
//! carry the redacted URL only.
//!
//! ## Who may connect
//!
//! The server serves the user of this machine, not the web pages they have open
//! ([`LocalAccess`]): a request with an `Origin` header not allowed by
//! [`TapeServer::allow_origin`] is refused with HTTP 403, and so is, on a loopback bind, a
//! `Host` that is not a loopback name or address (DNS rebinding). The refusal comes before
//! anything is done for the request: no upstream is opened, no file written
//! ([`Outcome::Refused`]).

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod client_socket;
mod connection;
mod error;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod http_head;
mod listener;
mod live_path;
mod local_access;
mod matching;
mod open_recordings;
mod proxy_session;
mod recording;
mod replay_session;
mod report;
mod report_json;
mod rest_cassettes;
mod rest_path;
mod rest_session;
mod rest_upstream;
mod rules;
mod tape_index;
mod test_name;
mod tls;
mod turn_tracker;
mod upstream;

use std::path::PathBuf;
use std::time::Duration;

use reel_protocol::DEFAULT_MAX_FRAME_BYTES;
use reel_protocol::json::PathDiff;
use reel_recorder::redact::Redactor;

pub use client_socket::MAX_CLOSE_REASON_BYTES;
pub use error::{ConnectionError, RulesError, ServeError, TapeLoadError, TlsError, UpstreamError};
pub use listener::{REPORT_BACKLOG, RunningServer};
pub use live_path::{
    GOOGLE_AI_LIVE_PATH, LiveApi, LivePath, PresentedCredentials, RequestHead, VERTEX_LIVE_PATH,
};
pub use local_access::{AccessRefusal, LocalAccess};
pub use matching::{Matching, canonical};
pub use recording::recording_stem;
pub use replay_session::Pace;
pub use report::{ConnectionReport, End, Expected, Incomplete, Mismatch, Outcome, RecordFailed};
pub use rest_cassettes::{CASSETTE_SUFFIX, CassetteLibrary, CassetteLoadError, NO_TEST_CASSETTE};
pub use rest_path::{RestMethod, RestPath};
pub use rest_session::{RestReport, RestResult};
pub use rules::{IGNORED, Ignore, IgnoreRule, MatchRules};
pub use tape_index::{ClosestTape, LoadedTape, TAPE_SUFFIX, TapeLibrary};
pub use test_name::{MAX_TEST_NAME_BYTES, TEST_HEADER, TEST_QUERY_PARAM, TestName, TestNameError};
pub use tls::{SELF_SIGNED_NAMES, SelfSignedCertificate, TlsFiles, TlsIdentity, default_tls_dir};
pub use upstream::{UPSTREAM_CONNECT_TIMEOUT, Upstream};

/// Close code: a client frame does not match the tape.
pub const CLOSE_MISMATCH: u16 = 4001;
/// Close code: no tape matches the client's setup.
pub const CLOSE_NO_TAPE: u16 = 4004;
/// Close code: a client frame is not a Live client frame (RFC 6455 "invalid payload").
pub const CLOSE_INVALID_FRAME: u16 = 1007;
/// Close code: a client frame is over the size limit (RFC 6455 "message too big").
pub const CLOSE_TOO_LARGE: u16 = 1009;
/// Close code: a recording proxy cannot serve the client, because the upstream could not be
/// reached or the recording cannot be written (RFC 6455 "internal error"; 1014 "bad
/// gateway" is refused as a protocol violation by tungstenite-based clients, reel's own
/// included).
pub const CLOSE_UPSTREAM: u16 = 1011;
/// Close code: the request cannot be served as it is (a test name that cannot name a file).
pub const CLOSE_BAD_REQUEST: u16 = 4400;
/// Close code: the server is shutting down (RFC 6455 "going away").
pub const CLOSE_SHUTDOWN: u16 = 1001;
/// Close code: the client sent no frame within the setup timeout (HTTP's 408, as 4400 is
/// HTTP's 400).
pub const CLOSE_SETUP_TIMEOUT: u16 = 4408;

/// The default time a client has, after the upgrade, to send its first (setup) frame.
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The default time a recording proxy keeps reading the upstream after its client left.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The default time a client has for the TLS and WebSocket handshakes.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a server does with a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Replay a matching tape; refuse a client no tape matches.
    Replay,
    /// Record every client through the upstream.
    Record,
    /// Replay when a tape matches, record otherwise.
    Auto,
    /// Record when no tape exists for the test (for a client naming no test: when the
    /// server has no tapes at all); otherwise replay, and refuse a client no tape matches.
    Once,
    /// Forward to the upstream; record nothing.
    Passthrough,
}

impl Mode {
    /// The mode's name on the command line and in reports: `replay`, `record`, `auto`,
    /// `once`, `passthrough`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Replay => "replay",
            Mode::Record => "record",
            Mode::Auto => "auto",
            Mode::Once => "once",
            Mode::Passthrough => "passthrough",
        }
    }

    /// Whether the mode may write recordings.
    pub fn records(self) -> bool {
        matches!(self, Mode::Record | Mode::Auto | Mode::Once)
    }
}

/// A tape server, configured; [`TapeServer::start`] binds and runs it.
#[derive(Debug, Clone)]
pub struct TapeServer {
    mode: Mode,
    tapes: TapeLibrary,
    upstream: Option<Upstream>,
    record_dir: Option<PathBuf>,
    host: String,
    port: u16,
    tls: Option<TlsIdentity>,
    matching: Matching,
    pace: Pace,
    drain_timeout: Duration,
    handshake_timeout: Duration,
    setup_timeout: Duration,
    max_frame_bytes: usize,
    redactor: Option<Redactor>,
    cassettes: CassetteLibrary,
    allowed_origins: Vec<String>,
    keep_every_report: bool,
}

impl TapeServer {
    fn with_mode(mode: Mode) -> Self {
        TapeServer {
            mode,
            tapes: TapeLibrary::new(),
            upstream: None,
            record_dir: None,
            host: "127.0.0.1".to_owned(),
            port: 0,
            tls: None,
            matching: Matching::Strict,
            pace: Pace::AtOnce,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            setup_timeout: DEFAULT_SETUP_TIMEOUT,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            redactor: None,
            cassettes: CassetteLibrary::new(),
            allowed_origins: Vec::new(),
            keep_every_report: false,
        }
    }

    /// Replays `tapes`.
    pub fn replay(tapes: TapeLibrary) -> Self {
        TapeServer {
            tapes,
            ..TapeServer::with_mode(Mode::Replay)
        }
    }

    /// Records every client through `upstream` into `out_dir` (created if needed), one wire
    /// log per connection ([`recording_stem`]): client frames `out`, upstream frames `in`,
    /// close markers, stamped by the proxy; frames are forwarded unchanged both ways.
    ///
    /// A recording is never left partial because the client went away: when the client
    /// leaves while the upstream owes a `setupComplete` or the end of
    /// a turn, the proxy keeps reading and recording until it arrives or
    /// [`TapeServer::drain_timeout`] passes, then closes the upstream with the client's
    /// close code and records the client's close.
    pub fn record(upstream: Upstream, out_dir: impl Into<PathBuf>) -> Self {
        TapeServer {
            upstream: Some(upstream),
            record_dir: Some(out_dir.into()),
            ..TapeServer::with_mode(Mode::Record)
        }
    }

    /// Replays `tapes` to clients they match, records the others through `upstream` into
    /// `out_dir`; new recordings are replayed to later clients.
    pub fn auto(tapes: TapeLibrary, upstream: Upstream, out_dir: impl Into<PathBuf>) -> Self {
        TapeServer {
            tapes,
            upstream: Some(upstream),
            record_dir: Some(out_dir.into()),
            ..TapeServer::with_mode(Mode::Auto)
        }
    }

    /// Replays a test's tapes when it has some (as the server starts), and records it
    /// through `upstream` into `out_dir` when it has none; a client no tape of its test
    /// matches is refused ([`CLOSE_NO_TAPE`]) rather than recorded. A client that names no
    /// test is recorded only when `tapes` is empty.
    pub fn once(tapes: TapeLibrary, upstream: Upstream, out_dir: impl Into<PathBuf>) -> Self {
        TapeServer {
            tapes,
            upstream: Some(upstream),
            record_dir: Some(out_dir.into()),
            ..TapeServer::with_mode(Mode::Once)
        }
    }

    /// Forwards every client to `upstream` and records nothing.
    pub fn passthrough(upstream: Upstream) -> Self {
        TapeServer {
            upstream: Some(upstream),
            ..TapeServer::with_mode(Mode::Passthrough)
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Answers `generateContent` and `streamGenerateContent` calls from `cassettes` (see
    /// [`CassetteLibrary`]); recording modes record new calls into `<test>.cassette.json`
    /// in the recording directory.
    pub fn cassettes(mut self, cassettes: CassetteLibrary) -> Self {
        self.cassettes = cassettes;
        self
    }

    /// Redacts what a recording proxy writes with `redactor` (the client and the upstream
    /// still see every frame as it was).
    pub fn redact(mut self, redactor: Redactor) -> Self {
        self.redactor = Some(redactor);
        self
    }

    /// Listens on `host` (an address or a name; default `127.0.0.1`).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Listens on `port` (default 0: any free port; see [`RunningServer::local_addr`]).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serves `wss://` with `identity`.
    pub fn tls(mut self, identity: TlsIdentity) -> Self {
        self.tls = Some(identity);
        self
    }

    /// How client frames are matched (default [`Matching::Strict`]).
    pub fn matching(mut self, matching: Matching) -> Self {
        self.matching = matching;
        self
    }

    /// How fast recorded frames are sent (default [`Pace::AtOnce`]).
    pub fn pace(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self
    }

    /// How long a recording proxy keeps reading the upstream for the rest of a turn after
    /// its client left (default [`DEFAULT_DRAIN_TIMEOUT`]).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// How long a client has for the TLS and WebSocket handshakes (default
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`]).
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How long a client has, after the upgrade, to send its first frame (default
    /// [`DEFAULT_SETUP_TIMEOUT`]); then it is closed with [`CLOSE_SETUP_TIMEOUT`].
    pub fn setup_timeout(mut self, timeout: Duration) -> Self {
        self.setup_timeout = timeout;
        self
    }

    /// Also serves requests whose `Origin` header is `origin` (`https://app.example`): a
    /// web page of that origin may then use the server. Without it, a request carrying an
    /// `Origin` is refused with HTTP 403 ([`LocalAccess`]); one without (the SDKs, test
    /// runners) is served.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The largest frame accepted, both ways (default 16 MiB).
    pub fn max_frame_bytes(mut self, limit: usize) -> Self {
        self.max_frame_bytes = limit;
        self
    }

    /// Keeps every connection's report for [`RunningServer::next_report`]: a connection
    /// that ends while [`REPORT_BACKLOG`] reports wait unread waits for room. For a caller
    /// that reads every report, as `reel serve` does: a burst of connections ending at once
    /// then costs the reader time, never a report. Default (off): such a report is dropped,
    /// logged as a warning and counted in [`RunningServer::dropped_reports`], so a server
    /// whose reports nobody reads holds a bounded number of them.
    pub fn keep_every_report(mut self, keep: bool) -> Self {
        self.keep_every_report = keep;
        self
    }

    /// Checks the configuration, binds the address and starts serving.
    pub async fn start(self) -> Result<RunningServer, ServeError> {
        listener::start(self).await
    }
}
