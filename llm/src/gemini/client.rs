//! The HTTP side: a pooled HTTP/1.1 client over rustls on the `ring` provider, one POST per
//! call, and bodies read with a time limit on every wait.

use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::{Request, Uri};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::LlmError;

/// How long an unused pooled connection is kept.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The pooled client every call of one model goes through.
pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client speaking HTTP/1.1 over plain TCP (`http://`) or TLS configured by `tls`
/// (`https://`), giving up on a TCP connect after `connect_timeout`.
pub(crate) fn http_client(tls: rustls::ClientConfig, connect_timeout: Duration) -> HttpClient {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    tcp.set_connect_timeout(Some(connect_timeout));
    let connector = HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(tcp);
    Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build(connector)
}

/// An answer whose status and headers have arrived; its body is read with [`Body`].
pub(crate) struct Answer {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The body, still to be read.
    pub(crate) body: Body,
}

/// Sends `body` to `url` with `headers` and waits at most `read_timeout` for the answer's
/// headers. Anything that keeps the answer from arriving is [`LlmError::Transport`].
pub(crate) async fn post(
    client: &HttpClient,
    url: &str,
    headers: &HeaderMap,
    body: Vec<u8>,
    read_timeout: Duration,
) -> Result<Answer, LlmError> {
    let transport = |reason: String| LlmError::Transport {
        url: url.to_owned(),
        reason,
    };
    let uri = Uri::try_from(url).map_err(|error| transport(format!("not a valid URL: {error}")))?;
    let mut request = Request::post(uri)
        .body(Full::new(Bytes::from(body)))
        .map_err(|error| transport(error_chain(&error)))?;
    *request.headers_mut() = headers.clone();
    let response = tokio::time::timeout(read_timeout, client.request(request))
        .await
        .map_err(|_| transport(format!("no answer within {read_timeout:?}")))?
        .map_err(|error| transport(error_chain(&error)))?;
    Ok(Answer {
        status: response.status().as_u16(),
        body: Body {
            incoming: response.into_body(),
            url: url.to_owned(),
            read_timeout,
        },
    })
}

/// An answer's body, read piece by piece as it arrives.
pub(crate) struct Body {
    incoming: Incoming,
    url: String,
    read_timeout: Duration,
}

impl Body {
    /// The URL the answer came from.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The next bytes of the body, or `None` at its end. Waiting longer than the read
    /// timeout, or a connection that breaks, is [`LlmError::Transport`].
    pub(crate) async fn next(&mut self) -> Result<Option<Bytes>, LlmError> {
        loop {
            let frame = tokio::time::timeout(self.read_timeout, self.incoming.frame())
                .await
                .map_err(|_| {
                    self.transport(format!("nothing arrived for {:?}", self.read_timeout))
                })?;
            match frame {
                None => return Ok(None),
                Some(Err(error)) => return Err(self.transport(error_chain(&error))),
                Some(Ok(frame)) => {
                    // Trailers carry no answer; only data frames count.
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// The whole body. One over `limit` bytes is [`LlmError::Decode`] saying `context`.
    pub(crate) async fn read_to_end(
        &mut self,
        limit: usize,
        context: &str,
    ) -> Result<Vec<u8>, LlmError> {
        let mut all = Vec::new();
        while let Some(bytes) = self.next().await? {
            if all.len() + bytes.len() > limit {
                return Err(LlmError::Decode {
                    context: context.to_owned(),
                    reason: format!("it is larger than {limit} bytes"),
                });
            }
            all.extend_from_slice(&bytes);
        }
        Ok(all)
    }

    /// As much of the body as arrives, up to `limit` bytes, for an error answer: a body
    /// that breaks off still says what it said so far.
    pub(crate) async fn read_excerpt(&mut self, limit: usize) -> Vec<u8> {
        let mut excerpt = Vec::new();
        while excerpt.len() < limit {
            match self.next().await {
                Ok(Some(bytes)) => {
                    let room = limit - excerpt.len();
                    excerpt.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
                Ok(None) | Err(_) => break,
            }
        }
        excerpt
    }

    fn transport(&self, reason: String) -> LlmError {
        LlmError::Transport {
            url: self.url.clone(),
            reason,
        }
    }
}

/// `error` and its sources, joined with `: ` (a message a source repeats is said once).
fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut messages: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let message = error.to_string();
        if messages.last() != Some(&message) {
            messages.push(message);
        }
        next = error.source();
    }
    messages.join(": ")
}
