//! Settings for a [`GeminiLlm`]: platform, credential, base URL, trusted roots, timeouts.

use std::sync::Arc;
use std::time::Duration;

use hyper::Uri;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use reel_protocol::{Platform, Secret};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::client::http_client;
use super::{GeminiLlm, GeminiSetupError};

/// The Google AI host, the default base URL.
pub const GOOGLE_AI_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// How long a TCP connect may take by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a call may wait by default for the answer's headers, and a stream for its next
/// bytes. Long, since a non-streamed answer arrives only once it is fully generated.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The most bytes a whole answer, or one event of a stream, may hold by default.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 << 20;

const API_KEY_HEADER: HeaderName = HeaderName::from_static("x-goog-api-key");

/// How a call proves who it is.
#[derive(Debug, Clone)]
enum Auth {
    /// Nothing (a proxy that adds the credential itself).
    None,
    /// A Google AI key, in the `x-goog-api-key` header.
    ApiKey(Secret),
    /// An OAuth2 access token, in `Authorization: Bearer` (Vertex AI).
    Bearer(Secret),
}

/// Builds a [`GeminiLlm`]. Start with [`GeminiLlm::builder`].
///
/// ```
/// use std::time::Duration;
/// use reel_llm::gemini::GeminiLlm;
///
/// let llm = GeminiLlm::builder("gemini-2.5-flash")
///     .api_key("my-key")
///     .base_url("https://gemini-proxy.internal.example")
///     .read_timeout(Duration::from_secs(60))
///     .build()?;
/// assert_eq!(llm.base_url(), "https://gemini-proxy.internal.example");
/// # Ok::<_, reel_llm::gemini::GeminiSetupError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GeminiLlmBuilder {
    model: String,
    platform: Platform,
    auth: Auth,
    base_url: Option<String>,
    roots: Vec<CertificateDer<'static>>,
    roots_pem: Vec<Vec<u8>>,
    connect_timeout: Duration,
    read_timeout: Duration,
    max_answer_bytes: usize,
}

impl GeminiLlmBuilder {
    pub(super) fn new(model: String) -> Self {
        GeminiLlmBuilder {
            model,
            platform: Platform::GoogleAi,
            auth: Auth::None,
            base_url: None,
            roots: Vec::new(),
            roots_pem: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }

    /// Google AI with `key`, sent in the `x-goog-api-key` header (never in the URL).
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.platform = Platform::GoogleAi;
        self.auth = Auth::ApiKey(key.into());
        self
    }

    /// Vertex AI in `project` and `location` with an OAuth2 access `token`, sent as
    /// `Authorization: Bearer`. The default host is `{location}-aiplatform.googleapis.com`,
    /// or `aiplatform.googleapis.com` for location `global`.
    pub fn vertex(
        mut self,
        project: impl Into<String>,
        location: impl Into<String>,
        token: impl Into<Secret>,
    ) -> Self {
        self.platform = Platform::Vertex {
            project: project.into(),
            location: location.into(),
        };
        self.auth = Auth::Bearer(token.into());
        self
    }

    /// Sends no credential (for a proxy that adds one).
    pub fn without_credential(mut self) -> Self {
        self.auth = Auth::None;
        self
    }

    /// Calls `url` (scheme, host, optional port and path prefix) instead of the platform's
    /// host: a proxy, or a local stand-in. A trailing `/` is ignored.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Also trusts `certificate` (DER) as a root, on top of the Mozilla roots
    /// (`webpki-roots`); e.g. a local server's self-signed certificate.
    pub fn root_certificate(mut self, certificate: CertificateDer<'static>) -> Self {
        self.roots.push(certificate);
        self
    }

    /// Also trusts every certificate in `pem` (`-----BEGIN CERTIFICATE-----` blocks) as a
    /// root. Checked by [`GeminiLlmBuilder::build`].
    pub fn root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.roots_pem.push(pem.as_ref().to_vec());
        self
    }

    /// How long a TCP connect may take ([`DEFAULT_CONNECT_TIMEOUT`] unless set).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a call may wait for the answer's headers, and then for each next piece of
    /// its body ([`DEFAULT_READ_TIMEOUT`] unless set). Running out is
    /// [`crate::LlmError::Transport`].
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// The most bytes a whole answer, or one event of a stream, may hold
    /// ([`DEFAULT_MAX_ANSWER_BYTES`] unless set). A larger one is
    /// [`crate::LlmError::Decode`].
    pub fn max_answer_bytes(mut self, limit: usize) -> Self {
        self.max_answer_bytes = limit;
        self
    }

    /// The base URL calls will use: the one set, or the platform's host.
    pub(super) fn resolved_base_url(&self) -> String {
        match (&self.base_url, &self.platform) {
            (Some(url), _) => url.trim_end_matches('/').to_owned(),
            (None, Platform::GoogleAi) => GOOGLE_AI_BASE_URL.to_owned(),
            (None, Platform::Vertex { location, .. }) if location == "global" => {
                "https://aiplatform.googleapis.com".to_owned()
            }
            (None, Platform::Vertex { location, .. }) => {
                format!("https://{location}-aiplatform.googleapis.com")
            }
        }
    }

    /// The model, or why the settings are unusable.
    pub fn build(self) -> Result<GeminiLlm, GeminiSetupError> {
        let base_url = self.resolved_base_url();
        check_base_url(&base_url)?;
        let headers = headers(&self.auth)?;
        let tls = tls_config(self.roots, &self.roots_pem)?;
        let secret = match self.auth {
            Auth::None => None,
            Auth::ApiKey(secret) | Auth::Bearer(secret) => Some(secret),
        };
        Ok(GeminiLlm {
            model: self.model,
            platform: self.platform,
            base_url,
            headers,
            secret,
            client: http_client(tls, self.connect_timeout),
            read_timeout: self.read_timeout,
            max_answer_bytes: self.max_answer_bytes,
        })
    }
}

fn check_base_url(url: &str) -> Result<(), GeminiSetupError> {
    let unusable = |reason: &str| GeminiSetupError::BaseUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let uri = Uri::try_from(url).map_err(|error| unusable(&error.to_string()))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(unusable("it must start with http:// or https://")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(unusable("it has no host"));
    }
    if uri.query().is_some() {
        return Err(unusable("it must not have a query"));
    }
    Ok(())
}

/// The headers every call sends: JSON content, who is calling, and the credential (marked
/// sensitive, so HTTP layers never print it).
fn headers(auth: &Auth) -> Result<HeaderMap, GeminiSetupError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("reel/", env!("CARGO_PKG_VERSION"))),
    );
    let credential = match auth {
        Auth::None => None,
        Auth::ApiKey(key) => Some((API_KEY_HEADER, key.expose().trim().to_owned())),
        Auth::Bearer(token) => Some((AUTHORIZATION, format!("Bearer {}", token.expose().trim()))),
    };
    if let Some((name, value)) = credential {
        let mut value = HeaderValue::try_from(value).map_err(|_| GeminiSetupError::Credential)?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

/// A TLS client configuration on the `ring` provider (never the process-wide default)
/// trusting the Mozilla roots and `extra` and every certificate in `pems`.
fn tls_config(
    mut extra: Vec<CertificateDer<'static>>,
    pems: &[Vec<u8>],
) -> Result<rustls::ClientConfig, GeminiSetupError> {
    for (index, pem) in pems.iter().enumerate() {
        let certificates = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| GeminiSetupError::Pem {
                index,
                message: error.to_string(),
            })?;
        if certificates.is_empty() {
            return Err(GeminiSetupError::NoCertificates { index });
        }
        extra.extend(certificates);
    }
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for (index, certificate) in extra.into_iter().enumerate() {
        roots
            .add(certificate)
            .map_err(|error| GeminiSetupError::InvalidCertificate {
                index,
                message: error.to_string(),
            })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| GeminiSetupError::Tls {
            message: error.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_hosts_follow_the_platform() {
        let url = |builder: GeminiLlmBuilder| builder.build().unwrap().base_url().to_owned();
        let builder = || GeminiLlmBuilder::new("m".into());
        assert_eq!(
            url(builder().api_key("k")),
            "https://generativelanguage.googleapis.com"
        );
        assert_eq!(
            url(builder().vertex("p", "europe-west4", "t")),
            "https://europe-west4-aiplatform.googleapis.com"
        );
        assert_eq!(
            url(builder().vertex("p", "global", "t")),
            "https://aiplatform.googleapis.com"
        );
        assert_eq!(
            url(builder().base_url("http://127.0.0.1:9/prefix/")),
            "http://127.0.0.1:9/prefix"
        );
    }

    #[test]
    fn unusable_settings_are_refused_with_the_reason() {
        let error = |builder: GeminiLlmBuilder| builder.build().unwrap_err().to_string();
        let builder = || GeminiLlmBuilder::new("m".into());
        assert_eq!(
            error(builder().base_url("ftp://h")),
            r#"the base URL "ftp://h" is not usable: it must start with http:// or https://"#
        );
        assert_eq!(
            error(builder().base_url("https://h/?key=1")),
            r#"the base URL "https://h/?key=1" is not usable: it must not have a query"#
        );
        assert_eq!(
            error(builder().api_key("bad\nkey")),
            "the credential cannot be sent in an HTTP header: it holds a control character"
        );
        assert_eq!(
            error(builder().root_certificates_pem("no pem here")),
            "PEM text #0 holds no certificate (expected -----BEGIN CERTIFICATE-----)"
        );
        assert_eq!(
            error(builder().root_certificate(CertificateDer::from(vec![1u8, 2, 3]))),
            "trusted certificate #0 is not valid: invalid peer certificate: BadEncoding"
        );
    }

    #[test]
    fn the_credential_header_is_sensitive_and_trimmed() {
        let sent = headers(&Auth::ApiKey(Secret::new("abc\n"))).unwrap();
        let key = &sent["x-goog-api-key"];
        assert_eq!(key, "abc");
        assert!(key.is_sensitive());
        let sent = headers(&Auth::Bearer(Secret::new("tok"))).unwrap();
        assert_eq!(sent["authorization"], "Bearer tok");
        assert!(sent["authorization"].is_sensitive());
    }
}
