//! A first look at the HTTP request, before the WebSocket handshake: a plain HTTP request
//! (no `Upgrade: websocket`, e.g. `curl` or a browser) gets a clear answer of its own,
//! HTTP 404 on a path that is not a Live path and 426 on a Live path, and a request that is
//! not HTTP or an upgrade the handshake would refuse (no `Sec-WebSocket-Key`, a version
//! other than 13) gets HTTP 400 with the reason, where tungstenite would only drop the
//! connection. The `Host` and `Origin` headers are kept for the access check
//! ([`LocalAccess`](super::LocalAccess)). The bytes read are handed back to the handshake
//! unchanged ([`Prefixed`]).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use super::live_path::LivePath;

/// The largest request head read before giving up on it (tungstenite's own limit is
/// larger; a Live upgrade request is well under 2 KiB).
pub(crate) const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What the first look found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FirstLook {
    /// A WebSocket upgrade request the handshake will accept as one: hand it on.
    Upgrade(Guard),
    /// A plain HTTP request: its method, target (path and query), the headers the REST
    /// side needs, and where its body starts in the bytes read.
    Plain(PlainRequest),
    /// Not a request the server can answer but with HTTP 400: why.
    Bad {
        /// The reason, for the answer's body and the report.
        reason: String,
    },
}

/// The headers the access check reads, and the request's target (for the report).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Guard {
    /// The path and query.
    pub target: String,
    /// The `Host` header's value.
    pub host: Option<Vec<u8>>,
    /// The `Origin` header's value.
    pub origin: Option<Vec<u8>>,
}

/// What the first look keeps of a plain HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PlainRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path and query.
    pub target: String,
    /// The body's length, from `Content-Length`.
    pub content_length: Option<usize>,
    /// Whether the body is sent in chunks (`Transfer-Encoding: chunked`).
    pub chunked: bool,
    /// The `x-reel-test` header's value.
    pub test_header: Option<Vec<u8>>,
    /// How many of the bytes read are the head; the body's first bytes follow.
    pub head_len: usize,
    /// The `Host` and `Origin` headers.
    pub guard: Guard,
}

/// Reads from `stream` until the end of the request head (or [`MAX_HEAD_BYTES`], or the end
/// of the stream); returns what was read and what it is.
pub(crate) async fn first_look<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> io::Result<(Bytes, FirstLook)> {
    let mut read = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !read.windows(4).any(|w| w == b"\r\n\r\n") && read.len() < MAX_HEAD_BYTES {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        read.extend_from_slice(&chunk[..n]);
    }
    let look = inspect(&read);
    Ok((Bytes::from(read), look))
}

/// How many header lines a request head may have for the first look (a Live upgrade has
/// about a dozen); one with more is left to the handshake.
const MAX_HEADERS: usize = 64;

/// Classifies a request head (parsed with `httparse`).
fn inspect(head: &[u8]) -> FirstLook {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let bad = |reason: String| FirstLook::Bad { reason };
    let head_len = match request.parse(head) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if head.len() >= MAX_HEAD_BYTES => {
            return bad(format!(
                "reel: the request head is over {MAX_HEAD_BYTES} bytes"
            ));
        }
        Ok(httparse::Status::Partial) => {
            return bad("reel: the request head ended before its blank line".to_owned());
        }
        Err(httparse::Error::TooManyHeaders) => {
            return bad(format!("reel: a request of over {MAX_HEADERS} headers"));
        }
        Err(error) => return bad(format!("reel: not an HTTP request ({error})")),
    };
    let Some(target) = request.path else {
        return bad("reel: the request line has no target".to_owned());
    };
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case(name))
            .map(|header| header.value)
    };
    let guard = Guard {
        target: target.to_owned(),
        host: header("host").map(<[u8]>::to_vec),
        origin: header("origin").map(<[u8]>::to_vec),
    };
    let upgrade = request.headers.iter().any(|header| {
        header.name.eq_ignore_ascii_case("upgrade")
            && std::str::from_utf8(header.value).is_ok_and(|value| {
                value
                    .split(',')
                    .any(|v| v.trim().eq_ignore_ascii_case("websocket"))
            })
    });
    if upgrade {
        return match (
            request.method,
            header("sec-websocket-key"),
            header("sec-websocket-version"),
        ) {
            (Some(method), _, _) if method != "GET" => bad(format!(
                "reel: a WebSocket upgrade is a GET request, not {method}"
            )),
            (_, None, _) => {
                bad("reel: a WebSocket upgrade needs a Sec-WebSocket-Key header".to_owned())
            }
            (_, _, Some(b"13")) => FirstLook::Upgrade(guard),
            (_, _, Some(version)) => bad(format!(
                "reel: WebSocket version {:?} is not served: Sec-WebSocket-Version must be 13",
                String::from_utf8_lossy(&version[..version.len().min(20)])
            )),
            (_, _, None) => {
                bad("reel: a WebSocket upgrade needs Sec-WebSocket-Version: 13".to_owned())
            }
        };
    }
    let content_length = header("content-length")
        .and_then(|value| std::str::from_utf8(value).ok())
        .and_then(|value| value.trim().parse().ok());
    let chunked = header("transfer-encoding")
        .and_then(|value| std::str::from_utf8(value).ok())
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    FirstLook::Plain(PlainRequest {
        method: request.method.unwrap_or_default().to_owned(),
        target: target.to_owned(),
        content_length,
        chunked,
        test_header: header(super::test_name::TEST_HEADER).map(<[u8]>::to_vec),
        head_len,
        guard,
    })
}

/// Answers `status` with `message` as a plain-text body, and closes: a request refused
/// before any session (HTTP 400 for what is not a request the server reads, 403 for a
/// foreign host or origin).
pub(crate) async fn answer_refusal<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: u16,
    message: &str,
) -> io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Error",
    };
    let version = if status == 400 {
        // RFC 6455 4.2.2: the versions the server speaks, for a client to retry with.
        "sec-websocket-version: 13\r\n"
    } else {
        ""
    };
    let body = format!("{message}\n");
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n{version}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// The path a plain `GET` asks whether the server is up on.
pub(crate) const HEALTH_PATH: &str = "/healthz";

/// Answers a plain HTTP request and closes: 200 with `health_body` on [`HEALTH_PATH`], 426 on
/// a Live path, 404 elsewhere.
pub(crate) async fn answer_plain<S: AsyncWrite + Unpin>(
    stream: &mut S,
    path: &str,
    not_found_body: &str,
    health_body: &str,
) -> io::Result<u16> {
    let is_health = path.trim_start_matches('/') == HEALTH_PATH.trim_start_matches('/');
    let content_type = if is_health {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let (status, reason, body) = if is_health {
        (200, "OK", health_body.to_owned())
    } else if LivePath::parse(path).is_some() {
        (
            426,
            "Upgrade Required",
            format!(
                "reel serve: {path} is a Live WebSocket endpoint; connect with a WebSocket client\n"
            ),
        )
    } else {
        (404, "Not Found", not_found_body.to_owned())
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(status)
}

/// A stream that yields `prefix` before reading from `inner`; writes go to `inner`.
pub(crate) struct Prefixed<S> {
    prefix: Bytes,
    inner: S,
}

impl<S> Prefixed<S> {
    pub(crate) fn new(prefix: Bytes, inner: S) -> Self {
        Prefixed { prefix, inner }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.prefix.is_empty() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_requests_are_told_from_upgrades() {
        assert_eq!(
            inspect(b"GET /x?key=1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            FirstLook::Plain(PlainRequest {
                method: "GET".into(),
                target: "/x?key=1".into(),
                head_len: 34,
                guard: Guard {
                    target: "/x?key=1".into(),
                    host: Some(b"h".to_vec()),
                    origin: None,
                },
                ..PlainRequest::default()
            })
        );
        assert_eq!(
            inspect(b"POST /v1beta/models/m:generateContent HTTP/1.1\r\nContent-Length: 2\r\nx-reel-test: t1\r\n\r\n{}"),
            FirstLook::Plain(PlainRequest {
                method: "POST".into(),
                target: "/v1beta/models/m:generateContent".into(),
                content_length: Some(2),
                chunked: false,
                test_header: Some(b"t1".to_vec()),
                head_len: 86,
                guard: Guard {
                    target: "/v1beta/models/m:generateContent".into(),
                    host: None,
                    origin: None,
                },
            })
        );
        assert_eq!(
            inspect(
                b"GET /x HTTP/1.1\r\nHost: h\r\nOrigin: https://o\r\nConnection: Upgrade\r\nUPGRADE: WebSocket\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ),
            FirstLook::Upgrade(Guard {
                target: "/x".into(),
                host: Some(b"h".to_vec()),
                origin: Some(b"https://o".to_vec()),
            })
        );
        let bad = |reason: &str| FirstLook::Bad {
            reason: reason.to_owned(),
        };
        assert_eq!(
            inspect(b"GET /x HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"),
            bad("reel: a WebSocket upgrade needs a Sec-WebSocket-Key header")
        );
        assert_eq!(
            inspect(b"GET /x HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 8\r\n\r\n"),
            bad("reel: WebSocket version \"8\" is not served: Sec-WebSocket-Version must be 13")
        );
        assert_eq!(
            inspect(b"\x16\x03\x01garbage\r\n\r\n"),
            bad("reel: not an HTTP request (invalid token)")
        );
        assert_eq!(
            inspect(b"GET /x HTTP/1.1\r\nHost: h\r\n"),
            bad("reel: the request head ended before its blank line")
        );
    }

    #[tokio::test]
    async fn the_prefix_is_read_first_then_the_stream() {
        let mut stream = Prefixed::new(Bytes::from_static(b"abc"), &b"def"[..]);
        let mut all = Vec::new();
        stream.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"abcdef");
    }
}
