//! Forwarding one REST call to the upstream, over HTTP/1.1 with `Connection: close`: the
//! answer's bytes go to the client as they arrive (a stream stays a stream), and are read on
//! the way (chunked transfer decoded with `httparse`, server-sent events split) into the
//! chunks a cassette records, each stamped with when it arrived.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reel_protocol::Credential;
use rustls::pki_types::ServerName;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::error::ConnectionError;
use super::rest_path::RestPath;
use super::upstream::{UPSTREAM_CONNECT_TIMEOUT, Upstream};

/// The largest answer head read before giving up on it.
const MAX_ANSWER_HEAD: usize = 64 * 1024;

/// A forwarded call that failed, and whether the client already got part of the answer
/// (then it cannot be told with an answer of its own: its connection is closed).
#[derive(Debug)]
pub(crate) struct ForwardFailed {
    /// What went wrong, for the report.
    pub message: String,
    pub answered: bool,
}

/// What the upstream answered.
#[derive(Debug)]
pub(crate) struct Forwarded {
    /// The HTTP status.
    pub status: u16,
    /// The answer's JSON pieces, each with the time since the call started: one for a
    /// `generateContent`, one per event for a stream.
    pub chunks: Vec<(Duration, Value)>,
}

/// Sends the call to `upstream` and copies the answer to `client` as it comes.
pub(crate) async fn forward<C: AsyncWrite + Unpin + ?Sized>(
    upstream: &Upstream,
    path: &RestPath,
    body: &Bytes,
    client: &mut C,
) -> Result<Forwarded, ForwardFailed> {
    let failed = |message: String| ForwardFailed {
        message: ConnectionError::Upstream {
            url: upstream.redacted_url(),
            message,
        }
        .to_string(),
        answered: false,
    };
    let broke = |message: String| ForwardFailed {
        message: format!(
            "the upstream {} broke off its answer: {message}",
            upstream.redacted_url()
        ),
        answered: true,
    };
    let (host, port, tls) = upstream.rest_endpoint();
    let started = Instant::now();
    let tcp = tokio::time::timeout(
        UPSTREAM_CONNECT_TIMEOUT,
        TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map_err(|_| failed("connecting timed out".to_owned()))?
    .map_err(|error| failed(error.to_string()))?;
    let _ = tcp.set_nodelay(true);
    let mut stream: Box<dyn Duplex> = if tls {
        let config = upstream.rest_tls_config().map_err(failed)?;
        let name = ServerName::try_from(host.clone()).map_err(|error| failed(error.to_string()))?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        Box::new(
            connector
                .connect(name, tcp)
                .await
                .map_err(|error| failed(format!("TLS: {error}")))?,
        )
    } else {
        Box::new(tcp)
    };
    let query = if path.sse { "?alt=sse" } else { "" };
    let mut head = format!(
        "POST {}{query} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        path.normalized,
        body.len()
    );
    match upstream.credential() {
        Credential::ApiKey(key) => head.push_str(&format!("x-goog-api-key: {}\r\n", key.expose())),
        Credential::BearerToken(token) | Credential::EphemeralToken(token) => {
            head.push_str(&format!("authorization: Bearer {}\r\n", token.expose()));
        }
        Credential::None => {}
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|error| failed(error.to_string()))?;
    stream
        .write_all(body)
        .await
        .map_err(|error| failed(error.to_string()))?;
    stream
        .flush()
        .await
        .map_err(|error| failed(error.to_string()))?;

    let mut reader = AnswerReader::default();
    let mut buffer = vec![0u8; 16 * 1024];
    let mut answered = false;
    loop {
        let n = stream.read(&mut buffer).await.map_err(|error| {
            let message = format!("the answer broke off: {error}");
            if answered {
                broke(message)
            } else {
                failed(message)
            }
        })?;
        if n == 0 {
            break;
        }
        answered = true;
        // The client may have gone; the call is still read to its end and recorded.
        let _ = client.write_all(&buffer[..n]).await;
        let _ = client.flush().await;
        reader
            .feed(&buffer[..n], started.elapsed())
            .map_err(|problem| broke(format!("the answer cannot be read: {problem}")))?;
    }
    reader.finish(started.elapsed()).map_err(|problem| {
        if answered {
            broke(problem)
        } else {
            failed(problem)
        }
    })
}

/// A byte stream both ways.
trait Duplex: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Duplex for T {}

/// Reads an HTTP/1.1 answer as it arrives: head, body (chunked or not), and the JSON pieces.
#[derive(Debug, Default)]
pub(crate) struct AnswerReader {
    raw: Vec<u8>,
    head: Option<Head>,
    /// Body bytes not yet de-chunked (chunked answers).
    pending: Vec<u8>,
    /// The body, de-chunked.
    body: Vec<u8>,
    /// How much of `body` has been split into events.
    scanned: usize,
    chunks: Vec<(Duration, Value)>,
    /// Whether the last chunk of a chunked body was seen.
    done: bool,
}

#[derive(Debug, Clone, Copy)]
struct Head {
    status: u16,
    chunked: bool,
    sse: bool,
}

impl AnswerReader {
    /// Takes the next bytes of the answer, read `at` after the call started.
    pub(crate) fn feed(&mut self, bytes: &[u8], at: Duration) -> Result<(), String> {
        match self.head {
            None => {
                self.raw.extend_from_slice(bytes);
                let mut headers = [httparse::EMPTY_HEADER; 64];
                let mut answer = httparse::Response::new(&mut headers);
                match answer.parse(&self.raw) {
                    Ok(httparse::Status::Complete(len)) => {
                        let header = |name: &str| {
                            answer
                                .headers
                                .iter()
                                .find(|h| h.name.eq_ignore_ascii_case(name))
                                .and_then(|h| std::str::from_utf8(h.value).ok())
                                .map(str::to_ascii_lowercase)
                        };
                        self.head = Some(Head {
                            status: answer.code.unwrap_or(0),
                            chunked: header("transfer-encoding")
                                .is_some_and(|v| v.contains("chunked")),
                            sse: header("content-type")
                                .is_some_and(|v| v.contains("text/event-stream")),
                        });
                        let rest = self.raw.split_off(len);
                        self.body_bytes(&rest, at)
                    }
                    Ok(httparse::Status::Partial) if self.raw.len() < MAX_ANSWER_HEAD => Ok(()),
                    Ok(httparse::Status::Partial) => Err("an answer head over 64 KiB".to_owned()),
                    Err(error) => Err(format!("not an HTTP answer ({error})")),
                }
            }
            Some(_) => self.body_bytes(bytes, at),
        }
    }

    fn body_bytes(&mut self, bytes: &[u8], at: Duration) -> Result<(), String> {
        let Some(head) = self.head else {
            return Ok(());
        };
        if head.chunked {
            self.pending.extend_from_slice(bytes);
            self.dechunk()?;
        } else {
            self.body.extend_from_slice(bytes);
        }
        if head.sse {
            self.events(at)?;
        }
        Ok(())
    }

    /// Moves every complete chunk of `pending` into `body`.
    fn dechunk(&mut self) -> Result<(), String> {
        while !self.done {
            let (start, size) = match httparse::parse_chunk_size(&self.pending) {
                Ok(httparse::Status::Complete((start, size))) => (start, size),
                Ok(httparse::Status::Partial) => return Ok(()),
                Err(_) => return Err("a bad chunk size".to_owned()),
            };
            let size = usize::try_from(size).map_err(|_| "a chunk too large".to_owned())?;
            if size == 0 {
                self.done = true;
                self.pending.clear();
                return Ok(());
            }
            // The chunk's data, then its CRLF.
            if self.pending.len() < start + size + 2 {
                return Ok(());
            }
            self.body
                .extend_from_slice(&self.pending[start..start + size]);
            self.pending.drain(..start + size + 2);
        }
        Ok(())
    }

    /// Splits the complete server-sent events of `body` into JSON pieces.
    fn events(&mut self, at: Duration) -> Result<(), String> {
        loop {
            let rest = &self.body[self.scanned..];
            let Some((end, separator)) = find_event_end(rest) else {
                return Ok(());
            };
            let event = String::from_utf8_lossy(&rest[..end]).into_owned();
            self.scanned += end + separator;
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if data.is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(&data.join("\n"))
                .map_err(|error| format!("an event that is not JSON ({error})"))?;
            self.chunks.push((at, value));
        }
    }

    /// The answer, once the connection closed.
    pub(crate) fn finish(mut self, at: Duration) -> Result<Forwarded, String> {
        let Some(head) = self.head else {
            return Err("the upstream closed before answering".to_owned());
        };
        if head.chunked && !self.done {
            return Err("the upstream closed before the answer's last chunk".to_owned());
        }
        if head.sse {
            // A last event without its blank line.
            self.body.extend_from_slice(b"\n\n");
            self.events(at)?;
        } else if head.status == 200 {
            let value: Value = serde_json::from_slice(&self.body)
                .map_err(|error| format!("the answer's body is not JSON ({error})"))?;
            match value {
                Value::Array(items) => self.chunks.extend(items.into_iter().map(|item| (at, item))),
                other => self.chunks.push((at, other)),
            }
        }
        Ok(Forwarded {
            status: head.status,
            chunks: self.chunks,
        })
    }
}

/// Where the first event in `bytes` ends, and the length of the blank line after it.
fn find_event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|at| (at, 2));
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(parts: &[&[u8]]) -> Forwarded {
        let mut reader = AnswerReader::default();
        for (n, part) in parts.iter().enumerate() {
            reader.feed(part, Duration::from_millis(n as u64)).unwrap();
        }
        reader.finish(Duration::from_millis(99)).unwrap()
    }

    #[test]
    fn a_chunked_event_stream_is_read_event_by_event_as_it_arrives() {
        let answer = read(&[
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"11\r\ndata: {\"a\":1}\r\n\r\n\r\n",
            b"7\r\ndata: {\r\n",
            b"8\r\n\"b\":2}\n\n\r\n0\r\n\r\n",
        ]);
        assert_eq!(answer.status, 200);
        assert_eq!(
            answer.chunks,
            [
                (Duration::from_millis(1), json!({"a": 1})),
                (Duration::from_millis(3), json!({"b": 2}))
            ]
        );
    }

    #[test]
    fn a_json_answer_is_one_chunk_and_an_error_is_no_chunk() {
        let answer = read(&[b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"x\":1}"]);
        assert_eq!(
            answer.chunks,
            [(Duration::from_millis(99), json!({"x": 1}))]
        );
        let answer = read(&[b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}"]);
        let mut cut = AnswerReader::default();
        cut.feed(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n11\r\ndata: {\"a\":1}\r\n\r\n\r\n",
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!(
            cut.finish(Duration::ZERO).unwrap_err(),
            "the upstream closed before the answer's last chunk"
        );
        assert_eq!((answer.status, answer.chunks.len()), (429, 0));
        let mut reader = AnswerReader::default();
        assert!(reader.feed(b"SSH-2.0\r\n\r\n", Duration::ZERO).is_err());
    }
}
