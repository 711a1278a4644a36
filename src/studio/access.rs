//! Who may use the studio: its own user, not the web pages they have open.
//!
//! - Every request's `Host` and `Origin` are checked first
//!   ([`LocalAccess`]): on a loopback bind, `Host` must be a loopback name or address (DNS
//!   rebinding reads nothing); an `Origin` must be the studio's own (`http://` + the
//!   request's `Host`) or one given with `--allow-origin`. Refused: HTTP 403.
//! - Writing (the `/api/live` feed) needs the studio's token, made fresh at each start and
//!   printed with its address: `Authorization: Bearer TOKEN`, or `?token=TOKEN`. On a bind
//!   that is not loopback, every request needs it; the page gets it once from its address
//!   (`/?token=TOKEN`) and keeps it in a cookie for its own requests. Missing or wrong:
//!   HTTP 401.
//!
//! The token is a secret: it is never logged, and `Debug` does not show it.

use std::fmt;
use std::net::IpAddr;

use hyper::HeaderMap;
use hyper::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use reel_tape_server::{AccessRefusal, LocalAccess};

/// The cookie the page keeps the token in, on a bind that is not loopback.
pub const TOKEN_COOKIE: &str = "reel_studio_token";

/// The query parameter that may carry the token.
pub const TOKEN_PARAM: &str = "token";

/// A studio's access rules and token.
#[derive(Clone)]
pub struct StudioAccess {
    access: LocalAccess,
    token: String,
}

impl fmt::Debug for StudioAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StudioAccess")
            .field("access", &self.access)
            .field("token", &"[REDACTED]")
            .finish()
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudioRefusal {
    /// A foreign `Host` or `Origin` (HTTP 403).
    #[error("{0}")]
    Foreign(#[from] AccessRefusal),
    /// No token, or not this studio's (HTTP 401).
    #[error(
        "{what} needs this studio's token (printed when it started): Authorization: Bearer TOKEN or ?token=TOKEN"
    )]
    NoToken {
        /// What was asked for: `writing a live feed`, `this studio (not on loopback)`.
        what: &'static str,
    },
}

impl StudioRefusal {
    /// The HTTP status to answer.
    pub fn status(&self) -> u16 {
        match self {
            StudioRefusal::Foreign(_) => 403,
            StudioRefusal::NoToken { .. } => 401,
        }
    }
}

/// What a request shows of itself to the check.
#[derive(Debug, Default, Clone, Copy)]
pub struct Presented<'a> {
    /// The `Host` header.
    pub host: Option<&'a [u8]>,
    /// The `Origin` header.
    pub origin: Option<&'a [u8]>,
    /// The `Authorization` header.
    pub authorization: Option<&'a [u8]>,
    /// The `Cookie` header.
    pub cookie: Option<&'a [u8]>,
    /// The request's query (after `?`).
    pub query: Option<&'a str>,
}

impl<'a> Presented<'a> {
    /// What a request head shows: the first `Host`, `Origin`, `Authorization` and `Cookie`
    /// of `headers` (as the head carries them, not decoded), and `query`, the part of the
    /// request target after `?`.
    pub fn from_head(headers: &'a HeaderMap, query: Option<&'a str>) -> Presented<'a> {
        let header = |name| headers.get(name).map(|value| value.as_bytes());
        Presented {
            host: header(HOST),
            origin: header(ORIGIN),
            authorization: header(AUTHORIZATION),
            cookie: header(COOKIE),
            query,
        }
    }
}

impl StudioAccess {
    /// The rules of a studio bound to `ip`, with `token`, allowing pages of `origins`
    /// besides its own.
    pub fn new(ip: IpAddr, token: String, origins: &[String]) -> StudioAccess {
        let access = origins.iter().fold(
            LocalAccess::for_bind(ip).allow_same_origin(),
            |access, origin| access.allow_origin(origin),
        );
        StudioAccess { access, token }
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether every request needs the token (a bind that is not loopback).
    pub fn token_for_everything(&self) -> bool {
        !self.access.is_loopback()
    }

    /// Checks a request; `writes` when it writes (the live feed). `Ok(true)` when the token
    /// came in the query of a request that needs it: the answer may set the cookie.
    pub fn check(&self, request: &Presented<'_>, writes: bool) -> Result<bool, StudioRefusal> {
        self.access.check(request.host, request.origin)?;
        if !writes && !self.token_for_everything() {
            return Ok(false);
        }
        let what = if writes {
            "writing a live feed"
        } else {
            "this studio (not on loopback)"
        };
        let by_header = request
            .authorization
            .and_then(|value| std::str::from_utf8(value).ok())
            .and_then(|value| value.trim().strip_prefix("Bearer "))
            .is_some_and(|token| self.is(token.trim()));
        let by_cookie = request
            .cookie
            .and_then(|value| std::str::from_utf8(value).ok())
            .is_some_and(|cookies| {
                cookies
                    .split(';')
                    .filter_map(|pair| pair.trim().split_once('='))
                    .any(|(name, value)| name == TOKEN_COOKIE && self.is(value))
            });
        let by_query = request.query.is_some_and(|query| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .any(|(name, value)| {
                    name == TOKEN_PARAM
                        && self.is(&String::from_utf8_lossy(&reel_protocol::percent_decode(
                            value,
                        )))
                })
        });
        if by_header || by_cookie || by_query {
            Ok(by_query && !by_cookie)
        } else {
            Err(StudioRefusal::NoToken { what })
        }
    }

    /// Whether `presented` is the token, compared in time that does not depend on where
    /// they differ.
    fn is(&self, presented: &str) -> bool {
        let (a, b) = (presented.as_bytes(), self.token.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// A fresh token: 32 random bytes from the operating system, as 64 hex digits.
pub fn fresh_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    fill_random(&mut bytes)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(unix)]
fn fill_random(bytes: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

#[cfg(not(unix))]
fn fill_random(bytes: &mut [u8]) -> std::io::Result<()> {
    // The standard library's hasher keys come from the operating system's generator.
    use std::hash::{BuildHasher, Hasher};
    for chunk in bytes.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(chunk.as_ptr() as usize);
        let value = hasher.finish().to_le_bytes();
        chunk.copy_from_slice(&value[..chunk.len()]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn writes_need_the_token_and_reads_need_it_off_loopback() {
        let loopback = StudioAccess::new(IpAddr::V4(Ipv4Addr::LOCALHOST), "t0k".into(), &[]);
        let host = Presented {
            host: Some(b"127.0.0.1:7878"),
            ..Presented::default()
        };
        assert_eq!(loopback.check(&host, false), Ok(false));
        assert_eq!(
            loopback.check(&host, true),
            Err(StudioRefusal::NoToken {
                what: "writing a live feed"
            })
        );
        let bearer = Presented {
            authorization: Some(b"Bearer t0k"),
            ..host
        };
        assert_eq!(loopback.check(&bearer, true), Ok(false));
        let wrong = Presented {
            authorization: Some(b"Bearer t0K"),
            ..host
        };
        assert!(loopback.check(&wrong, true).is_err());
        let own_page = Presented {
            origin: Some(b"http://127.0.0.1:7878"),
            ..host
        };
        assert_eq!(loopback.check(&own_page, false), Ok(false));

        let open = StudioAccess::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), "t0k".into(), &[]);
        let lan = Presented {
            host: Some(b"laptop.lan:7878"),
            ..Presented::default()
        };
        assert!(open.check(&lan, false).is_err());
        let link = Presented {
            query: Some("token=t0k"),
            ..lan
        };
        assert_eq!(open.check(&link, false), Ok(true));
        let cookie = Presented {
            cookie: Some(b"a=b; reel_studio_token=t0k"),
            ..lan
        };
        assert_eq!(open.check(&cookie, false), Ok(false));
        assert!(!format!("{open:?}").contains("t0k"));
        assert_eq!(fresh_token().unwrap().len(), 64);
    }

    #[test]
    fn a_head_presents_the_first_of_each_header_and_the_query() {
        let mut headers = HeaderMap::new();
        headers.append(HOST, "127.0.0.1:7878".parse().unwrap());
        headers.append(HOST, "evil.example".parse().unwrap());
        headers.append(COOKIE, "reel_studio_token=t0k".parse().unwrap());
        headers.append("authorization", "Bearer t0k".parse().unwrap());
        let presented = Presented::from_head(&headers, Some("token=x"));
        assert_eq!(presented.host, Some(&b"127.0.0.1:7878"[..]));
        assert_eq!(presented.origin, None);
        assert_eq!(presented.authorization, Some(&b"Bearer t0k"[..]));
        assert_eq!(presented.cookie, Some(&b"reel_studio_token=t0k"[..]));
        assert_eq!(presented.query, Some("token=x"));
    }
}
