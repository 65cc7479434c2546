//! DNS-rebinding protection: which `Host` and `Origin` values may reach the
//! server (MCP 2025-11-25 and 2026-07-28 transports, §Security: a request
//! with an invalid `Origin` is answered `403 Forbidden`).
//!
//! - Listening on a loopback address: `Host` must name a loopback host (or
//!   the `--public-url` host), and an `Origin`, when sent, must too.
//! - Listening on any other address: the endpoint is public and read-only,
//!   so neither is checked (the seed's documented deviation).
//! - `--allowed-origins` replaces both rules: only a listed `Origin` (or
//!   none) is accepted, and `Host` is not checked.

use std::net::IpAddr;

use crate::text::trim_ows;

/// Why a `Host` is refused on a loopback listener, and the setting that
/// admits it: the client sees `403` with `Forbidden: ` and this text.
pub const HOST_REFUSED: &str = "Host not allowed: this server listens on a loopback address and answers only a loopback Host (localhost, 127.0.0.1, [::1]) or the host of its public URL; to admit this host, start it with --public-url (XMD_PUBLIC_URL) set to the URL clients use, e.g. --public-url https://xmd.example.com";

/// The rule in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginPolicy {
    /// Loopback listener: loopback names only, plus the public URL's host.
    Loopback {
        /// Host of `--public-url` (lower-case, without port), also allowed.
        public_host: String,
    },
    /// Public listener: anything.
    Any,
    /// Exactly these origins (`scheme://host[:port]`, lower-case).
    List(Vec<String>),
}

/// What the check decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Serve the request; echo this origin in CORS headers when `Some`.
    Allow(Option<String>),
    /// Answer 403.
    Forbid(&'static str),
}

impl OriginPolicy {
    /// Chooses the rule for a listener and configuration.
    pub fn new(listen: IpAddr, public_url: &str, allowed: Option<&[String]>) -> OriginPolicy {
        if let Some(list) = allowed {
            return OriginPolicy::List(
                list.iter()
                    .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                    .collect(),
            );
        }
        if listen.is_loopback() {
            let host = url_host(public_url).unwrap_or_default();
            OriginPolicy::Loopback { public_host: host }
        } else {
            OriginPolicy::Any
        }
    }

    /// Checks a request's `Host` and `Origin` values.
    pub fn check(&self, host: Option<&[u8]>, origin: Option<&[u8]>) -> Verdict {
        let origin = origin.map(|o| String::from_utf8_lossy(trim_ows(o)).into_owned());
        match self {
            OriginPolicy::Any => Verdict::Allow(origin),
            OriginPolicy::List(list) => match origin {
                None => Verdict::Allow(None),
                Some(o) => {
                    let key = o.trim_end_matches('/').to_ascii_lowercase();
                    if list.iter().any(|l| *l == key || l == "*") {
                        Verdict::Allow(Some(o))
                    } else {
                        Verdict::Forbid("Origin not allowed")
                    }
                }
            },
            OriginPolicy::Loopback { public_host } => {
                // HTTP/1.0 may omit Host (HTTP/1.1 without it is refused
                // earlier); browsers always send it.
                let host_ok = host.is_none_or(|h| {
                    let h = String::from_utf8_lossy(trim_ows(h)).to_ascii_lowercase();
                    let name = strip_port(&h);
                    is_loopback_name(name) || (!public_host.is_empty() && name == public_host)
                });
                if !host_ok {
                    return Verdict::Forbid(HOST_REFUSED);
                }
                match origin {
                    None => Verdict::Allow(None),
                    Some(o) => {
                        let ok =
                            url_host(&o).is_some_and(|h| is_loopback_name(&h) || h == *public_host);
                        if ok {
                            Verdict::Allow(Some(o))
                        } else {
                            Verdict::Forbid("Origin not allowed")
                        }
                    }
                }
            }
        }
    }
}

/// The lower-case host of `scheme://host[:port][/...]`, brackets kept for
/// IPv6 literals.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = strip_port(authority);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// `host:port` → `host`; `[::1]:80` → `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |i| &authority[..=i]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` and `[::1]`.
fn is_loopback_name(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> OriginPolicy {
        OriginPolicy::new("127.0.0.1".parse().unwrap(), "http://127.0.0.1:8080", None)
    }

    fn check(p: &OriginPolicy, host: Option<&str>, origin: Option<&str>) -> Verdict {
        p.check(host.map(str::as_bytes), origin.map(str::as_bytes))
    }

    #[test]
    fn loopback_listener_accepts_loopback_names_only() {
        let p = loopback();
        assert_eq!(
            check(&p, Some("127.0.0.1:8080"), None),
            Verdict::Allow(None)
        );
        assert_eq!(
            check(&p, Some("localhost:3000"), Some("http://localhost:6274")),
            Verdict::Allow(Some("http://localhost:6274".into()))
        );
        assert_eq!(
            check(&p, Some("[::1]:8080"), Some("http://[::1]:8080")),
            Verdict::Allow(Some("http://[::1]:8080".into()))
        );
        assert_eq!(
            check(
                &p,
                Some("evil.example.com"),
                Some("http://evil.example.com")
            ),
            Verdict::Forbid(HOST_REFUSED)
        );
        assert_eq!(
            check(&p, Some("localhost"), Some("http://attacker.example")),
            Verdict::Forbid("Origin not allowed")
        );
        assert_eq!(
            check(&p, Some("localhost"), Some("null")),
            Verdict::Forbid("Origin not allowed")
        );
        assert_eq!(check(&p, None, None), Verdict::Allow(None));
        assert_eq!(
            check(&p, Some("127.0.0.1.evil.com"), None),
            Verdict::Forbid(HOST_REFUSED)
        );
    }

    #[test]
    fn public_url_host_is_allowed_on_loopback() {
        let p = OriginPolicy::new("127.0.0.1".parse().unwrap(), "https://x.example.org", None);
        assert_eq!(
            check(&p, Some("x.example.org"), Some("https://x.example.org")),
            Verdict::Allow(Some("https://x.example.org".into()))
        );
    }

    #[test]
    fn public_listener_and_lists() {
        let p = OriginPolicy::new("0.0.0.0".parse().unwrap(), "http://0.0.0.0:8080", None);
        assert_eq!(
            check(&p, Some("anything"), Some("http://a.example")),
            Verdict::Allow(Some("http://a.example".into()))
        );
        let list = vec!["https://App.example/".to_string()];
        let p = OriginPolicy::new(
            "127.0.0.1".parse().unwrap(),
            "http://127.0.0.1:8080",
            Some(&list),
        );
        assert_eq!(
            check(&p, Some("proxy.internal"), Some("https://app.example")),
            Verdict::Allow(Some("https://app.example".into()))
        );
        assert_eq!(
            check(&p, Some("proxy.internal"), Some("https://other.example")),
            Verdict::Forbid("Origin not allowed")
        );
        assert_eq!(
            check(&p, Some("proxy.internal"), None),
            Verdict::Allow(None)
        );
    }

    #[test]
    fn url_host_parsing() {
        assert_eq!(url_host("http://LocalHost:80/x"), Some("localhost".into()));
        assert_eq!(url_host("https://u:p@h.example"), Some("h.example".into()));
        assert_eq!(url_host("http://[::1]:8080"), Some("[::1]".into()));
        assert_eq!(url_host("null"), None);
    }
}
