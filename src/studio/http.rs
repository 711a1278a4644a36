//! The studio's web server: `GET` only, on the address it was bound to (loopback unless
//! told otherwise), served by hyper's HTTP/1.1 server. Pages and scripts are embedded in the
//! binary; the API reads the recordings of one directory and nothing else.
//!
//! | path | answers |
//! |---|---|
//! | `/` | the studio's page (`/studio.js`, `/studio.css` beside it) |
//! | `/api/recordings` | the list ([`Listed`](super::catalog::Listed)) |
//! | `/api/recordings/NAME` | a call's overview ([`Overview`](super::call::Overview)) |
//! | `/api/recordings/NAME/events?from=MS&to=MS&limit=N&every=K` | the frames of a window (one in K audio and transcription frames) |
//! | `/api/recordings/NAME/frames/SEQ` | one frame in full |
//! | `/api/recordings/NAME/audio.wav` | the call's audio |
//! | `/api/recordings/NAME/peaks?from=MS&to=MS&buckets=N` | the audio's loudness, per slice |
//! | `/api/diff/A/B` | two recordings compared ([`DiffView`](super::diff::DiffView)) |
//! | `/api/live?name=NAME` | a WebSocket: a running session streams its recording in (`live.rs`) |
//!
//! `NAME` is a `*.wire.jsonl` file directly in the directory; anything else (a path, `..`,
//! a link leading out of the directory) is answered 404.
//!
//! Before any of that, every request's head is checked ([`access`](super::access)): a
//! foreign `Host` or `Origin` is answered 403, a live feed without the studio's token (and,
//! off loopback, any request without it) 401. Then a method other than `GET` is answered
//! 405 and a request with a body 413 (the studio takes none).
//!
//! What a client cannot get around: a request head must end within [`MAX_HEAD`] bytes (hyper
//! answers 431 and closes otherwise) and arrive whole within [`HEAD_READ_TIMEOUT`] of the
//! connection opening or of the previous answer on it (the connection is closed
//! unanswered otherwise). A connection answers one request and closes, as HTTP/1.0
//! does, unless the client asks to keep it (`Connection: keep-alive`, as browsers do):
//! then it answers requests one after another, pipelined ones in order.
//!
//! [`RunningStudio::stop`] stops accepting, lets each open connection finish the answer it
//! is writing (within [`STOP_GRACE`]), closes idle ones, and closes each live feed (1001)
//! after the line it is writing; it returns when all of them have ended.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Incoming};
use hyper::header::{
    CACHE_CONTROL, CONNECTION, CONTENT_TYPE, HeaderMap, HeaderValue, SET_COOKIE,
    X_CONTENT_TYPE_OPTIONS,
};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde::Serialize;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::access::{Presented, StudioAccess, TOKEN_COOKIE, fresh_token};
use super::assets;
use super::call;
use super::catalog;
use super::live::{self, LIVE_FEED_PATH, LiveCalls};
use super::seek::SeekCache;

/// The largest request head read (request line and headers): a longer one is answered 431.
/// (hyper's smallest allowed buffer is 8 KiB.)
pub const MAX_HEAD: usize = 16 * 1024;

/// How long a request head may take to arrive whole, from the connection opening or the
/// previous answer on it (an idle kept connection is closed after it too).
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`RunningStudio::stop`] lets an open connection finish the answer it is
/// writing before it is closed.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// The most frames one window answers.
pub const MAX_WINDOW_EVENTS: usize = 20_000;

/// The default cap on what one live feed may write: 256 MiB.
pub const DEFAULT_MAX_FEED_BYTES: u64 = 256 * 1024 * 1024;

/// How a studio is run, besides its address and directory.
#[derive(Debug, Clone)]
pub struct StudioOptions {
    /// Origins whose pages may use the studio besides its own (`--allow-origin`).
    pub allowed_origins: Vec<String>,
    /// The most bytes one live feed writes; then it is closed (1008) and the recording
    /// ends there, whole ([`DEFAULT_MAX_FEED_BYTES`]).
    pub max_feed_bytes: u64,
    /// The token (`None`: a fresh random one).
    pub token: Option<String>,
}

impl Default for StudioOptions {
    fn default() -> Self {
        StudioOptions {
            allowed_origins: Vec::new(),
            max_feed_bytes: DEFAULT_MAX_FEED_BYTES,
            token: None,
        }
    }
}

/// What every connection of a studio shares. Every task serving the studio (the accept
/// loop, a connection, a live feed) holds it: [`RunningStudio::stop`] waits until none does.
pub(super) struct Studio {
    pub(super) dir: Arc<PathBuf>,
    pub(super) live: Arc<LiveCalls>,
    seeks: Arc<SeekCache>,
    access: StudioAccess,
    pub(super) max_feed_bytes: u64,
    /// Cancelled when the studio stops.
    pub(super) stop: CancellationToken,
    /// Never sends: its receiver ([`RunningStudio::stop`]) sees the channel close when the
    /// last `Studio` is dropped.
    _alive: mpsc::Sender<()>,
}

/// A running studio server.
#[derive(Debug)]
pub struct RunningStudio {
    addr: SocketAddr,
    access: StudioAccess,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    /// Closes when every task serving the studio has ended.
    ended: mpsc::Receiver<()>,
}

impl RunningStudio {
    /// Binds `addr` and serves the recordings in `dir`, with the default options (a fresh
    /// token: [`RunningStudio::token`]).
    pub async fn start(addr: &str, dir: impl Into<PathBuf>) -> std::io::Result<RunningStudio> {
        RunningStudio::start_with(addr, dir, StudioOptions::default()).await
    }

    /// Binds `addr` and serves the recordings in `dir` with `options`.
    pub async fn start_with(
        addr: &str,
        dir: impl Into<PathBuf>,
        options: StudioOptions,
    ) -> std::io::Result<RunningStudio> {
        let token = match options.token {
            Some(token) => token,
            None => fresh_token()?,
        };
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let access = StudioAccess::new(addr.ip(), token, &options.allowed_origins);
        let shutdown = CancellationToken::new();
        let (alive, ended) = mpsc::channel(1);
        let studio = Arc::new(Studio {
            dir: Arc::new(dir.into()),
            live: Arc::new(LiveCalls::default()),
            seeks: Arc::new(SeekCache::default()),
            access: access.clone(),
            max_feed_bytes: options.max_feed_bytes,
            stop: shutdown.clone(),
            _alive: alive,
        });
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        if let Ok((tcp, _)) = accepted {
                            tokio::spawn(serve(tcp, studio.clone()));
                        }
                    }
                    () = studio.stop.cancelled() => break,
                }
            }
        });
        Ok(RunningStudio {
            addr,
            access,
            shutdown,
            task,
            ended,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token a live feed presents (and, off loopback, every request): fresh at each
    /// start unless [`StudioOptions::token`] gave one. A secret: never log it.
    pub fn token(&self) -> &str {
        self.access.token()
    }

    /// Whether every request needs the token (the studio is not on loopback).
    pub fn token_for_everything(&self) -> bool {
        self.access.token_for_everything()
    }

    /// `http://ADDR/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting connections and ends the open ones: an answer being written gets
    /// [`STOP_GRACE`] to finish, an idle connection is closed, a live feed is closed (1001)
    /// after the line it is writing. Returns when all of them have ended.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        let _ = self.task.await;
        // `None` once the last task holding the studio has dropped it.
        let _ = self.ended.recv().await;
    }
}

/// Serves one connection with hyper until it closes, is upgraded to a live feed (which
/// then runs on its own task), or the studio stops.
async fn serve(tcp: TcpStream, studio: Arc<Studio>) {
    let service = {
        let studio = Arc::clone(&studio);
        service_fn(move |request| answer(request, Arc::clone(&studio)))
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD);
    let connection = builder
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        () = studio.stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(STOP_GRACE, connection).await;
        }
    }
}

/// One response.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) content_type: &'static str,
    pub(super) body: Vec<u8>,
}

impl Answer {
    fn json(value: &impl Serialize) -> Answer {
        Answer {
            status: 200,
            content_type: "application/json",
            body: serde_json::to_vec(value).unwrap_or_default(),
        }
    }

    pub(super) fn error(status: u16, message: &str) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: json!({ "error": message }).to_string().into_bytes(),
        }
    }

    /// The HTTP response: the body with its type, never cached, never sniffed; with the
    /// token's cookie when `cookie` holds it; `connection: close` unless `keep_alive`.
    pub(super) fn into_response(
        self,
        cookie: Option<&str>,
        keep_alive: bool,
    ) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::from(self.body)));
        *response.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        if let Some(value) = cookie.and_then(|token| HeaderValue::try_from(set_cookie(token)).ok())
        {
            headers.insert(SET_COOKIE, value);
        }
        if !keep_alive {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// The cookie the page keeps the token in.
fn set_cookie(token: &str) -> String {
    format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/")
}

/// Whether the client asked to keep the connection (`Connection: keep-alive`).
fn keeps_alive(headers: &HeaderMap) -> bool {
    headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("keep-alive"))
}

/// Whether a request comes with a body (a length over 0, or chunks).
fn has_body(request: &Request<Incoming>) -> bool {
    let body = request.body();
    !body.is_end_stream() && body.size_hint().exact() != Some(0)
}

/// The answer to one request: the access check on its head first, then the method, the
/// body, and the route (or the live feed's upgrade).
async fn answer(
    request: Request<Incoming>,
    studio: Arc<Studio>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    // The target as the request line gave it (an absolute-form target keeps its scheme and
    // host, and so routes nowhere).
    let target = request.uri().to_string();
    let is_feed = target.split('?').next() == Some(LIVE_FEED_PATH);
    let keep_alive = keeps_alive(request.headers());
    let presented = Presented::from_head(
        request.headers(),
        target.split_once('?').map(|(_, query)| query),
    );
    // Before anything is read or written for the request.
    let token_in_query = match studio.access.check(&presented, is_feed) {
        Ok(token_in_query) => token_in_query,
        Err(refusal) => {
            let answer = Answer::error(refusal.status(), &refusal.to_string());
            return Ok(answer.into_response(None, keep_alive));
        }
    };
    if request.method() != Method::GET {
        if is_feed && live::asks_for_websocket(request.headers()) {
            let refusal = live::LiveRefusal::NotGet(request.method().to_string());
            return Ok(live::refused(&refusal));
        }
        let answer = Answer::error(405, "the studio answers GET only");
        return Ok(answer.into_response(None, keep_alive));
    }
    if has_body(&request) {
        // Its bytes are not read: the connection closes after the answer.
        let answer = Answer::error(413, "the studio takes no request body");
        return Ok(answer.into_response(None, false));
    }
    if is_feed {
        return Ok(live::open(request, &target, studio).await);
    }
    // Off loopback, the page came with its token in the address: it keeps it in a cookie
    // for its own requests.
    let cookie =
        (token_in_query && studio.access.token_for_everything()).then(|| studio.access.token());
    let (dir, live, seeks) = (
        Arc::clone(&studio.dir),
        Arc::clone(&studio.live),
        Arc::clone(&studio.seeks),
    );
    let routed = tokio::task::spawn_blocking(move || route(&dir, &live, &seeks, &target))
        .await
        .unwrap_or_else(|_| Answer::error(500, "the request failed"));
    Ok(routed.into_response(cookie, keep_alive))
}

/// The answer to `GET target`.
fn route(dir: &Path, live: &LiveCalls, seeks: &Arc<SeekCache>, target: &str) -> Answer {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == name)
            .and_then(|(_, value)| value.parse::<u64>().ok())
    };
    match path {
        "/" | "/index.html" => assets::page("index.html"),
        "/studio.js" => assets::page("studio.js"),
        "/studio.css" => assets::page("studio.css"),
        "/api/recordings" => match catalog::list(dir) {
            Ok(mut list) => {
                for listed in &mut list {
                    if let catalog::Listed::Recording(info) = listed {
                        info.live = live.status(&info.name).is_some();
                    }
                }
                Answer::json(&json!({ "dir": dir.display().to_string(), "recordings": list }))
            }
            Err(error) => Answer::error(500, &format!("cannot list {}: {error}", dir.display())),
        },
        _ if path.starts_with("/api/diff/") => {
            let names: Vec<String> = path["/api/diff/".len()..]
                .split('/')
                .map(percent_decoded)
                .collect();
            let [a, b] = names.as_slice() else {
                return Answer::error(404, "a diff names two recordings: /api/diff/A/B");
            };
            let (Some(a_file), Some(b_file)) = (recording(dir, a), recording(dir, b)) else {
                return Answer::error(
                    404,
                    &format!("no recordings {a:?} and {b:?} in the studio's directory"),
                );
            };
            super::diff::diff(&a_file, a, &b_file, b)
                .map(|view| Answer::json(&view))
                .unwrap_or_else(|error| Answer::error(500, &error))
        }
        _ => {
            let Some(rest) = path.strip_prefix("/api/recordings/") else {
                return Answer::error(404, "no such page");
            };
            let (name, more) = rest.split_once('/').unwrap_or((rest, ""));
            let name = percent_decoded(name);
            let Some(file) = recording(dir, &name) else {
                return Answer::error(
                    404,
                    &format!("no recording {name:?} in the studio's directory"),
                );
            };
            // A call still streaming in grows under every request: an index of it would be
            // stale at once, so it is read from the start.
            let is_live = live.status(&name).is_some();
            let index = |wanted: bool| {
                if wanted && !is_live {
                    seeks.index(&file)
                } else {
                    None
                }
            };
            let result = match more {
                "" => call::overview(&file, &name).map(|mut overview| {
                    // The page's next requests are windows of this call: index a long one
                    // while the page draws.
                    if !is_live {
                        seeks.warm(&file);
                    }
                    if let Some(status) = live.status(&name) {
                        overview.live = true;
                        overview.dropped = status.dropped;
                    }
                    Answer::json(&overview)
                }),
                "events" => {
                    let from = param("from").unwrap_or(0);
                    let to = param("to").unwrap_or(u64::MAX);
                    let limit = param("limit")
                        .map_or(MAX_WINDOW_EVENTS, |l| {
                            usize::try_from(l).unwrap_or(MAX_WINDOW_EVENTS)
                        })
                        .min(MAX_WINDOW_EVENTS);
                    let every = param("every").unwrap_or(1).max(1);
                    let seek = index(from > 0);
                    call::events(&file, from, to, limit, every, seek.as_deref()).map(|(events, truncated)| {
                        Answer::json(
                            &json!({ "events": events, "truncated": truncated, "every": every }),
                        )
                    })
                }
                "peaks" => {
                    let from = param("from").unwrap_or(0);
                    let to = param("to").unwrap_or(from.saturating_add(1));
                    let buckets = param("buckets")
                        .map_or(1_000, |b| usize::try_from(b).unwrap_or(1_000))
                        .clamp(1, 8_000);
                    let seek = index(from > 0);
                    call::peaks(&file, from, to, buckets, seek.as_deref()).map(|peaks| {
                        Answer::json(&json!({ "from": from, "to": to, "peaks": peaks }))
                    })
                }
                "trace.json" => super::downloads::trace_json(&file, &name).map(|body| Answer {
                    status: 200,
                    content_type: "application/json",
                    body,
                }),
                "page.html" => super::downloads::page_html(&file, &name).map(|body| Answer {
                    status: 200,
                    content_type: "text/html; charset=utf-8",
                    body,
                }),
                "audio.wav" => call::audio(&file).map(|body| Answer {
                    status: 200,
                    content_type: "audio/wav",
                    body,
                }),
                other => match other
                    .strip_prefix("frames/")
                    .and_then(|seq| seq.parse().ok())
                {
                    Some(seq) => {
                        call::frame(&file, seq, index(true).as_deref()).map(|frame| match frame {
                            Some(frame) => Answer::json(&frame),
                            None => Answer::error(404, &format!("{name} has no frame {seq}")),
                        })
                    }
                    None => Ok(Answer::error(404, "no such page")),
                },
            };
            result.unwrap_or_else(|error| Answer::error(500, &format!("{name}: {error}")))
        }
    }
}

/// The file of recording `name`, if it is one of the directory's own (not a path, not a
/// link out of it).
fn recording(dir: &Path, name: &str) -> Option<PathBuf> {
    catalog::own_recording(dir, name)
}

/// `%XX` escapes decoded (a name with spaces, say); a bad escape is kept as it is.
fn percent_decoded(text: &str) -> String {
    String::from_utf8_lossy(&reel_protocol::percent_decode(text)).into_owned()
}
