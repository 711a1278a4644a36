//! [`ExtractionError`]: why an extractor produced nothing.

use std::time::Duration;

use crate::llm::LlmError;

/// An extraction that failed. Nothing is written to the state for it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractionError {
    /// The model call failed.
    #[error("extractor `{extractor}`: the model call failed: {source}")]
    Llm {
        /// The extractor's name.
        extractor: String,
        /// The underlying error.
        #[source]
        source: LlmError,
    },
    /// The model's answer is not JSON.
    #[error(
        "extractor `{extractor}`: the model's answer is not JSON ({source}); it begins {excerpt:?}"
    )]
    NotJson {
        /// The extractor's name.
        extractor: String,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
        /// The first characters of the answer.
        excerpt: String,
    },
    /// The extractor reported a failure of its own.
    #[error("extractor `{extractor}` failed: {message}")]
    Failed {
        /// The extractor's name.
        extractor: String,
        /// What went wrong.
        message: String,
    },
    /// The extractor did not finish in time; the control lane went on without it.
    #[error("extractor `{extractor}` did not finish within {timeout:?}")]
    TimedOut {
        /// The extractor's name.
        extractor: String,
        /// The limit.
        timeout: Duration,
    },
    /// The extractor panicked; the control lane caught it and went on.
    #[error("extractor `{extractor}` panicked: {message}")]
    Panicked {
        /// The extractor's name.
        extractor: String,
        /// The panic message.
        message: String,
    },
}

impl ExtractionError {
    /// A [`ExtractionError::Failed`]: the way a custom extractor reports a failure.
    pub fn failed(extractor: impl Into<String>, message: impl std::fmt::Display) -> Self {
        ExtractionError::Failed {
            extractor: extractor.into(),
            message: message.to_string(),
        }
    }

    /// The extractor that failed.
    pub fn extractor(&self) -> &str {
        match self {
            ExtractionError::Llm { extractor, .. }
            | ExtractionError::NotJson { extractor, .. }
            | ExtractionError::Failed { extractor, .. }
            | ExtractionError::TimedOut { extractor, .. }
            | ExtractionError::Panicked { extractor, .. } => extractor,
        }
    }
}
