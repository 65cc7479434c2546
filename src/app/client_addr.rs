//! The client address of a request: the TCP peer, or, when the peer is a
//! trusted reverse proxy (`--trusted-proxies`), the address that proxy
//! reports in `X-Forwarded-For` or RFC 7239 `Forwarded`.
//!
//! The one place this is decided; the rate limits and the access log use
//! what [`TrustedProxies::client`] returns.
//!
//! Rule ("rightmost untrusted"): a header is read only when the TCP peer is
//! in a trusted range. The header's hops are walked from the right (the hop
//! the nearest proxy appended) to the left, skipping trusted addresses; the
//! first untrusted address is the client. Everything left of it could have
//! been written by the client itself and is never read. A hop that is not
//! an address (`unknown`, an obfuscated `_id`, garbage) stops the walk: the
//! client is then the last trusted hop passed (the peer if none). When every
//! hop is trusted, the client is the leftmost one. With no trusted range
//! (the default) every header is ignored.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::config::proxies::{ProxyHeader, TrustedProxies};

/// What `app` adds to the setting: reading a request's client address.
impl TrustedProxies {
    /// The client address of a request from `peer` whose proxy header
    /// values (every field line of [`Self::header`], in order) are
    /// `values`. Ignores `values` unless `peer` is trusted.
    pub fn client<'a>(&self, peer: IpAddr, values: impl Iterator<Item = &'a [u8]>) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let mut hops = Vec::new();
        for value in values {
            match self.header() {
                ProxyHeader::XForwardedFor => {
                    hops.extend(value.split(|b| *b == b',').map(xff_hop));
                }
                ProxyHeader::Forwarded => forwarded_hops(value, &mut hops),
            }
        }
        let mut last = peer;
        for hop in hops.into_iter().rev() {
            match hop {
                Some(ip) if self.trusts(ip) => last = ip,
                Some(ip) => return ip,
                None => return last,
            }
        }
        last
    }

    /// The client address of `head` from `peer`, when it differs from the
    /// peer's own address (so it came from a trusted proxy's header).
    pub fn forwarded_client(&self, peer: SocketAddr, head: &crate::http::Head) -> Option<IpAddr> {
        if !self.any() {
            return None;
        }
        let client = self.client(peer.ip(), head.headers_named(self.header().name()));
        (client != peer.ip().to_canonical()).then_some(client)
    }
}

/// One `X-Forwarded-For` element: an address, optionally bracketed (IPv6)
/// and optionally with a port (`192.0.2.1:80`, `[2001:db8::1]:80`).
fn xff_hop(raw: &[u8]) -> Option<IpAddr> {
    let s = std::str::from_utf8(crate::text::trim_ows(raw)).ok()?;
    node_addr(s)
}

/// An address as a proxy writes it: `IPv4`, `IPv4:port`, `IPv6`, `[IPv6]`
/// or `[IPv6]:port`. Anything else (`unknown`, `_hidden`, a name) is `None`.
fn node_addr(s: &str) -> Option<IpAddr> {
    if let Some(rest) = s.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        if !(after.is_empty() || port_ok(after.strip_prefix(':')?)) {
            return None;
        }
        return v6
            .parse::<Ipv6Addr>()
            .ok()
            .map(|a| IpAddr::V6(a).to_canonical());
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    let (v4, port) = s.rsplit_once(':')?;
    if !port_ok(port) {
        return None;
    }
    v4.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// RFC 7239 `node-port`: 1 to 5 digits (obfuscated ports are not ours to read).
fn port_ok(p: &str) -> bool {
    (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit())
}

/// The `for=` node of each element of one `Forwarded` field value
/// (RFC 7239 §4), in order; `None` for an element without a readable
/// address.
fn forwarded_hops(value: &[u8], out: &mut Vec<Option<IpAddr>>) {
    let Ok(value) = std::str::from_utf8(value) else {
        out.push(None);
        return;
    };
    for element in split_outside_quotes(value, ',') {
        if element.trim().is_empty() {
            continue;
        }
        let mut node = None;
        let mut bad = false;
        for pair in split_outside_quotes(element, ';') {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let Some((name, v)) = pair.split_once('=') else {
                bad = true;
                break;
            };
            if name.trim().eq_ignore_ascii_case("for") {
                if node.is_some() {
                    // A parameter appears at most once per element (§4).
                    bad = true;
                    break;
                }
                node = Some(unquote(v.trim()));
            }
        }
        out.push(match (bad, node) {
            (false, Some(Some(n))) => node_addr(&n),
            _ => None,
        });
    }
}

/// Splits at `sep` outside quoted-strings (a backslash escapes inside).
fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A `token` as is, or a `quoted-string` without its quotes and escapes;
/// `None` for an unterminated quote.
fn unquote(v: &str) -> Option<String> {
    let Some(inner) = v.strip_prefix('"') else {
        return Some(v.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn proxies(list: &str, header: ProxyHeader) -> TrustedProxies {
        TrustedProxies::parse(list, header).unwrap()
    }

    #[test]
    fn x_forwarded_for() {
        let p = proxies("127.0.0.1, 10.0.0.0/8", ProxyHeader::XForwardedFor);
        let client =
            |peer: &str, values: &[&str]| p.client(ip(peer), values.iter().map(|v| v.as_bytes()));
        // Untrusted peer: the header is never read.
        assert_eq!(client("192.0.2.9", &["203.0.113.1"]), ip("192.0.2.9"));
        // Trusted peer: the rightmost untrusted hop.
        assert_eq!(
            client("127.0.0.1", &["1.1.1.1, 203.0.113.1"]),
            ip("203.0.113.1")
        );
        assert_eq!(
            client("127.0.0.1", &["1.1.1.1, 203.0.113.1, 10.1.1.1"]),
            ip("203.0.113.1")
        );
        // Several field lines are one list.
        assert_eq!(
            client("127.0.0.1", &["1.1.1.1", "203.0.113.1"]),
            ip("203.0.113.1")
        );
        // Ports and brackets.
        assert_eq!(
            client("127.0.0.1", &["203.0.113.1:5555"]),
            ip("203.0.113.1")
        );
        assert_eq!(
            client("127.0.0.1", &["[2001:db8::7]:443"]),
            ip("2001:db8::7")
        );
        // Garbage stops the walk at the last trusted hop.
        assert_eq!(
            client("127.0.0.1", &["1.1.1.1, nonsense, 10.0.0.5"]),
            ip("10.0.0.5")
        );
        assert_eq!(client("127.0.0.1", &["unknown"]), ip("127.0.0.1"));
        // All trusted: the leftmost.
        assert_eq!(client("127.0.0.1", &["10.0.0.1, 10.0.0.2"]), ip("10.0.0.1"));
        // No header.
        assert_eq!(client("127.0.0.1", &[]), ip("127.0.0.1"));
    }

    #[test]
    fn forwarded() {
        let p = proxies("127.0.0.1", ProxyHeader::Forwarded);
        let client =
            |values: &[&str]| p.client(ip("127.0.0.1"), values.iter().map(|v| v.as_bytes()));
        // RFC 7239 §7.1's examples.
        assert_eq!(client(&["for=\"_gazonk\""]), ip("127.0.0.1"));
        assert_eq!(
            client(&["For=\"[2001:db8:cafe::17]:4711\""]),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(
            client(&["for=192.0.2.60;proto=http;by=203.0.113.43"]),
            ip("192.0.2.60")
        );
        assert_eq!(
            client(&["for=192.0.2.43, for=198.51.100.17"]),
            ip("198.51.100.17")
        );
        // A comma inside a quoted value does not split elements.
        assert_eq!(
            client(&["for=192.0.2.43;host=\"a,b\", for=198.51.100.17;by=\"x;y\""]),
            ip("198.51.100.17")
        );
        // No for= in the last element: stop at the peer.
        assert_eq!(client(&["for=192.0.2.43, proto=https"]), ip("127.0.0.1"));
        // X-Forwarded-For is not read in this mode.
        let xff = p.client(ip("127.0.0.1"), std::iter::empty());
        assert_eq!(xff, ip("127.0.0.1"));
    }

    #[test]
    fn default_trusts_nobody() {
        let p = TrustedProxies::default();
        assert!(!p.any());
        assert_eq!(
            p.client(ip("127.0.0.1"), [b"203.0.113.1".as_slice()].into_iter()),
            ip("127.0.0.1")
        );
    }
}
