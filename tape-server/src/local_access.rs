//! Who may use a local server: a check of every request's `Host` and `Origin` headers, made
//! before anything else is done for it (no upstream opened, no file written).
//!
//! A web page the user has open can reach a server on loopback: it can open
//! `ws://127.0.0.1:PORT` (the browser sends the page's `Origin`), and through DNS rebinding
//! it can send plain HTTP to it under a name of its own (the browser sends that name as
//! `Host`). So:
//!
//! - an `Origin` header not on the allow-list is refused ([`AccessRefusal::ForeignOrigin`]);
//!   a request without one passes: the official SDKs, test runners and `curl` send none;
//! - on a loopback bind, a `Host` that is not a loopback name or address (`localhost`,
//!   `127.0.0.1`, `[::1]`, with any port) is refused ([`AccessRefusal::ForeignHost`]). A bind
//!   on another address checks no `Host`: the machine may have any number of names there.
//!
//! Decision record 0022 tells why each line is drawn where it is.

use std::net::IpAddr;

/// The `Host` and `Origin` rules of one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalAccess {
    /// The origins allowed besides none, lowercased, without a trailing `/`.
    origins: Vec<String>,
    /// Whether `Host` must name loopback.
    loopback_host: bool,
    /// Whether an `Origin` naming the request's own (checked) `Host` is allowed: the
    /// server's own pages.
    same_origin: bool,
}

/// Why a request was refused (the text is the HTTP 403 answer's reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessRefusal {
    /// The request names a host other than loopback (DNS rebinding, or a proxy).
    #[error(
        "Host {host:?} is not this server's loopback name or address (localhost, 127.0.0.1, [::1])"
    )]
    ForeignHost {
        /// The `Host` header, as sent (cut to 100 bytes).
        host: String,
    },
    /// The request comes from a web page whose origin is not allowed.
    #[error("Origin {origin:?} is not allowed here (--allow-origin {origin} allows it)")]
    ForeignOrigin {
        /// The `Origin` header, as sent (cut to 100 bytes).
        origin: String,
    },
}

impl LocalAccess {
    /// The rules of a server bound to `ip`: `Host` must name loopback when `ip` is loopback;
    /// no origin is allowed yet.
    pub fn for_bind(ip: IpAddr) -> LocalAccess {
        LocalAccess {
            origins: Vec::new(),
            loopback_host: ip.is_loopback(),
            same_origin: false,
        }
    }

    /// Allows requests from pages of `origin` (`https://app.example`, `http://localhost:5173`).
    pub fn allow_origin(mut self, origin: &str) -> LocalAccess {
        self.origins.push(normal_origin(origin));
        self
    }

    /// Allows an `Origin` that names the request's own `Host` (`http://HOST`), for a server
    /// that serves pages of its own. On a bind that checks no `Host`, use it only with a
    /// token: there the `Host` may be any name.
    pub fn allow_same_origin(mut self) -> LocalAccess {
        self.same_origin = true;
        self
    }

    /// Whether the bind is on loopback (and `Host` is checked).
    pub fn is_loopback(&self) -> bool {
        self.loopback_host
    }

    /// Checks a request's `Host` and `Origin` headers (raw bytes, absent when not sent).
    pub fn check(&self, host: Option<&[u8]>, origin: Option<&[u8]>) -> Result<(), AccessRefusal> {
        let host = host.map(String::from_utf8_lossy);
        if self.loopback_host
            && let Some(host) = &host
            && !is_loopback_host(host)
        {
            return Err(AccessRefusal::ForeignHost { host: shown(host) });
        }
        let Some(origin) = origin else {
            return Ok(());
        };
        let origin = String::from_utf8_lossy(origin);
        let normal = normal_origin(&origin);
        let own = self.same_origin
            && host.as_ref().is_some_and(|host| {
                let host = host.trim().to_ascii_lowercase();
                normal == format!("http://{host}") || normal == format!("https://{host}")
            });
        if own || self.origins.contains(&normal) {
            Ok(())
        } else {
            Err(AccessRefusal::ForeignOrigin {
                origin: shown(&origin),
            })
        }
    }
}

/// An origin as compared: trimmed, lowercased, without a trailing `/`.
fn normal_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// A header's value as a refusal shows it: at most 100 bytes.
fn shown(value: &str) -> String {
    let mut end = value.len().min(100);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_owned()
}

/// Whether a `Host` header names loopback: `localhost` or a loopback address, with or
/// without a port.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((name, "")) => name,
            Some((name, port)) if port.strip_prefix(':').is_some_and(is_port) => name,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if is_port(port) => name,
            Some(_) => return false,
            None => host,
        }
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A port: one or more digits.
fn is_port(port: &str) -> bool {
    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "localhost.:9",
            "[::1]",
            "[::1]:443",
            "127.0.0.2:80",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "10.0.0.1:80",
            "[::2]:80",
            "[::1]x",
            "localhost:80:80",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn origins_pass_only_when_allowed() {
        let access = LocalAccess::for_bind(IpAddr::V4(Ipv4Addr::LOCALHOST))
            .allow_origin("https://App.example/");
        assert_eq!(access.check(Some(b"127.0.0.1:9"), None), Ok(()));
        assert_eq!(access.check(None, Some(b"https://app.example")), Ok(()));
        assert_eq!(
            access.check(Some(b"127.0.0.1:9"), Some(b"https://evil.example")),
            Err(AccessRefusal::ForeignOrigin {
                origin: "https://evil.example".into()
            })
        );
        assert_eq!(
            access.check(Some(b"127.0.0.1:9"), Some(b"http://127.0.0.1:9")),
            Err(AccessRefusal::ForeignOrigin {
                origin: "http://127.0.0.1:9".into()
            })
        );
        assert_eq!(
            access
                .clone()
                .allow_same_origin()
                .check(Some(b"127.0.0.1:9"), Some(b"http://127.0.0.1:9")),
            Ok(())
        );
        assert_eq!(
            access.check(Some(b"evil.example:9"), None),
            Err(AccessRefusal::ForeignHost {
                host: "evil.example:9".into()
            })
        );
        let open = LocalAccess::for_bind(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        assert_eq!(open.check(Some(b"my-laptop.lan:9"), None), Ok(()));
        assert!(open.check(Some(b"my-laptop.lan:9"), Some(b"null")).is_err());
    }
}
