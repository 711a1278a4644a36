//! A stand-in for the Gemini REST API on loopback: scripted answers, recorded requests.
//!
//! [`GeminiStandin`] listens on `127.0.0.1` (plain HTTP/1.1, or over TLS with a certificate
//! the test made), answers each request with the next [`Answer`] the test queued, and keeps
//! every request it received ([`RecordedRequest`]: method, path, query, headers, JSON body)
//! so a test can assert exactly what was sent.
//!
//! ```
//! use reel_llm::{BaseLlm, LlmRequest};
//! use reel_llm::testing::gemini_standin::{Answer, GeminiStandin};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let standin = GeminiStandin::bind().await;
//! standin.push(Answer::json(&json!({
//!     "candidates": [{"content": {"parts": [{"text": "hi!"}]}, "finishReason": "STOP"}]
//! })));
//!
//! let llm = standin.llm_builder("gemini-2.5-flash").build().unwrap();
//! let answer = llm.generate(LlmRequest::new("gemini-2.5-flash").user("hello")).await.unwrap();
//! assert_eq!(answer.text, "hi!");
//!
//! let requests = standin.requests();
//! assert_eq!(requests[0].path, "/v1beta/models/gemini-2.5-flash:generateContent");
//! assert_eq!(requests[0].body["contents"][0]["parts"][0]["text"], "hello");
//! # }
//! ```
//!
//! Like `reel_actors::testing::ScriptedServer`, it uses no timers and runs its tasks on the runtime that
//! called `bind`, so it works under `#[tokio::test(start_paused = true)]`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::loopback;
use super::loopback::ServerIo;
use crate::gemini::{GeminiLlm, GeminiLlmBuilder};

/// The API key [`GeminiStandin::llm_builder`] sets.
pub const STANDIN_API_KEY: &str = "reel-standin-key";

/// The most bytes a request's head may take.
const MAX_HEAD_BYTES: usize = 64 << 10;

/// One scripted answer: a status and a whole body, a body written in steps, or silence.
#[derive(Debug, Clone)]
pub struct Answer {
    status: u16,
    content_type: &'static str,
    body: AnswerBody,
}

#[derive(Debug, Clone)]
enum AnswerBody {
    /// Sent at once, with a `content-length`.
    Whole(Bytes),
    /// Sent chunked, one step at a time.
    Steps(Vec<Step>),
    /// Never answered.
    Hang,
}

#[derive(Debug, Clone)]
enum Step {
    /// One write (one HTTP chunk), flushed.
    Write(Bytes),
    /// Waits for [`GeminiStandin::resume`].
    Pause,
    /// Closes the connection without finishing the body.
    Cut,
}

impl Answer {
    /// `200 OK` with `body` as JSON.
    pub fn json(body: &Value) -> Answer {
        Answer::status(200, "application/json", body.to_string())
    }

    /// An error status with the API's error body:
    /// `{"error": {"code": code, "message": message, "status": status}}`.
    pub fn api_error(code: u16, status: &str, message: &str) -> Answer {
        let body = json!({"error": {"code": code, "message": message, "status": status}});
        Answer::status(code, "application/json", body.to_string())
    }

    /// Any status with any body, sent whole.
    pub fn status(code: u16, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
        Answer {
            status: code,
            content_type,
            body: AnswerBody::Whole(body.into()),
        }
    }

    /// `200 OK` as server-sent events: each of `events` written as `data: {json}` and a
    /// blank line (CR LF line ends, as the API sends them), one write each.
    pub fn sse(events: impl IntoIterator<Item = Value>) -> Answer {
        events
            .into_iter()
            .fold(Answer::stream(), |answer, event| answer.event(&event))
    }

    /// `200 OK`, `text/event-stream`, with a body still to be scripted with
    /// [`Answer::write`], [`Answer::event`], [`Answer::pause`] and [`Answer::cut`].
    pub fn stream() -> Answer {
        Answer {
            status: 200,
            content_type: "text/event-stream",
            body: AnswerBody::Steps(Vec::new()),
        }
    }

    /// Then writes `bytes` as they are, in one write (one HTTP chunk); empty bytes write
    /// nothing, as an empty chunk would end the body. On a whole answer, its body becomes
    /// the first write and the answer is sent chunked.
    pub fn write(self, bytes: impl Into<Bytes>) -> Answer {
        self.step(Step::Write(bytes.into()))
    }

    /// Then writes one event, `data: {json}\r\n\r\n`, in one write.
    pub fn event(self, event: &Value) -> Answer {
        self.write(format!("data: {event}\r\n\r\n"))
    }

    /// Then waits until the test calls [`GeminiStandin::resume`]: everything written so far
    /// has been sent before the next write starts.
    pub fn pause(self) -> Answer {
        self.step(Step::Pause)
    }

    /// Then closes the connection in the middle of the body.
    pub fn cut(self) -> Answer {
        self.step(Step::Cut)
    }

    /// Never answers; the connection stays open until the client gives up.
    pub fn hang() -> Answer {
        Answer {
            status: 200,
            content_type: "application/json",
            body: AnswerBody::Hang,
        }
    }

    fn step(mut self, step: Step) -> Answer {
        self.body = match self.body {
            AnswerBody::Steps(mut steps) => {
                steps.push(step);
                AnswerBody::Steps(steps)
            }
            AnswerBody::Whole(body) => AnswerBody::Steps(vec![Step::Write(body), step]),
            AnswerBody::Hang => AnswerBody::Steps(vec![step]),
        };
        self
    }
}

/// One request the stand-in received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query, without `?`.
    pub query: Option<String>,
    /// The headers in the order received, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; `Null` if empty, a JSON string of the text if it is not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// The value of the first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// What the connections share with the test.
#[derive(Debug)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    requests: Mutex<Vec<RecordedRequest>>,
    resumed: Semaphore,
}

/// The Gemini REST API played by a test, on `127.0.0.1` and a free port.
///
/// Requests get the queued answers in the order they arrive; a request with none queued
/// gets `500` with an API error saying so. Connections are kept alive between requests.
/// Request bodies are read by their `content-length` (a chunked request body is not read).
/// Dropping the stand-in stops it: the port refuses connections and open ones close, once
/// the runtime has run the aborted tasks.
#[derive(Debug)]
pub struct GeminiStandin {
    local_addr: SocketAddr,
    certificate: Option<CertificateDer<'static>>,
    shared: Arc<Shared>,
    accept_loop: JoinHandle<()>,
}

impl GeminiStandin {
    /// A plain-HTTP stand-in.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub async fn bind() -> GeminiStandin {
        GeminiStandin::start(None, None).await
    }

    /// An HTTPS stand-in presenting `certificate_chain` and `key`. A self-signed
    /// certificate must name `127.0.0.1` (an IP address SAN); [`GeminiStandin::llm_builder`]
    /// trusts the chain's first certificate.
    ///
    /// # Panics
    ///
    /// If the certificate or key is unusable, or no loopback port can be bound.
    pub async fn bind_tls(
        certificate_chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> GeminiStandin {
        let certificate = certificate_chain.first().cloned();
        let acceptor = loopback::tls_acceptor("GeminiStandin::bind_tls", certificate_chain, key);
        GeminiStandin::start(Some(acceptor), certificate).await
    }

    async fn start(
        tls: Option<TlsAcceptor>,
        certificate: Option<CertificateDer<'static>>,
    ) -> GeminiStandin {
        let (listener, local_addr) = loopback::bind("GeminiStandin").await;
        let shared = Arc::new(Shared {
            answers: Mutex::default(),
            requests: Mutex::default(),
            resumed: Semaphore::new(0),
        });
        let accept_loop = tokio::spawn(accept_loop(listener, tls, Arc::clone(&shared)));
        GeminiStandin {
            local_addr,
            certificate,
            shared,
            accept_loop,
        }
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://127.0.0.1:PORT`, or `https://…` for a TLS stand-in.
    pub fn base_url(&self) -> String {
        let scheme = if self.certificate.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.local_addr)
    }

    /// A [`GeminiLlm`] builder for `model` pointing here, with [`STANDIN_API_KEY`] and, for
    /// a TLS stand-in, its certificate trusted.
    pub fn llm_builder(&self, model: &str) -> GeminiLlmBuilder {
        let builder = GeminiLlm::builder(model)
            .api_key(STANDIN_API_KEY)
            .base_url(self.base_url());
        match &self.certificate {
            Some(certificate) => builder.root_certificate(certificate.clone()),
            None => builder,
        }
    }

    /// Queues `answer` for the next request that has none yet.
    pub fn push(&self, answer: Answer) -> &GeminiStandin {
        lock(&self.shared.answers).push_back(answer);
        self
    }

    /// Every request received so far, in the order they arrived. A request is recorded
    /// before its answer starts, so once a client has an answer its request is here.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Lets one [`Answer::pause`] go on (the next one reached, if none is waiting yet).
    pub fn resume(&self) {
        self.shared.resumed.add_permits(1);
    }
}

impl Drop for GeminiStandin {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

/// A poisoned lock only means a panicking test thread held it; the data is still whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn accept_loop(listener: TcpListener, tls: Option<TlsAcceptor>, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    connections.spawn(serve(tcp, tls.clone(), Arc::clone(&shared)));
                }
                Err(_) => continue,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Answers the requests of one connection until the client closes it or an answer ends it.
async fn serve(tcp: TcpStream, tls: Option<TlsAcceptor>, shared: Arc<Shared>) {
    let Some(mut io) = loopback::server_io(tcp, tls).await else {
        return;
    };
    let mut buffer = Vec::new();
    while let Some(request) = read_request(&mut io, &mut buffer).await {
        let answer = lock(&shared.answers).pop_front().unwrap_or_else(|| {
            let message = format!(
                "gemini stand-in: no answer scripted for {} {}",
                request.method, request.path
            );
            Answer::api_error(500, "INTERNAL", &message)
        });
        lock(&shared.requests).push(request);
        if !write_answer(&mut io, answer, &shared).await {
            return;
        }
    }
}

/// Reads one request (head and `content-length` body); `None` once the client closed the
/// connection or sent something that is not HTTP/1.1. Bytes past the request stay in
/// `buffer` for the next.
async fn read_request(io: &mut Box<dyn ServerIo>, buffer: &mut Vec<u8>) -> Option<RecordedRequest> {
    let (head_len, mut request, body_len) = loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(buffer) {
            Ok(httparse::Status::Complete(head_len)) => {
                let request = recorded(&parsed)?;
                let body_len = request
                    .header("content-length")
                    .map_or(Some(0), |len| len.trim().parse::<usize>().ok())?;
                break (head_len, request, body_len);
            }
            Ok(httparse::Status::Partial) if buffer.len() < MAX_HEAD_BYTES => {
                read_more(io, buffer).await?;
            }
            _ => return None,
        }
    };
    while buffer.len() < head_len + body_len {
        read_more(io, buffer).await?;
    }
    let body = &buffer[head_len..head_len + body_len];
    request.body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
    };
    buffer.drain(..head_len + body_len);
    Some(request)
}

async fn read_more(io: &mut Box<dyn ServerIo>, buffer: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 8192];
    match io.read(&mut chunk).await {
        Ok(0) | Err(_) => None,
        Ok(read) => {
            buffer.extend_from_slice(&chunk[..read]);
            Some(())
        }
    }
}

fn recorded(parsed: &httparse::Request<'_, '_>) -> Option<RecordedRequest> {
    let target = parsed.path?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query.to_owned())),
        None => (target, None),
    };
    Some(RecordedRequest {
        method: parsed.method?.to_owned(),
        path: path.to_owned(),
        query,
        headers: parsed
            .headers
            .iter()
            .map(|header| {
                (
                    header.name.to_ascii_lowercase(),
                    String::from_utf8_lossy(header.value).into_owned(),
                )
            })
            .collect(),
        body: Value::Null,
    })
}

/// Writes `answer`; `false` if the connection is over (cut, hung up, or broken).
async fn write_answer(io: &mut Box<dyn ServerIo>, answer: Answer, shared: &Shared) -> bool {
    let reason = hyper::StatusCode::from_u16(answer.status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("Unknown");
    let head = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: {}\r\n",
        answer.status, answer.content_type
    );
    match answer.body {
        AnswerBody::Whole(body) => {
            let head = format!("{head}content-length: {}\r\n\r\n", body.len());
            write(io, head.as_bytes()).await && write(io, &body).await
        }
        AnswerBody::Hang => {
            // Wait for the client to give up and close.
            let mut sink = [0u8; 1024];
            while matches!(io.read(&mut sink).await, Ok(read) if read > 0) {}
            false
        }
        AnswerBody::Steps(steps) => {
            let head = format!("{head}transfer-encoding: chunked\r\n\r\n");
            if !write(io, head.as_bytes()).await {
                return false;
            }
            for step in steps {
                let written = match step {
                    Step::Write(bytes) if bytes.is_empty() => true,
                    Step::Write(bytes) => {
                        let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
                        chunk.extend_from_slice(&bytes);
                        chunk.extend_from_slice(b"\r\n");
                        write(io, &chunk).await
                    }
                    Step::Pause => shared
                        .resumed
                        .acquire()
                        .await
                        .map(|permit| permit.forget())
                        .is_ok(),
                    Step::Cut => false,
                };
                if !written {
                    return false;
                }
            }
            write(io, b"0\r\n\r\n").await
        }
    }
}

async fn write(io: &mut Box<dyn ServerIo>, bytes: &[u8]) -> bool {
    io.write_all(bytes).await.is_ok() && io.flush().await.is_ok()
}
