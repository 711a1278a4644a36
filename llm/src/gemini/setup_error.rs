//! What can be wrong with a [`super::GeminiLlmBuilder`]'s settings.

/// A [`super::GeminiLlm`] could not be built from its settings. Messages never contain a
/// credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GeminiSetupError {
    /// The base URL is not an `http://` or `https://` URL with a host and no query.
    #[error("the base URL {url:?} is not usable: {reason}")]
    BaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An added root certificate is not a usable trust anchor.
    #[error("trusted certificate #{index} is not valid: {message}")]
    InvalidCertificate {
        /// Its position among the added certificates (DER ones first, then PEM ones, in the
        /// order they were added), from 0.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// PEM text given as root certificates could not be parsed.
    #[error("could not read PEM certificates #{index}: {message}")]
    Pem {
        /// Which PEM text, in the order they were added, from 0.
        index: usize,
        /// What went wrong.
        message: String,
    },
    /// PEM text given as root certificates holds none.
    #[error("PEM text #{index} holds no certificate (expected -----BEGIN CERTIFICATE-----)")]
    NoCertificates {
        /// Which PEM text, in the order they were added, from 0.
        index: usize,
    },
    /// The API key or token holds a character an HTTP header cannot carry.
    #[error("the credential cannot be sent in an HTTP header: it holds a control character")]
    Credential,
    /// The TLS client configuration could not be built.
    #[error("the TLS configuration could not be built: {message}")]
    Tls {
        /// rustls's reason.
        message: String,
    },
}
