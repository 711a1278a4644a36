//! The studio's web server: `GET` only, one request per connection, on the address it was
//! bound to (loopback unless told otherwise). Pages and scripts are embedded in the binary;
//! the API reads the recordings of one directory and nothing else.
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
//! | `/api/live?name=NAME` | a WebSocket: a running session streams its recording in ([`live`](super::live)) |
//!
//! `NAME` is a `*.wire.jsonl` file directly in the directory; anything else (a path, `..`,
//! a link leading out of the directory) is answered 404.
//!
//! Before any of that, every request is checked ([`access`](super::access)): a foreign
//! `Host` or `Origin` is answered 403, a live feed without the studio's token (and, off
//! loopback, any request without it) 401.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::access::{Presented, StudioAccess, TOKEN_COOKIE, fresh_token};
use super::assets;
use super::call;
use super::catalog;
use super::live::{self, LIVE_FEED_PATH, LiveCalls};
use super::seek::SeekCache;

/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;

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

/// What every connection of a studio shares.
struct Studio {
    dir: Arc<PathBuf>,
    live: Arc<LiveCalls>,
    seeks: Arc<SeekCache>,
    access: StudioAccess,
    max_feed_bytes: u64,
}

/// A running studio server.
#[derive(Debug)]
pub struct RunningStudio {
    addr: SocketAddr,
    access: StudioAccess,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
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
        let studio = Arc::new(Studio {
            dir: Arc::new(dir.into()),
            live: Arc::new(LiveCalls::default()),
            seeks: Arc::new(SeekCache::default()),
            access: access.clone(),
            max_feed_bytes: options.max_feed_bytes,
        });
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        if let Ok((tcp, _)) = accepted {
                            tokio::spawn(serve(tcp, studio.clone()));
                        }
                    }
                    () = stop.cancelled() => break,
                }
            }
        });
        Ok(RunningStudio {
            addr,
            access,
            shutdown,
            task,
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

    /// Stops accepting connections.
    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
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
}

async fn serve(mut tcp: TcpStream, studio: Arc<Studio>) {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(&head);
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let target = request.path.unwrap_or_default();
    let is_feed = target.split('?').next() == Some(LIVE_FEED_PATH);
    let presented = Presented {
        host: header("host"),
        origin: header("origin"),
        authorization: header("authorization"),
        cookie: header("cookie"),
        query: target.split_once('?').map(|(_, query)| query),
    };
    // Before anything is read or written for the request.
    let checked = match parsed {
        Ok(httparse::Status::Complete(_)) => Some(studio.access.check(&presented, is_feed)),
        _ => None,
    };
    let mut set_cookie = false;
    let answer = match (parsed, request.method, checked) {
        (_, _, Some(Err(refusal))) => Answer::error(refusal.status(), &refusal.to_string()),
        (Ok(httparse::Status::Complete(len)), Some("GET"), Some(Ok(_))) if is_feed => {
            let name = live::requested_name(target);
            let upgrade = header("upgrade").is_some_and(|value| {
                String::from_utf8_lossy(value).eq_ignore_ascii_case("websocket")
            });
            let key = header("sec-websocket-key")
                .filter(|_| upgrade)
                .map(<[u8]>::to_vec);
            let rest = head[len..].to_vec();
            let feed = live::Feed {
                dir: studio.dir.clone(),
                live: studio.live.clone(),
                max_bytes: studio.max_feed_bytes,
            };
            live::accept(tcp, feed, name, key, rest).await;
            return;
        }
        (Ok(httparse::Status::Complete(_)), Some("GET"), Some(Ok(token_in_query))) => {
            // Off loopback, the page came with its token in the address: it keeps it in a
            // cookie for its own requests.
            set_cookie = token_in_query && studio.access.token_for_everything();
            let target = target.to_owned();
            let shared = studio.clone();
            tokio::task::spawn_blocking(move || {
                route(&shared.dir, &shared.live, &shared.seeks, &target)
            })
            .await
            .unwrap_or_else(|_| Answer::error(500, "the request failed"))
        }
        (Ok(httparse::Status::Complete(_)), Some(_), _) => {
            Answer::error(405, "the studio answers GET only")
        }
        _ => Answer::error(400, "not an HTTP request"),
    };
    let reason = match answer.status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    };
    let cookie = if set_cookie {
        format!(
            "set-cookie: {TOKEN_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/\r\n",
            studio.access.token()
        )
    } else {
        String::new()
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\n{cookie}connection: close\r\n\r\n",
        answer.status,
        answer.content_type,
        answer.body.len()
    );
    // One write: a WebSocket client refused here reads the body only from what came with
    // the head.
    let mut response = head.into_bytes();
    response.extend_from_slice(&answer.body);
    let _ = tcp.write_all(&response).await;
    let _ = tcp.shutdown().await;
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
