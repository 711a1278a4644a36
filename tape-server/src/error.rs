//! The tape server's errors: setting up ([`ServeError`] and the errors it wraps) and one
//! connection going wrong ([`ConnectionError`]). None carries a credential.

use std::path::PathBuf;

use reel_recorder::RecordError;

/// The server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listening address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A tape could not be loaded.
    #[error(transparent)]
    Tape(#[from] TapeLoadError),
    /// The TLS certificate or key is unusable.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The loose-matching rules are unusable.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// The upstream of a recording proxy is unusable.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// The directory recordings go to cannot be created.
    #[error("cannot create the recording directory {}: {source}", path.display())]
    RecordDir {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A replay speed that is not a positive number.
    #[error("the replay speed must be a positive number, not {speed}")]
    InvalidSpeed {
        /// The speed given.
        speed: f64,
    },
}

/// A tape (wire log) that cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TapeLoadError {
    /// The file could not be read or is not a wire log.
    #[error(transparent)]
    Read(#[from] RecordError),
    /// The tape directory could not be listed.
    #[error("cannot list the tape directory {}: {source}", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The tape directory holds no `*.wire.jsonl` file.
    #[error("{} holds no tapes (*.wire.jsonl files)", path.display())]
    NoTapes {
        /// The directory.
        path: PathBuf,
    },
    /// A tape with no client frame: nothing to match a client against.
    #[error("the tape {name} has no outbound (client) frame to match a client against")]
    NoClientFrame {
        /// The tape.
        name: String,
    },
}

/// TLS material that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM file could not be read or parsed.
    #[error("cannot read {what} from {}: {message}", path.display())]
    ReadPem {
        /// The file, as given.
        path: PathBuf,
        /// `certificate` or `private key`.
        what: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The certificate file holds no certificate.
    #[error("{} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)", path.display())]
    NoCertificate {
        /// The file, as given.
        path: PathBuf,
    },
    /// rustls refused the certificate and key.
    #[error("the TLS certificate and key cannot be used together: {message}")]
    Config {
        /// rustls's reason.
        message: String,
    },
    /// A self-signed certificate could not be generated.
    #[error("cannot generate a self-signed certificate: {message}")]
    Generate {
        /// rcgen's reason.
        message: String,
    },
    /// The generated certificate or key could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file, as given.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// Loose-matching rules that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RulesError {
    /// The rules file could not be read.
    #[error("cannot read the match rules {}: {source}", path.display())]
    Read {
        /// The file, as given.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The rules file is not valid rules JSON.
    #[error("{} line {line} column {column} is not valid match rules: {message}", path.display())]
    Parse {
        /// The file, as given.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A rule's path is malformed.
    #[error("match rule: {0}")]
    InvalidPath(#[from] reel_protocol::json::PathError),
}

/// The upstream of a recording proxy is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The URL is not a `ws://` or `wss://` URL.
    #[error("the upstream {url} is not a ws:// or wss:// URL")]
    InvalidUrl {
        /// The URL, credentials redacted.
        url: String,
    },
    /// A remote upstream and no credential in the environment.
    #[error("the upstream {url} needs a credential: {message}")]
    MissingCredential {
        /// The URL, credentials redacted.
        url: String,
        /// What to set ([`reel_protocol::EndpointError`]'s text).
        message: String,
    },
    /// Extra trusted certificates could not be loaded.
    #[error("cannot trust the upstream's certificate: {message}")]
    Roots {
        /// What went wrong.
        message: String,
    },
}

/// One connection went wrong. Reported with the connection's number; never disturbs
/// another connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The TLS handshake failed.
    #[error("TLS handshake failed: {message}")]
    Tls {
        /// rustls's reason.
        message: String,
    },
    /// The WebSocket handshake failed (not a WebSocket request, or a broken one).
    #[error("WebSocket handshake failed: {message}")]
    Handshake {
        /// tungstenite's reason.
        message: String,
    },
    /// The TLS and WebSocket handshakes took too long.
    #[error("the handshake did not finish within {seconds} s")]
    HandshakeTimeout {
        /// The limit.
        seconds: u64,
    },
    /// The connection broke.
    #[error("connection failed: {message}")]
    Io {
        /// What went wrong.
        message: String,
    },
    /// The upstream could not be reached or refused the connection.
    #[error("the upstream {url} could not be reached: {message}")]
    Upstream {
        /// The upstream URL, credentials redacted.
        url: String,
        /// What went wrong, credentials removed.
        message: String,
    },
    /// The recording file could not be created.
    #[error("cannot create a recording in {}: {message}", dir.display())]
    Recording {
        /// The recording directory.
        dir: PathBuf,
        /// What the operating system said.
        message: String,
    },
}
