//! One client connection, from the TCP accept to its report: TLS, the WebSocket upgrade (a
//! path that is not a Live path gets HTTP 404), the first frame, then replay or recording
//! as the mode and the tapes decide.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use reel_recorder::read_wire_log;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc::error::TrySendError;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::client_socket::{ClientEvent, ClientFrame, ClientSocket, ClientWs, ServerStream};
use super::error::ConnectionError;
use super::http_head::{
    FirstLook, PlainRequest, Prefixed, answer_plain, answer_refusal, first_look,
};
use super::listener::Shared;
use super::live_path::{RequestHead, not_found, not_found_body};
use super::proxy_session::{ProxyContext, proxy};
use super::replay_session::{ReplayContext, replay};
use super::report::{ConnectionReport, End, Outcome};
use super::rest_path::RestPath;
use super::rest_session::{RestReport, RestResult, refuse, serve_rest};
use super::tape_index::{LoadedTape, Selection};
use super::test_name::TestName;
use super::test_name::requested_test;
use super::{
    CLOSE_BAD_REQUEST, CLOSE_INVALID_FRAME, CLOSE_NO_TAPE, CLOSE_SETUP_TIMEOUT, CLOSE_SHUTDOWN,
    CLOSE_TOO_LARGE, CLOSE_UPSTREAM, Mode,
};

/// Serves connection number `conn`, then logs and reports how it ended.
pub(crate) async fn serve(tcp: TcpStream, conn: u64, shared: Arc<Shared>) {
    let mut head = None;
    let outcome = run(tcp, &shared, &mut head).await;
    if outcome == Outcome::Health {
        // A runner polling for readiness: not a connection worth a report.
        tracing::debug!("health check answered");
        return;
    }
    let test = head
        .as_ref()
        .and_then(|h| h.test.as_ref().ok().cloned().flatten())
        .map(|test| test.to_string());
    let report = ConnectionReport {
        conn,
        path: head.map(|h| h.redacted),
        test,
        outcome,
    };
    log(&report);
    if shared.keep_every_report {
        // Fails only once the server's handle is gone: nobody can read it any more.
        if shared.reports.send(report).await.is_err() {
            tracing::debug!("connection report not kept: the server's handle is gone");
        }
    } else if let Err(TrySendError::Full(report)) = shared.reports.try_send(report) {
        let dropped = shared.dropped_reports.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::warn!(
            conn = report.conn,
            dropped,
            "connection report dropped: {} reports wait unread",
            super::listener::REPORT_BACKLOG
        );
    }
}

fn log(report: &ConnectionReport) {
    let path = report.path.as_deref().unwrap_or("-");
    match &report.outcome {
        Outcome::Replayed { .. }
        | Outcome::Recorded { .. }
        | Outcome::Forwarded { .. }
        | Outcome::Rest(RestReport {
            result:
                RestResult::Replayed { .. } | RestResult::Recorded { .. } | RestResult::Forwarded { .. },
            ..
        })
        | Outcome::NotFound
        | Outcome::NotWebSocket => {
            tracing::info!(path, "{report}");
        }
        _ => tracing::warn!(path, "{report}"),
    }
}

async fn run(tcp: TcpStream, shared: &Shared, head_out: &mut Option<RequestHead>) -> Outcome {
    let handshake = handshake(tcp, shared, head_out);
    let ws = match tokio::time::timeout(shared.handshake_timeout, handshake).await {
        Ok(Ok(Handshaken::WebSocket(ws))) => ws,
        Ok(Ok(Handshaken::Rest(mut rest))) => {
            // Outside the handshake's time limit: a streamed answer may take its time.
            let test = head_out
                .as_ref()
                .and_then(|h| h.test.as_ref().ok().cloned().flatten());
            return serve_rest(
                &mut rest.stream,
                rest.path,
                rest.body,
                test.as_ref(),
                shared,
            )
            .await;
        }
        Ok(Err(outcome)) => return outcome,
        Err(_) => {
            return Outcome::Failed(ConnectionError::HandshakeTimeout {
                seconds: shared.handshake_timeout.as_secs(),
            });
        }
    };
    let head = head_out.clone();
    if let Some(head) = &head {
        tracing::debug!(
            path = %head.redacted,
            credential = head.credentials.any(),
            "client connected"
        );
    }
    let mut socket = ClientSocket::new(ws);
    let first = tokio::select! {
        event = socket.next() => event,
        () = shared.shutdown.cancelled() => {
            socket.close(CLOSE_SHUTDOWN, "reel: the server is shutting down").await;
            return Outcome::NoSetup { end: End::Shutdown };
        }
        () = tokio::time::sleep(shared.setup_timeout) => {
            let reason = setup_timeout_reason(shared.setup_timeout);
            socket.close(CLOSE_SETUP_TIMEOUT, &reason).await;
            return Outcome::NoSetup {
                end: End::ServerClosed {
                    code: Some(CLOSE_SETUP_TIMEOUT),
                    reason: Some(reason),
                },
            };
        }
    };
    let first = match first {
        ClientEvent::Frame(frame) => frame,
        ClientEvent::Closed { code, reason } => {
            return Outcome::NoSetup {
                end: End::ClientClosed { code, reason },
            };
        }
        ClientEvent::Gone { message } => {
            return Outcome::NoSetup {
                end: End::ClientGone { message },
            };
        }
        ClientEvent::TooLarge { size, limit } => {
            let reason = format!("reel: frame over the {limit}-byte limit");
            socket.close(CLOSE_TOO_LARGE, &reason).await;
            return Outcome::TooLarge { size, limit };
        }
        ClientEvent::NotUtf8 { number, .. } => return not_utf8(number),
    };
    let live_path = head.as_ref().and_then(|h| h.live_path.as_ref());
    let test = match head.as_ref().map(|h| &h.test) {
        Some(Err(error)) => {
            let reason = format!("reel: bad test name: {error}");
            socket.close(CLOSE_BAD_REQUEST, &reason).await;
            return Outcome::BadTestName(error.clone());
        }
        Some(Ok(test)) => test.as_ref(),
        None => None,
    };
    let records_once = |test: Option<&TestName>| match test {
        // The index holds the tapes the server started with: `once` adds no recording.
        Some(test) => !shared.index.has_test(test),
        None => shared.index.len() == 0,
    };
    match shared.mode {
        Mode::Record | Mode::Passthrough => {
            record(&mut socket, first, shared, live_path, test).await
        }
        Mode::Once if records_once(test) => {
            record(&mut socket, first, shared, live_path, test).await
        }
        Mode::Replay | Mode::Auto | Mode::Once => {
            let matcher = shared.index.matcher();
            let selection = match matcher.prepare(&first.payload) {
                Ok(opening) => Ok(shared.index.select(&opening, test)),
                Err(error) => Err(error),
            };
            match (selection, shared.mode) {
                (Ok(Selection::Matched(candidates)), _) => {
                    let context = ReplayContext {
                        matcher,
                        pace: shared.pace,
                        shutdown: &shared.shutdown,
                    };
                    replay(&mut socket, candidates, context).await
                }
                (_, Mode::Auto) => record(&mut socket, first, shared, live_path, test).await,
                (Ok(Selection::NoMatch(closest)), _) => {
                    let reason = match test {
                        Some(test) if !shared.index.has_test(test) => {
                            format!("reel: test {test} has no tape")
                        }
                        Some(test) => format!("reel: no tape of test {test} matches this setup"),
                        None => "reel: no tape matches this setup".to_owned(),
                    };
                    socket.close(CLOSE_NO_TAPE, &reason).await;
                    Outcome::NoTape { closest }
                }
                (Err(error), _) => {
                    socket
                        .close(
                            CLOSE_INVALID_FRAME,
                            "reel: frame 1 is not a Live client frame",
                        )
                        .await;
                    Outcome::InvalidFrame {
                        frame: first.number,
                        error: error.to_string(),
                    }
                }
            }
        }
    }
}

/// The close reason of a client that sent no frame within `timeout`.
fn setup_timeout_reason(timeout: std::time::Duration) -> String {
    let millis = timeout.as_millis();
    if millis.is_multiple_of(1000) {
        format!("reel: no setup frame within {} s", millis / 1000)
    } else {
        format!("reel: no setup frame within {millis} ms")
    }
}

/// The report of a client whose frame `number` was a text frame that is not UTF-8 (the
/// socket was closed with 1007).
pub(crate) fn not_utf8(number: u32) -> Outcome {
    Outcome::InvalidFrame {
        frame: number,
        error: "a text frame that is not valid UTF-8".to_owned(),
    }
}

/// What the handshake opened.
enum Handshaken {
    /// A Live WebSocket.
    WebSocket(ClientWs),
    /// A REST call, its body read.
    Rest(RestCall),
}

/// A REST call waiting for its answer.
struct RestCall {
    stream: Box<dyn ServerStream>,
    path: RestPath,
    body: Bytes,
}

/// TLS (if any), then the WebSocket upgrade or a REST call's body; the request head goes
/// to `head_out`.
async fn handshake(
    tcp: TcpStream,
    shared: &Shared,
    head_out: &mut Option<RequestHead>,
) -> Result<Handshaken, Outcome> {
    let _ = tcp.set_nodelay(true);
    let mut stream: Box<dyn ServerStream> = match &shared.tls {
        None => Box::new(tcp),
        Some(acceptor) => match acceptor.accept(tcp).await {
            Ok(stream) => Box::new(stream),
            Err(error) => {
                return Err(Outcome::Failed(ConnectionError::Tls {
                    message: error.to_string(),
                }));
            }
        },
    };
    let io_failure = |error: std::io::Error| {
        Outcome::Failed(ConnectionError::Io {
            message: error.to_string(),
        })
    };
    let (read, look) = first_look(&mut stream).await.map_err(io_failure)?;
    let guard = match &look {
        FirstLook::Bad { reason } => {
            let _ = answer_refusal(&mut stream, 400, reason).await;
            return Err(Outcome::Refused {
                status: 400,
                reason: reason.clone(),
            });
        }
        FirstLook::Upgrade(guard) => guard,
        FirstLook::Plain(plain) => &plain.guard,
    };
    // Before anything is done for the request: no upstream opened, nothing written.
    if let Err(refusal) = shared
        .access
        .check(guard.host.as_deref(), guard.origin.as_deref())
    {
        let (path, query) = split_target(&guard.target);
        *head_out = Some(RequestHead::from_target(path, query));
        let reason = format!("reel: {refusal}");
        let _ = answer_refusal(&mut stream, 403, &reason).await;
        return Err(Outcome::Refused {
            status: 403,
            reason,
        });
    }
    if let FirstLook::Plain(plain) = look {
        let target = plain.target.as_str();
        let (path, query) = split_target(target);
        let mut head = RequestHead::from_target(path, query);
        if plain.method == "POST"
            && let Some(rest_path) = RestPath::parse(target)
        {
            head.test = requested_test(plain.test_header.as_deref(), query);
            let test_error = head.test.clone().err();
            *head_out = Some(head);
            if let Some(error) = test_error {
                let message = format!("reel: bad test name: {error}");
                refuse(&mut stream, 400, "Bad Request", message).await;
                return Err(Outcome::BadTestName(error));
            }
            let body = match read_body(&mut stream, &read, &plain, shared.max_frame_bytes).await {
                Ok(body) => body,
                Err((status, reason, message)) => {
                    return Err(Outcome::Rest(RestReport {
                        method: rest_path.method,
                        model: rest_path.model,
                        result: refuse(&mut stream, status, reason, message).await,
                    }));
                }
            };
            return Ok(Handshaken::Rest(RestCall {
                stream,
                path: rest_path,
                body,
            }));
        }
        let health = health_body(shared);
        let status = answer_plain(&mut stream, path, &not_found_body(path), &health)
            .await
            .map_err(io_failure)?;
        *head_out = Some(head);
        return Err(match status {
            200 => Outcome::Health,
            404 => Outcome::NotFound,
            _ => Outcome::NotWebSocket,
        });
    }
    let stream: Box<dyn ServerStream> = Box::new(Prefixed::new(read, stream));
    // The error type is tungstenite's callback signature, not ours.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let head = RequestHead::of(request);
        let served = head.live_path.is_some();
        let refusal = (!served).then(|| not_found(&head));
        *head_out = Some(head);
        match refusal {
            None => Ok(response),
            Some(refusal) => Err(refusal),
        }
    };
    let config = WebSocketConfig::default()
        // 16 KiB reads, not tungstenite's 128 KiB zero-filled per connection: plenty for a
        // 100 ms audio frame, and 500 clients stay small.
        .read_buffer_size(16 * 1024)
        .max_frame_size(Some(shared.max_frame_bytes))
        .max_message_size(Some(shared.max_frame_bytes));
    match tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config)).await {
        Ok(ws) => Ok(Handshaken::WebSocket(ws)),
        Err(WsError::Http(_)) => Err(Outcome::NotFound),
        Err(error) => Err(Outcome::Failed(ConnectionError::Handshake {
            message: error.to_string(),
        })),
    }
}

/// A request target's path and query.
fn split_target(target: &str) -> (&str, Option<&str>) {
    match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    }
}

/// A REST call's body: what the first look read past the head, then the rest of
/// `Content-Length`. A body sent in chunks, without a length or over `limit` is refused with
/// the status to answer.
async fn read_body(
    stream: &mut Box<dyn ServerStream>,
    read: &Bytes,
    plain: &PlainRequest,
    limit: usize,
) -> Result<Bytes, (u16, &'static str, String)> {
    let Some(length) = plain.content_length.filter(|_| !plain.chunked) else {
        return Err((
            411,
            "Length Required",
            "reel: a REST call needs a Content-Length body".to_owned(),
        ));
    };
    if length > limit {
        return Err((
            413,
            "Payload Too Large",
            format!("reel: a body of {length} bytes is over the {limit}-byte limit"),
        ));
    }
    let mut body = read.get(plain.head_len..).unwrap_or_default().to_vec();
    body.truncate(length);
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = stream.read(&mut chunk).await.map_err(|error| {
            (
                400,
                "Bad Request",
                format!("reel: the body could not be read: {error}"),
            )
        })?;
        if n == 0 {
            return Err((
                400,
                "Bad Request",
                format!(
                    "reel: the body ended after {} of {length} bytes",
                    body.len()
                ),
            ));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Bytes::from(body))
}

/// What `GET /healthz` answers: the mode and the recorded connections, as JSON.
fn health_body(shared: &Shared) -> String {
    serde_json::json!({
        "status": "ok",
        "mode": shared.mode.as_str(),
        "recorded_connections": shared.index.len(),
        "recorded_rest_calls": shared.rest.len(),
    })
    .to_string()
        + "\n"
}

/// Records through the upstream (passthrough: only forwards); in auto mode, the new tape
/// joins the index.
async fn record(
    socket: &mut ClientSocket,
    first: ClientFrame,
    shared: &Shared,
    live_path: Option<&super::live_path::LivePath>,
    test: Option<&TestName>,
) -> Outcome {
    let record_dir = match shared.mode {
        Mode::Passthrough => None,
        _ => shared.record_dir.as_deref(),
    };
    let Some(upstream) = shared
        .upstream
        .as_ref()
        .filter(|_| record_dir.is_some() || shared.mode == Mode::Passthrough)
    else {
        // Unreachable: record, auto, once and passthrough servers are built with what
        // they need.
        socket
            .close(CLOSE_UPSTREAM, "reel: this server cannot record")
            .await;
        return Outcome::NoSetup {
            end: End::ServerClosed {
                code: Some(CLOSE_UPSTREAM),
                reason: None,
            },
        };
    };
    let context = ProxyContext {
        upstream,
        record_dir,
        test,
        redactor: shared.redactor.as_ref(),
        live_path,
        drain_timeout: shared.drain_timeout,
        max_frame_bytes: shared.max_frame_bytes,
        shutdown: &shared.shutdown,
        open: &shared.open_recordings,
    };
    let outcome = proxy(socket, first, context).await;
    if shared.mode == Mode::Auto
        && let Outcome::Recorded { path, .. } = &outcome
    {
        match read_wire_log(path) {
            Ok(entries) => shared.index.add(&LoadedTape {
                name: path.display().to_string(),
                entries,
            }),
            Err(error) => tracing::warn!(%error, "the new recording cannot be replayed"),
        }
    }
    outcome
}
