//! Secrets (API keys, tokens) that must never reach a log, a recording or an error.

use std::fmt;

/// A credential. `Debug` and `Display` print `[REDACTED]`; only [`Secret::expose`] reveals
/// it, at the one place that puts it on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself. Call only where it goes on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// Query parameters that carry credentials in Live URLs.
pub const SECRET_QUERY_PARAMS: &[&str] = &["key", "access_token"];

/// `url` with the value of every credential query parameter (`key=`, `access_token=`)
/// replaced by `REDACTED`. Anything else is left as it is.
///
/// ```
/// assert_eq!(
///     reel_protocol::redact_url("wss://h/ws/x?alt=json&key=AIza123&b=2"),
///     "wss://h/ws/x?alt=json&key=REDACTED&b=2"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if SECRET_QUERY_PARAMS.contains(&name) => format!("{name}=REDACTED"),
            _ => pair.to_owned(),
        })
        .collect();
    let mut out = format!("{base}?{}", pairs.join("&"));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}
