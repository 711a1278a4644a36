//! Where a session connects and how it authenticates: Google AI (API key or ephemeral token)
//! or Vertex AI (project, location, bearer token), chosen in code or from the environment.

use std::fmt;

use crate::secret::{Secret, redact_url};

/// The API a session talks to. Decides the model resource name, what setup fields are
/// allowed and the WebSocket frame type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Platform {
    /// Google AI (generativelanguage.googleapis.com).
    GoogleAi,
    /// Vertex AI.
    Vertex {
        /// GCP project.
        project: String,
        /// Region, or `global`.
        location: String,
    },
}

impl Platform {
    /// The model resource name for `model` (`gemini-live-2.5-flash` → `models/gemini-live-2.5-flash`
    /// on Google AI, `projects/P/locations/L/publishers/google/models/…` on Vertex). A name
    /// that is already a resource name is kept.
    pub fn model_resource(&self, model: &str) -> String {
        match self {
            Platform::GoogleAi
                if model.starts_with("models/") || model.starts_with("tunedModels/") =>
            {
                model.to_owned()
            }
            Platform::GoogleAi => format!("models/{model}"),
            Platform::Vertex { .. } if model.starts_with("projects/") => model.to_owned(),
            Platform::Vertex { project, location } => {
                let name = model.strip_prefix("models/").unwrap_or(model);
                format!("projects/{project}/locations/{location}/publishers/google/models/{name}")
            }
        }
    }

    /// Whether the platform takes non-blocking functions and response scheduling.
    pub fn supports_async_tools(&self) -> bool {
        matches!(self, Platform::GoogleAi)
    }

    /// Whether the platform takes `thinkingConfig`.
    pub fn supports_thinking(&self) -> bool {
        matches!(self, Platform::GoogleAi)
    }

    /// How the server frames its messages.
    pub fn frame_kind(&self) -> FrameKind {
        match self {
            Platform::GoogleAi => FrameKind::Text,
            Platform::Vertex { .. } => FrameKind::Binary,
        }
    }
}

/// WebSocket frame type used for JSON messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// Text frames (Google AI).
    Text,
    /// JSON inside binary frames (Vertex AI).
    Binary,
}

/// How the session authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// Google AI API key, sent as `?key=`.
    ApiKey(Secret),
    /// Google AI ephemeral token (`auth_tokens/…`), sent as `?access_token=` on the
    /// constrained v1alpha method.
    EphemeralToken(Secret),
    /// OAuth2 bearer token, sent as `Authorization: Bearer` (Vertex AI).
    BearerToken(Secret),
    /// No credential (a local tape server, for instance).
    None,
}

/// A Live API endpoint: platform, credential and host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiEndpoint {
    platform: Platform,
    credential: Credential,
    /// `wss://host[:port]` or `ws://host[:port]`, no path.
    base_url: String,
}

const GOOGLE_AI_HOST: &str = "wss://generativelanguage.googleapis.com";
// The official SDKs (google-genai 3.x, @google/genai 3.x) use API version v1 for Live.
const GOOGLE_AI_PATH: &str =
    "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";
const GOOGLE_AI_EPHEMERAL_PATH: &str =
    "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained";
const VERTEX_PATH: &str = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent";

impl ApiEndpoint {
    /// Google AI with an API key.
    pub fn google_ai(api_key: impl Into<Secret>) -> Self {
        ApiEndpoint {
            platform: Platform::GoogleAi,
            credential: Credential::ApiKey(api_key.into()),
            base_url: GOOGLE_AI_HOST.to_owned(),
        }
    }

    /// Google AI with an ephemeral token (`auth_tokens/…`).
    pub fn google_ai_ephemeral(token: impl Into<Secret>) -> Self {
        ApiEndpoint {
            platform: Platform::GoogleAi,
            credential: Credential::EphemeralToken(token.into()),
            base_url: GOOGLE_AI_HOST.to_owned(),
        }
    }

    /// An endpoint for sessions that never connect (a replay): Google AI with no credential
    /// and a host that does not resolve.
    pub fn offline() -> Self {
        ApiEndpoint::google_ai("")
            .without_credential()
            .with_base_url("ws://offline.invalid")
    }

    /// Vertex AI in `project` and `location` (`global` uses the global host) with a bearer
    /// token.
    pub fn vertex(
        project: impl Into<String>,
        location: impl Into<String>,
        token: impl Into<Secret>,
    ) -> Self {
        let location = location.into();
        let base_url = if location == "global" {
            "wss://aiplatform.googleapis.com".to_owned()
        } else {
            format!("wss://{location}-aiplatform.googleapis.com")
        };
        ApiEndpoint {
            platform: Platform::Vertex {
                project: project.into(),
                location,
            },
            credential: Credential::BearerToken(token.into()),
            base_url,
        }
    }

    /// Vertex AI through a custom host (VPC Service Controls, private endpoints).
    pub fn vertex_with_host(
        project: impl Into<String>,
        location: impl Into<String>,
        token: impl Into<Secret>,
        host: &str,
    ) -> Self {
        ApiEndpoint::vertex(project, location, token).with_base_url(&format!("wss://{host}"))
    }

    /// The same endpoint at another server, e.g. `ws://127.0.0.1:9000` for a local tape
    /// server. A trailing slash is ignored.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        self.base_url = base_url.trim_end_matches('/').to_owned();
        self
    }

    /// The same endpoint without a credential.
    pub fn without_credential(mut self) -> Self {
        self.credential = Credential::None;
        self
    }

    /// The platform.
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// The credential.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// The server's base URL (scheme, host, port).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// What to open: the full URL (credential included) and headers.
    pub fn connect_request(&self) -> ConnectRequest {
        let (path, query) = match (&self.platform, &self.credential) {
            (Platform::GoogleAi, Credential::ApiKey(key)) => {
                (GOOGLE_AI_PATH, Some(("key", key.expose())))
            }
            (Platform::GoogleAi, Credential::EphemeralToken(token)) => (
                GOOGLE_AI_EPHEMERAL_PATH,
                Some(("access_token", token.expose())),
            ),
            (Platform::GoogleAi, _) => (GOOGLE_AI_PATH, None),
            (Platform::Vertex { .. }, _) => (VERTEX_PATH, None),
        };
        let mut url = format!("{}{}", self.base_url, path);
        if let Some((name, value)) = query {
            url.push('?');
            url.push_str(name);
            url.push('=');
            url.push_str(&percent_encode(value));
        }
        let mut headers = Vec::new();
        if let Credential::BearerToken(token) = &self.credential {
            headers.push((
                "Authorization".to_owned(),
                Secret::new(format!("Bearer {}", token.expose())),
            ));
        }
        ConnectRequest {
            url: Secret::new(url),
            headers,
        }
    }

    /// Resolves the endpoint from the process environment; see [`ApiEndpoint::from_vars`].
    pub fn from_env() -> Result<Self, EndpointError> {
        ApiEndpoint::from_vars(|name| std::env::var(name).ok())
    }

    /// Resolves the endpoint from variables looked up by `var` (empty counts as unset):
    ///
    /// - `GOOGLE_GENAI_USE_VERTEXAI` `true` or `1` (any case) selects Vertex AI, which needs
    ///   `GOOGLE_CLOUD_PROJECT`, takes `GOOGLE_CLOUD_LOCATION` (default `us-central1`) and
    ///   needs `GOOGLE_ACCESS_TOKEN`;
    /// - otherwise Google AI, with the first of `GEMINI_API_KEY`, `GOOGLE_GENAI_API_KEY`,
    ///   `GOOGLE_API_KEY` that is set.
    ///
    /// The host can be moved, as the official SDKs allow, with `GOOGLE_GEMINI_BASE_URL`
    /// (Google AI) or `GOOGLE_VERTEX_BASE_URL` (Vertex AI): `http://`/`ws://` and
    /// `https://`/`wss://` URLs, e.g. `http://127.0.0.1:9000` for a local `reel serve`. A
    /// base URL on a loopback address needs no credential: without one the session
    /// connects with none (a tape server replays without a key).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, EndpointError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let use_vertex = get("GOOGLE_GENAI_USE_VERTEXAI")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        let base_var = if use_vertex {
            VERTEX_BASE_URL_VAR
        } else {
            GEMINI_BASE_URL_VAR
        };
        let base = get(base_var)
            .map(|url| websocket_base(base_var, url.trim()))
            .transpose()?;
        let local = base.as_deref().is_some_and(is_loopback_base);
        let endpoint = if use_vertex {
            let project = get("GOOGLE_CLOUD_PROJECT").ok_or(EndpointError::MissingProject)?;
            let location = get("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| "us-central1".into());
            match get("GOOGLE_ACCESS_TOKEN") {
                Some(token) => ApiEndpoint::vertex(project, location, token),
                None if local => ApiEndpoint::vertex(project, location, "").without_credential(),
                None => return Err(EndpointError::MissingAccessToken),
            }
        } else {
            match ["GEMINI_API_KEY", "GOOGLE_GENAI_API_KEY", "GOOGLE_API_KEY"]
                .into_iter()
                .find_map(get)
            {
                Some(key) => ApiEndpoint::google_ai(key),
                None if local => ApiEndpoint::google_ai("").without_credential(),
                None => return Err(EndpointError::MissingApiKey),
            }
        };
        Ok(match base {
            Some(base) => endpoint.with_base_url(&base),
            None => endpoint,
        })
    }
}

/// The variable that moves the Google AI host (the official SDKs read the same name).
pub const GEMINI_BASE_URL_VAR: &str = "GOOGLE_GEMINI_BASE_URL";
/// The variable that moves the Vertex AI host (the official SDKs read the same name).
pub const VERTEX_BASE_URL_VAR: &str = "GOOGLE_VERTEX_BASE_URL";

/// `url` as a WebSocket base URL (`http` → `ws`, `https` → `wss`), without a path.
fn websocket_base(var: &'static str, url: &str) -> Result<String, EndpointError> {
    let bad = |reason: &str| EndpointError::BadBaseUrl {
        var,
        url: redact_url(url),
        reason: reason.to_owned(),
    };
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("it has no scheme (use http://, https://, ws:// or wss://)"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        _ => return Err(bad("the scheme is not http, https, ws or wss")),
    };
    let host = rest.trim_end_matches('/');
    if host.is_empty() {
        return Err(bad("it has no host"));
    }
    if host.contains(['/', '?', '#', '@']) {
        return Err(bad(
            "it must be scheme://host[:port] only: no path, query or user",
        ));
    }
    Ok(format!("{scheme}://{host}"))
}

/// Whether a `ws[s]://host[:port]` base URL names this machine (127.0.0.0/8, `localhost`,
/// `[::1]`).
fn is_loopback_base(base: &str) -> bool {
    let host_port = base.split_once("://").map_or(base, |(_, rest)| rest);
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split_once(']').map_or(rest, |(host, _)| host)
    } else {
        host_port
            .split_once(':')
            .map_or(host_port, |(host, _)| host)
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What a transport opens: URL and headers, both holding credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectRequest {
    url: Secret,
    /// Headers to send with the upgrade request (values may hold credentials).
    pub headers: Vec<(String, Secret)>,
}

impl ConnectRequest {
    /// The URL with its credential, for the transport to open. Never log it.
    pub fn url_with_credentials(&self) -> &str {
        self.url.expose()
    }

    /// The URL with credentials replaced by `REDACTED`, for logs and errors.
    pub fn redacted_url(&self) -> String {
        redact_url(self.url.expose())
    }
}

impl fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectRequest")
            .field("url", &self.redacted_url())
            .field("headers", &self.headers)
            .finish()
    }
}

/// Decodes `%XX` escapes (a bad escape is kept as it is). `+` is left alone: a caller
/// reading a query value turns it into a space first.
///
/// ```
/// assert_eq!(reel_protocol::percent_decode("a%20b%2F%zz"), b"a b/%zz");
/// ```
pub fn percent_decode(text: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(text).collect()
}

/// The bytes a query value keeps as they are: RFC 3986's unreserved characters
/// (`A-Z a-z 0-9 - _ . ~`); everything else is escaped.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a query value: every byte outside RFC 3986's unreserved characters
/// becomes `%XX` (upper-case hex), so a key or token with `/`, `+` or `=` stays intact.
///
/// ```
/// assert_eq!(reel_protocol::percent_encode("a b/+~é"), "a%20b%2F%2B~%C3%A9");
/// ```
pub fn percent_encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// The environment does not describe a usable endpoint. The texts say what to set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// No Google AI key.
    #[error(
        "missing required environment variable: GEMINI_API_KEY (or GOOGLE_GENAI_API_KEY / GOOGLE_API_KEY). \
         For Google AI set GEMINI_API_KEY to a key from Google AI Studio; for Vertex AI set \
         GOOGLE_GENAI_USE_VERTEXAI=true, GOOGLE_CLOUD_PROJECT and GOOGLE_ACCESS_TOKEN; \
         against a local `reel serve`, set GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT and no key"
    )]
    MissingApiKey,
    /// Vertex selected, no project.
    #[error(
        "GOOGLE_CLOUD_PROJECT is required for Vertex AI (GOOGLE_GENAI_USE_VERTEXAI is set); \
         set it to your GCP project id"
    )]
    MissingProject,
    /// Vertex selected, no token.
    #[error(
        "Vertex AI needs an access token: set GOOGLE_ACCESS_TOKEN, for example to the output of \
         `gcloud auth print-access-token`"
    )]
    MissingAccessToken,
    /// `GOOGLE_GEMINI_BASE_URL` / `GOOGLE_VERTEX_BASE_URL` is not a usable base URL.
    #[error("{var}={url} is not a usable base URL: {reason}")]
    BadBaseUrl {
        /// The variable.
        var: &'static str,
        /// Its value, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}
