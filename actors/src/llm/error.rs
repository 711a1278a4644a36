//! What can go wrong with a model call.

/// A model call that failed. Messages never contain an API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// No API key was configured.
    #[error("no API key for the Gemini API: set {variables}")]
    MissingApiKey {
        /// The environment variables that were looked at.
        variables: &'static str,
    },
    /// The API answered with an error status.
    #[error("the model API answered {status} for {url}: {message}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The URL called, with any key removed.
        url: String,
        /// The API's error message (its `error.message` when it sent one).
        message: String,
    },
    /// The connection failed or broke.
    #[error("could not reach the model API at {url}: {reason}")]
    Transport {
        /// The URL called, with any key removed.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The API's answer could not be read.
    #[error("could not read the model's answer ({context}): {reason}")]
    Decode {
        /// Where in the answer (for example `event 3 of the stream`).
        context: String,
        /// What was wrong.
        reason: String,
    },
    /// The model blocked the prompt or the answer.
    #[error("the model refused the request: {reason}")]
    Blocked {
        /// The block reason the API gave.
        reason: String,
    },
}
