//! Which request paths the tape server answers, and what it keeps of a request.
//!
//! The server answers the Live method of both APIs, for any API version:
//!
//! - Google AI: `/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent`
//!   and `...BidiGenerateContentConstrained` (ephemeral tokens);
//! - Vertex AI: `/ws/google.cloud.aiplatform.<version>.LlmBidiService/BidiGenerateContent`.
//!
//! A path may start with any number of slashes: the official SDKs join a base URL ending in
//! `/` with a path starting with `/`, so `//ws/...` is what they really send.
//!
//! Credentials (the `key` / `access_token` query parameters, the `x-goog-api-key` and
//! `Authorization` headers) are accepted and never kept: a [`RequestHead`] holds the path,
//! the query with every credential value replaced by `REDACTED`, and only *which*
//! credentials were presented.

use reel_protocol::redact_url;

use super::test_name::{TEST_HEADER, TestName, TestNameError, requested_test};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request};
use tokio_tungstenite::tungstenite::http::{Response, StatusCode, header};

/// Which API a path belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LiveApi {
    /// Google AI (`google.ai.generativelanguage`).
    GoogleAi,
    /// Vertex AI (`google.cloud.aiplatform`).
    Vertex,
}

/// A request path the server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LivePath {
    /// The API.
    pub api: LiveApi,
    /// The API version, e.g. `v1`, `v1beta`, `v1alpha`, `v1beta1`.
    pub version: String,
    /// Whether the method is `BidiGenerateContentConstrained` (ephemeral tokens).
    pub constrained: bool,
    /// The path with a single leading slash.
    pub normalized: String,
}

const GOOGLE_AI_PREFIX: &str = "ws/google.ai.generativelanguage.";
const GOOGLE_AI_METHOD: &str = ".GenerativeService.BidiGenerateContent";
const CONSTRAINED_SUFFIX: &str = "Constrained";
const VERTEX_PREFIX: &str = "ws/google.cloud.aiplatform.";
const VERTEX_METHOD: &str = ".LlmBidiService/BidiGenerateContent";

/// The Google AI path the server advertises (the one the official SDKs use by default).
pub const GOOGLE_AI_LIVE_PATH: &str =
    "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";

/// The Vertex AI path the server advertises.
pub const VERTEX_LIVE_PATH: &str =
    "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent";

impl LivePath {
    /// Parses a request path (no query). `None` when it is not a Live path.
    ///
    /// ```
    /// use reel_tape_server::{LiveApi, LivePath};
    ///
    /// let path = LivePath::parse(
    ///     "//ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent",
    /// )
    /// .unwrap();
    /// assert_eq!((path.api, path.version.as_str(), path.constrained), (LiveApi::GoogleAi, "v1", false));
    /// assert_eq!(
    ///     path.normalized,
    ///     "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent"
    /// );
    /// assert!(LivePath::parse("/ws/other").is_none());
    /// ```
    pub fn parse(path: &str) -> Option<LivePath> {
        let trimmed = path.trim_start_matches('/');
        if trimmed.len() == path.len() {
            return None;
        }
        let (api, version, constrained) = if let Some(rest) = trimmed.strip_prefix(GOOGLE_AI_PREFIX)
        {
            let (version, method) = rest.split_once(GOOGLE_AI_METHOD)?;
            let constrained = match method {
                "" => false,
                CONSTRAINED_SUFFIX => true,
                _ => return None,
            };
            (LiveApi::GoogleAi, version, constrained)
        } else if let Some(rest) = trimmed.strip_prefix(VERTEX_PREFIX) {
            let version = rest.strip_suffix(VERTEX_METHOD)?;
            (LiveApi::Vertex, version, false)
        } else {
            return None;
        };
        let valid_version =
            !version.is_empty() && version.bytes().all(|b| b.is_ascii_alphanumeric());
        valid_version.then(|| LivePath {
            api,
            version: version.to_owned(),
            constrained,
            normalized: format!("/{trimmed}"),
        })
    }
}

/// Which credentials a client presented (never their values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresentedCredentials {
    /// A `key=` query parameter.
    pub key_query: bool,
    /// An `access_token=` query parameter.
    pub access_token_query: bool,
    /// An `x-goog-api-key` header.
    pub api_key_header: bool,
    /// An `Authorization` header.
    pub authorization_header: bool,
}

impl PresentedCredentials {
    /// Whether any credential was presented.
    pub fn any(&self) -> bool {
        self.key_query
            || self.access_token_query
            || self.api_key_header
            || self.authorization_header
    }
}

/// What the server keeps of an upgrade request: nothing that holds a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    /// The Live path, when the path is one.
    pub live_path: Option<LivePath>,
    /// The path and query as received, credential values replaced by `REDACTED`. The only
    /// form of the URL that may be logged.
    pub redacted: String,
    /// Which credentials came with the request.
    pub credentials: PresentedCredentials,
    /// The test the client named ([`TEST_HEADER`] or [`TEST_QUERY_PARAM`](super::TEST_QUERY_PARAM)), or why that
    /// name cannot be used.
    pub test: Result<Option<TestName>, TestNameError>,
}

impl RequestHead {
    /// Reads an upgrade request.
    pub fn of(request: &Request) -> RequestHead {
        let uri = request.uri();
        let headers = request.headers();
        let mut head = RequestHead::from_target(uri.path(), uri.query());
        head.credentials.api_key_header = headers.contains_key("x-goog-api-key");
        head.credentials.authorization_header = headers.contains_key(header::AUTHORIZATION);
        let test_header = headers.get(TEST_HEADER).map(|value| value.as_bytes());
        head.test = requested_test(test_header, uri.query());
        head
    }

    /// What a request for `path` and `query` keeps, headers aside.
    pub(crate) fn from_target(path: &str, query: Option<&str>) -> RequestHead {
        let redacted = match query {
            Some(query) => redact_url(&format!("{path}?{query}")),
            None => path.to_owned(),
        };
        // The name as a server would decode it (`%6Bey` is `key`), `&` or `;` between pairs.
        let has_param = |name: &str| {
            query.is_some_and(|q| {
                q.split(['&', ';']).any(|pair| {
                    let key = pair.split('=').next().unwrap_or_default();
                    let decoded = reel_protocol::percent_decode(key);
                    String::from_utf8_lossy(&decoded)
                        .trim()
                        .eq_ignore_ascii_case(name)
                })
            })
        };
        RequestHead {
            live_path: LivePath::parse(path),
            redacted,
            credentials: PresentedCredentials {
                key_query: has_param("key"),
                access_token_query: has_param("access_token"),
                ..PresentedCredentials::default()
            },
            test: requested_test(None, query),
        }
    }

    /// The path part of [`RequestHead::redacted`].
    pub fn path(&self) -> &str {
        self.redacted
            .split_once('?')
            .map_or(self.redacted.as_str(), |(path, _)| path)
    }
}

/// The body of the HTTP 404 answer on `path`: it names the path (never the query) and the
/// paths that are served.
pub(crate) fn not_found_body(path: &str) -> String {
    format!(
        "reel serve: no Live endpoint at {path}\n\
         served paths (any API version, leading slashes doubled or not):\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContentConstrained\n  \
         /ws/google.cloud.aiplatform.<version>.LlmBidiService/BidiGenerateContent\n  \
         POST /<version>/models/<model>:generateContent, :streamGenerateContent (and the Vertex AI paths)\n  \
         GET /healthz\n"
    )
}

/// The HTTP 404 answer to an upgrade request on a path that is not a Live path.
pub(crate) fn not_found(head: &RequestHead) -> ErrorResponse {
    let mut response = Response::new(Some(not_found_body(head.path())));
    *response.status_mut() = StatusCode::NOT_FOUND;
    if let Ok(value) = header::HeaderValue::from_str("text/plain; charset=utf-8") {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_version_and_method_is_served() {
        let cases = [
            (
                "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
                LiveApi::GoogleAi,
                "v1beta",
                false,
            ),
            (
                "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained",
                LiveApi::GoogleAi,
                "v1alpha",
                true,
            ),
            (
                "//ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
                LiveApi::Vertex,
                "v1beta1",
                false,
            ),
        ];
        for (path, api, version, constrained) in cases {
            let parsed = LivePath::parse(path).unwrap();
            assert_eq!(parsed.api, api, "{path}");
            assert_eq!(parsed.version, version, "{path}");
            assert_eq!(parsed.constrained, constrained, "{path}");
            assert_eq!(
                parsed.normalized,
                format!("/{}", path.trim_start_matches('/'))
            );
        }
    }

    #[test]
    fn other_paths_are_not_served() {
        for path in [
            "",
            "/",
            "ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent",
            "/ws/google.ai.generativelanguage..GenerativeService.BidiGenerateContent",
            "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContentX",
            "/ws/google.ai.generativelanguage.v/1.GenerativeService.BidiGenerateContent",
            "/ws/google.cloud.aiplatform.v1.LlmBidiService/Other",
            "/v1/models",
        ] {
            assert_eq!(LivePath::parse(path), None, "{path:?}");
        }
    }

    #[test]
    fn a_request_head_keeps_no_credential() {
        let request = Request::builder()
            .uri("/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?alt=x&key=AIzaSECRET")
            .header("x-goog-api-key", "AIzaOTHER")
            .body(())
            .unwrap();
        let head = RequestHead::of(&request);
        assert_eq!(
            head.redacted,
            "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?alt=x&key=REDACTED"
        );
        assert_eq!(
            head.credentials,
            PresentedCredentials {
                key_query: true,
                access_token_query: false,
                api_key_header: true,
                authorization_header: false,
            }
        );
        assert!(!format!("{head:?}").contains("SECRET"));
        assert!(!format!("{head:?}").contains("OTHER"));
        let body = not_found(&RequestHead::of(
            &Request::builder()
                .uri("/nope?key=AIzaSECRET")
                .body(())
                .unwrap(),
        ));
        assert_eq!(body.status(), StatusCode::NOT_FOUND);
        let text = body.body().clone().unwrap();
        assert!(
            text.starts_with("reel serve: no Live endpoint at /nope\n"),
            "{text}"
        );
        assert!(!text.contains("SECRET"));
    }
}
