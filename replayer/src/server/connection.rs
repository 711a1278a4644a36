//! One client connection, from the TCP accept to its report: TLS, the WebSocket upgrade (a
//! path that is not a Live path gets HTTP 404), the first frame, then replay or recording
//! as the mode and the tapes decide.

use std::sync::Arc;

use reel_recorder::read_wire_log;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::client_socket::{ClientEvent, ClientFrame, ClientSocket, ClientWs, ServerStream};
use super::error::ConnectionError;
use super::http_head::{FirstLook, Prefixed, answer_plain, first_look};
use super::listener::Shared;
use super::live_path::{RequestHead, not_found, not_found_body};
use super::proxy_session::{ProxyContext, proxy};
use super::replay_session::{ReplayContext, replay};
use super::report::{ConnectionReport, End, Outcome};
use super::tape_index::{LoadedTape, Selection};
use super::{
    CLOSE_INVALID_FRAME, CLOSE_NO_TAPE, CLOSE_SHUTDOWN, CLOSE_TOO_LARGE, CLOSE_UPSTREAM, Mode,
};

/// Serves connection number `conn`, then logs and reports how it ended.
pub(crate) async fn serve(tcp: TcpStream, conn: u64, shared: Arc<Shared>) {
    let mut head = None;
    let outcome = run(tcp, &shared, &mut head).await;
    let report = ConnectionReport {
        conn,
        path: head.map(|h| h.redacted),
        outcome,
    };
    log(&report);
    if shared.reports.try_send(report).is_err() {
        tracing::debug!("connection report dropped: nobody reads the reports");
    }
}

fn log(report: &ConnectionReport) {
    let path = report.path.as_deref().unwrap_or("-");
    match &report.outcome {
        Outcome::Replayed { .. }
        | Outcome::Recorded { .. }
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
        Ok(Ok(ws)) => ws,
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
    };
    let live_path = head.as_ref().and_then(|h| h.live_path.as_ref());
    match shared.mode {
        Mode::Record => record(&mut socket, first, shared, live_path).await,
        Mode::Replay | Mode::Auto => {
            let matcher = shared.index.matcher();
            let selection = match matcher.prepare(&first.payload) {
                Ok(opening) => Ok(shared.index.select(&opening)),
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
                (_, Mode::Auto) => record(&mut socket, first, shared, live_path).await,
                (Ok(Selection::NoMatch(closest)), _) => {
                    socket
                        .close(CLOSE_NO_TAPE, "reel: no tape matches this setup")
                        .await;
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

/// TLS (if any) and the WebSocket upgrade; the request head goes to `head_out`.
async fn handshake(
    tcp: TcpStream,
    shared: &Shared,
    head_out: &mut Option<RequestHead>,
) -> Result<ClientWs, Outcome> {
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
    if let FirstLook::Plain { target } = look {
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (target.as_str(), None),
        };
        let head = RequestHead::from_target(path, query);
        let status = answer_plain(&mut stream, path, &not_found_body(path))
            .await
            .map_err(io_failure)?;
        *head_out = Some(head);
        return Err(if status == 404 {
            Outcome::NotFound
        } else {
            Outcome::NotWebSocket
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
        Ok(ws) => Ok(ws),
        Err(WsError::Http(_)) => Err(Outcome::NotFound),
        Err(error) => Err(Outcome::Failed(ConnectionError::Handshake {
            message: error.to_string(),
        })),
    }
}

/// Records through the upstream; in auto mode, the new tape joins the index.
async fn record(
    socket: &mut ClientSocket,
    first: ClientFrame,
    shared: &Shared,
    live_path: Option<&super::live_path::LivePath>,
) -> Outcome {
    let (Some(upstream), Some(record_dir)) = (&shared.upstream, &shared.record_dir) else {
        // Unreachable: record and auto servers are built with both.
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
        live_path,
        drain_timeout: shared.drain_timeout,
        max_frame_bytes: shared.max_frame_bytes,
        shutdown: &shared.shutdown,
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
