//! Where a recording proxy forwards its clients: the real API, or another tape server.
//!
//! The proxy presents its own credential, from the environment
//! ([`reel_protocol::ApiEndpoint::from_env`]): an API key as `?key=`, an ephemeral token as
//! `?access_token=`, a bearer token as `Authorization: Bearer`. What the client presented is
//! never forwarded. A loopback upstream (`localhost`, `127.0.0.1`, `::1`) may go without one.
//!
//! The upstream URL is a base (`wss://generativelanguage.googleapis.com`,
//! `ws://127.0.0.1:9000`): each connection then goes to the path its client asked for
//! (slashes normalized), so the API version and method are the client's. A URL with a path
//! is used as it is.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reel_protocol::{ApiEndpoint, Credential, EndpointError, Secret, percent_encode, redact_url};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Uri, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::error::{ConnectionError, UpstreamError};
use super::live_path::{GOOGLE_AI_LIVE_PATH, LivePath};

/// An open upstream connection.
pub(crate) type UpstreamWs = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long connecting to the upstream (TCP, TLS, WebSocket) may take.
pub const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The upstream of a recording proxy: the real API, or another tape server.
///
/// The proxy presents its own credential ([`Upstream::from_env`]: an API key as `?key=`, an
/// ephemeral token as `?access_token=`, a bearer token as `Authorization: Bearer`); what
/// the client presented is never forwarded. A URL without a path is a base: each connection
/// goes to the path its client asked for (slashes normalized), so the API version and
/// method are the client's. A URL with a path is used as it is.
///
/// ```
/// use reel_tape_server::Upstream;
///
/// let upstream = Upstream::new("ws://127.0.0.1:9000")?;
/// assert!(upstream.is_loopback());
/// # Ok::<(), reel_tape_server::UpstreamError>(())
/// ```
#[derive(Clone)]
pub struct Upstream {
    uri: Uri,
    credential: Credential,
    roots: Vec<CertificateDer<'static>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("url", &self.redacted_url())
            .field("credential", &self.credential)
            .field("extra_roots", &self.roots.len())
            .finish()
    }
}

impl Upstream {
    /// An upstream at `url` (`ws://` or `wss://`), presenting no credential.
    pub fn new(url: &str) -> Result<Self, UpstreamError> {
        let invalid = || UpstreamError::InvalidUrl {
            url: redact_url(url),
        };
        let uri: Uri = url.parse().map_err(|_| invalid())?;
        let scheme_ok = matches!(uri.scheme_str(), Some("ws" | "wss"));
        if !scheme_ok || uri.host().is_none_or(str::is_empty) {
            return Err(invalid());
        }
        Ok(Upstream {
            uri,
            credential: Credential::None,
            roots: Vec::new(),
        })
    }

    /// An upstream at `url` presenting the credential the environment names; a loopback
    /// upstream may do without (see [`Upstream::from_vars`]).
    pub fn from_env(url: &str) -> Result<Self, UpstreamError> {
        Upstream::from_vars(url, |name| std::env::var(name).ok())
    }

    /// [`Upstream::from_env`] with the variables looked up by `var`: the credential of
    /// [`ApiEndpoint::from_vars`]; when the variables name none, a loopback upstream gets
    /// no credential and any other is refused with what to set.
    pub fn from_vars(
        url: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, UpstreamError> {
        let upstream = Upstream::new(url)?;
        match ApiEndpoint::from_vars(var) {
            // No credential because the variables point the SDKs at a local server (perhaps
            // this one): an upstream elsewhere still needs one.
            Ok(endpoint)
                if endpoint.credential() == &Credential::None && !upstream.is_loopback() =>
            {
                Err(UpstreamError::MissingCredential {
                    url: upstream.redacted_url(),
                    message: EndpointError::MissingApiKey.to_string(),
                })
            }
            Ok(endpoint) => Ok(upstream.with_credential(endpoint.credential().clone())),
            Err(_) if upstream.is_loopback() => Ok(upstream),
            Err(error) => Err(UpstreamError::MissingCredential {
                url: upstream.redacted_url(),
                message: error.to_string(),
            }),
        }
    }

    /// The same upstream presenting `credential`.
    pub fn with_credential(mut self, credential: Credential) -> Self {
        self.credential = credential;
        self
    }

    /// The same upstream, also trusting `certificates` (another tape server's self-signed
    /// certificate, say) on top of the Mozilla roots.
    pub fn with_root_certificates(mut self, certificates: Vec<CertificateDer<'static>>) -> Self {
        self.roots.extend(certificates);
        self
    }

    /// The same upstream, also trusting every certificate in the PEM file at `path`.
    pub fn with_root_certificates_pem(self, path: impl AsRef<Path>) -> Result<Self, UpstreamError> {
        let path = path.as_ref();
        let fail = |message: String| UpstreamError::Roots {
            message: format!("{}: {message}", path.display()),
        };
        let certificates = CertificateDer::pem_file_iter(path)
            .map_err(|e| fail(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        if certificates.is_empty() {
            return Err(fail("no PEM certificate in the file".to_owned()));
        }
        Ok(self.with_root_certificates(certificates))
    }

    /// The credential presented.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// The URL with credentials redacted.
    pub fn redacted_url(&self) -> String {
        redact_url(&self.uri.to_string())
    }

    /// Whether the upstream is on this machine.
    pub fn is_loopback(&self) -> bool {
        let host = self.uri.host().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// The URL a client on `client_path` is forwarded to, credential included. Never log it.
    fn target_url(&self, client_path: Option<&LivePath>) -> Secret {
        let scheme = self.uri.scheme_str().unwrap_or("ws");
        let authority = self.uri.authority().map_or("", |a| a.as_str());
        let own_path = self.uri.path();
        let path = if own_path.is_empty() || own_path == "/" {
            client_path.map_or(GOOGLE_AI_LIVE_PATH, |p| p.normalized.as_str())
        } else {
            own_path
        };
        let mut url = format!("{scheme}://{authority}{path}");
        let mut query: Vec<String> = self.uri.query().map(str::to_owned).into_iter().collect();
        match &self.credential {
            Credential::ApiKey(key) => query.push(format!("key={}", percent_encode(key.expose()))),
            Credential::EphemeralToken(token) => {
                query.push(format!("access_token={}", percent_encode(token.expose())));
            }
            Credential::BearerToken(_) | Credential::None => {}
        }
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        Secret::new(url)
    }

    /// The secrets an error text must not show.
    fn secrets(&self) -> Vec<String> {
        let mut secrets = match &self.credential {
            Credential::ApiKey(s) | Credential::EphemeralToken(s) | Credential::BearerToken(s) => {
                vec![s.expose().to_owned(), percent_encode(s.expose())]
            }
            Credential::None => Vec::new(),
        };
        secrets.retain(|s| !s.trim().is_empty());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets
    }

    /// Opens a connection for a client that asked for `client_path`.
    pub(crate) async fn connect(
        &self,
        client_path: Option<&LivePath>,
        max_frame_bytes: usize,
    ) -> Result<UpstreamWs, ConnectionError> {
        let url = self.target_url(client_path);
        let redacted = redact_url(url.expose());
        let fail = |message: String| {
            let mut message = message.replace(url.expose(), &redacted);
            for secret in self.secrets() {
                message = message.replace(&secret, "REDACTED");
            }
            ConnectionError::Upstream {
                url: redacted.clone(),
                message,
            }
        };
        let mut request = url
            .expose()
            .into_client_request()
            .map_err(|e| fail(format!("invalid URL: {e}")))?;
        if let Credential::BearerToken(token) = &self.credential {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
                .map_err(|_| fail("the bearer token cannot go in a header".to_owned()))?;
            value.set_sensitive(true);
            request.headers_mut().insert(header::AUTHORIZATION, value);
        }
        let tls = self.tls_config().map_err(fail)?;
        let config = WebSocketConfig::default()
            // 16 KiB reads, not tungstenite's 128 KiB zero-filled per connection: plenty for a
            // 100 ms audio frame, and 500 clients stay small.
            .read_buffer_size(16 * 1024)
            .max_frame_size(Some(max_frame_bytes))
            .max_message_size(Some(max_frame_bytes));
        let handshake = tokio_tungstenite::connect_async_tls_with_config(
            request,
            Some(config),
            true,
            Some(tokio_tungstenite::Connector::Rustls(tls)),
        );
        match tokio::time::timeout(UPSTREAM_CONNECT_TIMEOUT, handshake).await {
            Err(_) => Err(fail(format!(
                "no connection within {} s",
                UPSTREAM_CONNECT_TIMEOUT.as_secs()
            ))),
            Ok(Err(error)) => Err(fail(handshake_message(error))),
            Ok(Ok((stream, _response))) => Ok(stream),
        }
    }

    /// Where REST calls go: the upstream's host and port, and whether over TLS (`wss://`
    /// means `https://` on the same host).
    pub(crate) fn rest_endpoint(&self) -> (String, u16, bool) {
        let tls = self.uri.scheme_str() == Some("wss");
        let host = self
            .uri
            .host()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = self.uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        (host, port, tls)
    }

    /// The TLS configuration of REST calls: the same trust as the WebSocket's.
    pub(crate) fn rest_tls_config(&self) -> Result<rustls::ClientConfig, String> {
        self.tls_config()
            .map(|config| rustls::ClientConfig::clone(&config))
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for (index, certificate) in self.roots.iter().enumerate() {
            roots
                .add(certificate.clone())
                .map_err(|e| format!("trusted certificate #{index} is not valid: {e}"))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup failed: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// What a failed upstream handshake says: the HTTP status and body excerpt of a refusal.
fn handshake_message(error: tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::Error;
    match error {
        Error::Http(response) => {
            let status = response.status();
            let body = response
                .body()
                .as_deref()
                .map(|b| {
                    String::from_utf8_lossy(b)
                        .trim()
                        .chars()
                        .take(200)
                        .collect::<String>()
                })
                .unwrap_or_default();
            let mut message = format!("HTTP {}", status.as_u16());
            if !body.is_empty() {
                message.push_str(": ");
                message.push_str(&body);
            }
            message
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_client_path_and_the_environment_key_make_the_url() {
        let upstream = Upstream::from_vars(
            "wss://generativelanguage.googleapis.com",
            vars(&[("GEMINI_API_KEY", "AIza/1")]),
        )
        .unwrap();
        let path = LivePath::parse(
            "//ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
        )
        .unwrap();
        assert_eq!(
            upstream.target_url(Some(&path)).expose(),
            "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=AIza%2F1"
        );
        assert!(!format!("{upstream:?}").contains("AIza"));
        let fixed = Upstream::new("ws://127.0.0.1:9/ws/x?alt=1").unwrap();
        assert_eq!(
            fixed.target_url(Some(&path)).expose(),
            "ws://127.0.0.1:9/ws/x?alt=1"
        );
    }

    #[test]
    fn only_a_loopback_upstream_goes_without_a_credential() {
        let local = Upstream::from_vars("ws://localhost:9000", vars(&[])).unwrap();
        assert_eq!(local.credential(), &Credential::None);
        assert!(
            Upstream::from_vars("ws://[::1]:9000", vars(&[]))
                .unwrap()
                .is_loopback()
        );
        let error = Upstream::from_vars("wss://example.com", vars(&[])).unwrap_err();
        assert!(
            matches!(error, UpstreamError::MissingCredential { .. }),
            "{error:?}"
        );
        assert!(error.to_string().starts_with("the upstream wss://example.com/ needs a credential: missing required environment variable: GEMINI_API_KEY"), "{error}");
        // The SDKs pointed at a local server need no key; an upstream elsewhere still does.
        let error = Upstream::from_vars(
            "wss://example.com",
            vars(&[("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9000")]),
        )
        .unwrap_err();
        assert!(
            matches!(error, UpstreamError::MissingCredential { .. }),
            "{error:?}"
        );
        assert_eq!(
            Upstream::new("http://example.com").unwrap_err(),
            UpstreamError::InvalidUrl {
                url: "http://example.com".into()
            }
        );
    }
}
