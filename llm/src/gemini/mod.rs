//! [`GeminiLlm`]: the Gemini REST API (Google AI or Vertex AI) behind [`BaseLlm`].
//!
//! - [`BaseLlm::generate`] is one `POST {base}/v1beta/models/{model}:generateContent`;
//!   [`BaseLlm::generate_stream`] is `POST …:streamGenerateContent?alt=sse`, read as
//!   server-sent events, one chunk per event as it arrives. On Vertex AI the path is
//!   `/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:…`.
//! - The body is the REST API's `GenerateContentRequest` in camelCase: `contents`,
//!   `systemInstruction` and `generationConfig` from the [`LlmRequest`].
//! - An answer's text is its first candidate's text parts (thought parts left out), with its
//!   `finishReason` and `usageMetadata`.
//! - The API key goes in the `x-goog-api-key` header, never in the URL, and no error
//!   message holds it.
//! - Errors: an error status is [`LlmError::Http`] with the API's `error.message`; a blocked
//!   prompt (`promptFeedback.blockReason`) is [`LlmError::Blocked`]; a connection that fails,
//!   breaks or stays silent past the read timeout is [`LlmError::Transport`]; an answer that
//!   does not parse is [`LlmError::Decode`], saying which event.
//! - HTTP/1.1 with pooled connections, over rustls on the `ring` provider, trusting the
//!   Mozilla roots plus any added with [`GeminiLlmBuilder::root_certificate`].
//!
//! ```no_run
//! use reel_llm::gemini::GeminiLlm;
//! use reel_llm::{BaseLlm, LlmRequest};
//! use futures_util::StreamExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let llm = GeminiLlm::from_env("gemini-2.5-flash")?;
//! let request = LlmRequest::new("gemini-2.5-flash")
//!     .system("Answer in one sentence.")
//!     .user("Why is the sky blue?");
//!
//! let answer = llm.generate(request.clone()).await?;
//! println!("{} ({:?})", answer.text, answer.usage);
//!
//! let mut chunks = llm.generate_stream(request).await?;
//! while let Some(chunk) = chunks.next().await {
//!     print!("{}", chunk?.text);
//! }
//! # Ok(()) }
//! ```
//!
//! Tests talk to [`crate::testing::gemini_standin::GeminiStandin`], a scripted server on
//! loopback, through [`GeminiLlmBuilder::base_url`].

mod answer;
mod body;
mod builder;
mod client;
mod setup_error;
mod sse;
mod stream;

use std::time::Duration;

use futures_util::future::BoxFuture;
use hyper::header::HeaderMap;
use reel_protocol::{
    ApiEndpoint, Credential, EndpointError, GEMINI_BASE_URL_VAR, Platform, Secret,
    VERTEX_BASE_URL_VAR,
};

pub use builder::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_READ_TIMEOUT, GOOGLE_AI_BASE_URL,
    GeminiLlmBuilder,
};
pub use setup_error::GeminiSetupError;

use self::answer::{Origin, error_answer, read_chunk};
use self::client::{Answer, HttpClient, post};
use super::{BaseLlm, LlmError, LlmRequest, LlmResponse, LlmStream};

/// How much of an error answer's body is read for its message.
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// The Gemini REST API as a [`BaseLlm`]. Cheap to share behind an `Arc`; calls share a pool
/// of connections.
///
/// Each call asks for the [`LlmRequest::model`] it carries (with or without `models/`), or
/// for this model's own when the request's is empty.
#[derive(Clone)]
pub struct GeminiLlm {
    model: String,
    platform: Platform,
    base_url: String,
    headers: HeaderMap,
    secret: Option<Secret>,
    client: HttpClient,
    read_timeout: Duration,
    max_answer_bytes: usize,
}

impl std::fmt::Debug for GeminiLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiLlm")
            .field("model", &self.model)
            .field("platform", &self.platform)
            .field("base_url", &self.base_url)
            .field("read_timeout", &self.read_timeout)
            .finish_non_exhaustive()
    }
}

/// The variables [`GeminiLlm::from_env`] reads a Google AI key from, for its error.
const API_KEY_VARIABLES: &str = "GEMINI_API_KEY (or GOOGLE_GENAI_API_KEY / GOOGLE_API_KEY)";

impl GeminiLlm {
    /// Settings for `model`, to finish with [`GeminiLlmBuilder::build`]: Google AI at
    /// [`GOOGLE_AI_BASE_URL`], no credential until one is set, the default timeouts.
    pub fn builder(model: impl Into<String>) -> GeminiLlmBuilder {
        GeminiLlmBuilder::new(model.into())
    }

    /// `model` on the platform the process environment names; see
    /// [`GeminiLlm::builder_from_vars`].
    pub fn from_env(model: impl Into<String>) -> Result<GeminiLlm, LlmError> {
        GeminiLlm::from_vars(model, |name| std::env::var(name).ok())
    }

    /// `model` on the platform the variables looked up by `var` name; see
    /// [`GeminiLlm::builder_from_vars`].
    pub fn from_vars(
        model: impl Into<String>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<GeminiLlm, LlmError> {
        let builder = GeminiLlm::builder_from_vars(model, var)?;
        let base_url = builder.resolved_base_url();
        builder.build().map_err(|error| LlmError::Transport {
            url: base_url,
            reason: error.to_string(),
        })
    }

    /// Settings for `model` on the platform the process environment names; see
    /// [`GeminiLlm::builder_from_vars`].
    pub fn builder_from_env(model: impl Into<String>) -> Result<GeminiLlmBuilder, LlmError> {
        GeminiLlm::builder_from_vars(model, |name| std::env::var(name).ok())
    }

    /// Settings for `model` on the platform the variables looked up by `var` name, read as
    /// [`ApiEndpoint::from_vars`] reads them (an empty value counts as unset):
    ///
    /// - Google AI, with the first of `GEMINI_API_KEY`, `GOOGLE_GENAI_API_KEY`,
    ///   `GOOGLE_API_KEY` that is set;
    /// - or, when `GOOGLE_GENAI_USE_VERTEXAI` is `true` or `1`, Vertex AI with
    ///   `GOOGLE_CLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION` (default `us-central1`) and the
    ///   access token in `GOOGLE_ACCESS_TOKEN`.
    ///
    /// A missing variable is [`LlmError::MissingApiKey`] naming it.
    pub fn builder_from_vars(
        model: impl Into<String>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<GeminiLlmBuilder, LlmError> {
        let missing = |variables| LlmError::MissingApiKey { variables };
        let endpoint = ApiEndpoint::from_vars(&var).map_err(|error| match error {
            EndpointError::MissingProject => missing("GOOGLE_CLOUD_PROJECT (for Vertex AI)"),
            EndpointError::MissingAccessToken => missing("GOOGLE_ACCESS_TOKEN (for Vertex AI)"),
            EndpointError::MissingApiKey => missing(API_KEY_VARIABLES),
            other => LlmError::Endpoint(other),
        })?;
        let builder = GeminiLlm::builder(model);
        let builder = match (endpoint.platform(), endpoint.credential()) {
            (Platform::Vertex { project, location }, Credential::BearerToken(token)) => {
                builder.vertex(project, location, token.clone())
            }
            (Platform::Vertex { project, location }, Credential::None) => {
                builder.vertex(project, location, "").without_credential()
            }
            (Platform::GoogleAi, Credential::ApiKey(key)) => builder.api_key(key.clone()),
            (Platform::GoogleAi, Credential::None) => builder.without_credential(),
            // `from_vars` gives only the pairs above.
            _ => return Err(missing(API_KEY_VARIABLES)),
        };
        // A base URL variable moved the host (`from_vars` checked it): the same host over
        // HTTP.
        let moved = [GEMINI_BASE_URL_VAR, VERTEX_BASE_URL_VAR]
            .into_iter()
            .any(|name| var(name).is_some_and(|v| !v.trim().is_empty()));
        Ok(if moved {
            let base = endpoint.base_url();
            let http = match base.split_once("://") {
                Some(("wss", rest)) => format!("https://{rest}"),
                Some((_, rest)) => format!("http://{rest}"),
                None => base.to_owned(),
            };
            builder.base_url(http)
        } else {
            builder
        })
    }

    /// The base URL calls go to (scheme, host, port, any path prefix; no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The platform calls are shaped for.
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// The URL of `method` (`generateContent`, `streamGenerateContent?alt=sse`) for the
    /// model `request` asks for.
    fn url(&self, request: &LlmRequest, method: &str) -> String {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        };
        let version = match self.platform {
            Platform::GoogleAi => "v1beta",
            Platform::Vertex { .. } => "v1",
        };
        let resource = self.platform.model_resource(model);
        format!("{}/{version}/{resource}:{method}", self.base_url)
    }

    /// Posts `request` to `url`; an answer with an error status becomes its error.
    async fn call(&self, url: &str, request: &LlmRequest) -> Result<Answer, LlmError> {
        let body = body::request_body(request);
        let mut answer = post(&self.client, url, &self.headers, body, self.read_timeout).await?;
        if (200..300).contains(&answer.status) {
            return Ok(answer);
        }
        let excerpt = answer.body.read_excerpt(MAX_ERROR_BODY_BYTES).await;
        Err(error_answer(&excerpt, self.origin(url, answer.status)))
    }

    fn origin<'a>(&'a self, url: &'a str, status: u16) -> Origin<'a> {
        Origin {
            url,
            status,
            secret: self.secret.as_ref().map(Secret::expose),
        }
    }
}

impl BaseLlm for GeminiLlm {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let url = self.url(&request, "streamGenerateContent?alt=sse");
            let answer = self.call(&url, &request).await?;
            Ok(stream::event_stream(
                answer.body,
                answer.status,
                self.secret.clone(),
                self.max_answer_bytes,
            ))
        })
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let url = self.url(&request, "generateContent");
            let mut answer = self.call(&url, &request).await?;
            let context = "the response body";
            let body = answer
                .body
                .read_to_end(self.max_answer_bytes, context)
                .await?;
            let chunk = read_chunk(&body, self.origin(&url, answer.status), || {
                context.to_owned()
            })?;
            Ok(LlmResponse {
                text: chunk.text,
                finish_reason: chunk.finish_reason,
                usage: chunk.usage,
                function_calls: chunk.function_calls,
            })
        })
    }
}
