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

/// Whether a query parameter named `name` (as it appears in the URL, escapes and all)
/// carries a credential: its percent-decoded form, in any letter case and with surrounding
/// blanks trimmed, is one of [`SECRET_QUERY_PARAMS`] (`%6Bey`, `KEY` and `key` alike, since a
/// server may decode them all to `key`). An escaped `=` inside the name (`key%3DSECRET`)
/// ends the name there, so the value is never kept either.
///
/// ```
/// use reel_protocol::is_secret_query_name;
/// assert!(is_secret_query_name("%6Bey"));
/// assert!(is_secret_query_name("Access_Token"));
/// assert!(is_secret_query_name("key%3DAIza"));
/// assert!(!is_secret_query_name("keyboard"));
/// ```
pub fn is_secret_query_name(name: &str) -> bool {
    secret_param(name).is_some()
}

/// The credential parameter `name` decodes to, and whether an escaped `=` hid in it.
fn secret_param(name: &str) -> Option<(&'static str, bool)> {
    let decoded = crate::endpoint::percent_decode(&name.replace('+', " "));
    let decoded = String::from_utf8_lossy(&decoded);
    let (name, escaped_value) = match decoded.split_once('=') {
        Some((name, _)) => (name, true),
        None => (decoded.as_ref(), false),
    };
    let name = name.trim();
    SECRET_QUERY_PARAMS
        .iter()
        .find(|secret| name.eq_ignore_ascii_case(secret))
        .map(|secret| (*secret, escaped_value))
}

/// `url` with the value of every credential query parameter (`key=`, `access_token=`, in
/// whatever spelling: see [`is_secret_query_name`]) replaced by `REDACTED`. Parameters are
/// separated by `&` or `;` (both are read as separators by some servers). Anything else is
/// left as it is.
///
/// ```
/// assert_eq!(
///     reel_protocol::redact_url("wss://h/ws/x?alt=json&key=AIza123&b=2"),
///     "wss://h/ws/x?alt=json&key=REDACTED&b=2"
/// );
/// assert_eq!(
///     reel_protocol::redact_url("/ws/x?%6Bey=AIza1;key=AIza2&KEY=AIza3&key%3DAIza4"),
///     "/ws/x?%6Bey=REDACTED;key=REDACTED&KEY=REDACTED&key=REDACTED"
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
    let mut out = String::with_capacity(url.len());
    out.push_str(base);
    out.push('?');
    let mut rest = query;
    loop {
        let end = rest.find(['&', ';']).unwrap_or(rest.len());
        let pair = &rest[..end];
        let (name, has_value) = match pair.split_once('=') {
            Some((name, _)) => (name, true),
            None => (pair, false),
        };
        match secret_param(name) {
            // The name hides an `=` behind an escape: what follows it is a value.
            Some((secret, true)) => {
                out.push_str(secret);
                out.push_str("=REDACTED");
            }
            Some(_) if has_value => {
                out.push_str(name);
                out.push_str("=REDACTED");
            }
            _ => out.push_str(pair),
        }
        let Some(separator) = rest[end..].chars().next() else {
            break;
        };
        out.push(separator);
        rest = &rest[end + 1..];
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_spelling_of_a_credential_is_redacted() {
        assert_eq!(
            super::redact_url(
                "/ws/x?%6Bey=AIzaSECRET1;key=AIzaSECRET2&KEY=AIzaSECRET3&access%5Ftoken=SECRET4&alt=json"
            ),
            "/ws/x?%6Bey=REDACTED;key=REDACTED&KEY=REDACTED&access%5Ftoken=REDACTED&alt=json"
        );
    }
}
