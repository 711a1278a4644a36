//! The REST calls the tape server answers beside Live: `generateContent` and
//! `streamGenerateContent`, on the paths the official SDKs use.
//!
//! - Google AI: `/{version}/models/{model}:{method}`;
//! - Vertex AI: `/{version}/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{method}`.
//!
//! Leading slashes may be doubled (an SDK joins a base URL ending in `/` with a path starting
//! with `/`). `?alt=sse` asks for server-sent events; the `key` parameter is a credential and
//! is neither kept nor forwarded.

/// Which REST method a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RestMethod {
    /// `generateContent`: one JSON answer.
    Generate,
    /// `streamGenerateContent`: the answer in pieces (server-sent events with `alt=sse`,
    /// else one JSON array).
    Stream,
}

impl RestMethod {
    /// The method's name in a path: `generateContent`, `streamGenerateContent`.
    pub fn as_str(self) -> &'static str {
        match self {
            RestMethod::Generate => "generateContent",
            RestMethod::Stream => "streamGenerateContent",
        }
    }
}

/// A REST call's path, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestPath {
    /// The method.
    pub method: RestMethod,
    /// The model id (the last segment of the model's resource name).
    pub model: String,
    /// The path with a single leading slash, as it is forwarded.
    pub normalized: String,
    /// Whether the client asked for server-sent events (`alt=sse`).
    pub sse: bool,
}

impl RestPath {
    /// Reads a request target (path and query); `None` when it is not a REST call the
    /// server answers.
    ///
    /// ```
    /// use reel_tape_server::{RestMethod, RestPath};
    ///
    /// let call = RestPath::parse("//v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=K").unwrap();
    /// assert_eq!((call.method, call.model.as_str(), call.sse), (RestMethod::Stream, "gemini-2.5-flash", true));
    /// assert_eq!(call.normalized, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    /// assert!(RestPath::parse("/v1beta/models/m:countTokens").is_none());
    /// ```
    pub fn parse(target: &str) -> Option<RestPath> {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let trimmed = path.trim_start_matches('/');
        if trimmed.len() == path.len() {
            return None;
        }
        let (resource, method) = trimmed.rsplit_once(':')?;
        let method = match method {
            "generateContent" => RestMethod::Generate,
            "streamGenerateContent" => RestMethod::Stream,
            _ => return None,
        };
        let segments: Vec<&str> = resource.split('/').collect();
        let model = match segments.as_slice() {
            [version, "models", model] if is_version(version) => *model,
            [
                version,
                "projects",
                _,
                "locations",
                _,
                "publishers",
                _,
                "models",
                model,
            ] if is_version(version) => *model,
            _ => return None,
        };
        let model_ok = !model.is_empty()
            && model
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'@'));
        model_ok.then(|| RestPath {
            method,
            model: model.to_owned(),
            normalized: format!("/{trimmed}"),
            sse: query.split('&').any(|pair| pair == "alt=sse"),
        })
    }
}

fn is_version(segment: &str) -> bool {
    segment.starts_with('v')
        && segment.len() > 1
        && segment.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_paths_are_read() {
        let call = RestPath::parse("/v1beta/models/gemini-2.5-flash:generateContent").unwrap();
        assert_eq!(
            call,
            RestPath {
                method: RestMethod::Generate,
                model: "gemini-2.5-flash".into(),
                normalized: "/v1beta/models/gemini-2.5-flash:generateContent".into(),
                sse: false,
            }
        );
        let vertex = RestPath::parse(
            "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        )
        .unwrap();
        assert_eq!(
            (vertex.method, vertex.model.as_str(), vertex.sse),
            (RestMethod::Stream, "gemini-2.5-flash", true)
        );
    }

    #[test]
    fn other_paths_are_not_rest_calls() {
        for target in [
            "v1beta/models/m:generateContent",
            "/v1beta/models/m:embedContent",
            "/v1beta/tunedModels/m:generateContent",
            "/models/m:generateContent",
            "/v1beta/models/:generateContent",
            "/v1beta/models/a/b:generateContent",
            "/healthz",
        ] {
            assert_eq!(RestPath::parse(target), None, "{target}");
        }
    }
}
