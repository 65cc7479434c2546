//! HTTP/1.1 message types, head parsing (over `httparse`), body framing,
//! chunked decoding, content negotiation and response encoding.
//!
//! Nothing here touches a socket: functions take bytes or values and return
//! bytes or values (RFC 9110 semantics, RFC 9112 message syntax).

pub mod accept;
pub mod chunked;
pub mod date;
pub mod outgoing;
pub mod parse;
pub mod response;

use crate::text::trim_ows;
pub use response::{Body, Response, Trace};

/// Request method (RFC 9110 §9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `OPTIONS`
    Options,
    /// `PATCH`
    Patch,
    /// Any other token.
    Other(String),
}

impl Method {
    /// Maps a method token; unknown tokens become [`Method::Other`].
    pub fn from_token(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "OPTIONS" => Method::Options,
            "PATCH" => Method::Patch,
            other => Method::Other(other.to_string()),
        }
    }

    /// The method token as sent.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Patch => "PATCH",
            Method::Other(s) => s,
        }
    }
}

/// A byte range `start..end` inside a [`Head`]'s buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn of(buf: &[u8], part: &[u8]) -> Span {
        // `part` is a sub-slice of `buf` (httparse hands out slices of its
        // input); its offset is the difference of the two addresses.
        let start = (part.as_ptr() as usize).saturating_sub(buf.as_ptr() as usize);
        let start = start.min(buf.len());
        let end = (start + part.len()).min(buf.len());
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    fn get(self, buf: &[u8]) -> &[u8] {
        &buf[self.start as usize..self.end as usize]
    }
}

/// A request head: request line and header fields (RFC 9112 §3, §5).
///
/// The head's bytes are kept in one buffer and the target and fields are
/// ranges into it, so parsing a head costs three allocations whatever the
/// number of fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The method.
    pub method: Method,
    /// The minor version: `0` for HTTP/1.0, `1` for HTTP/1.1.
    pub minor_version: u8,
    buf: Vec<u8>,
    target: Span,
    /// (name, value) per field, in order.
    fields: Vec<(Span, Span)>,
}

impl Head {
    /// Builds a head from its parts (tests and tools; the parser fills the
    /// same structure from the wire).
    pub fn new(method: Method, target: &str, minor_version: u8, fields: &[(&str, &[u8])]) -> Head {
        let mut buf = Vec::with_capacity(
            target.len() + fields.iter().map(|(n, v)| n.len() + v.len()).sum::<usize>(),
        );
        let mut push = |bytes: &[u8]| {
            let start = buf.len() as u32;
            buf.extend_from_slice(bytes);
            Span {
                start,
                end: buf.len() as u32,
            }
        };
        let target = push(target.as_bytes());
        let fields = fields
            .iter()
            .map(|(n, v)| (push(n.as_bytes()), push(v)))
            .collect();
        Head {
            method,
            minor_version,
            buf,
            target,
            fields,
        }
    }

    /// Builds a head over `buf` (the bytes the parts were sliced from).
    fn from_parts(
        method: Method,
        minor_version: u8,
        buf: &[u8],
        target: &str,
        fields: &[httparse::Header<'_>],
    ) -> Head {
        let target = Span::of(buf, target.as_bytes());
        let fields = fields
            .iter()
            .map(|h| (Span::of(buf, h.name.as_bytes()), Span::of(buf, h.value)))
            .collect();
        Head {
            method,
            minor_version,
            buf: buf.to_vec(),
            target,
            fields,
        }
    }

    /// The request target as sent (origin-form, absolute-form or `*`).
    pub fn target(&self) -> &str {
        std::str::from_utf8(self.target.get(&self.buf)).unwrap_or("")
    }

    /// Every field as (name, value), in order. Names are ASCII tokens.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &[u8])> + '_ {
        self.fields.iter().map(|(n, v)| {
            (
                std::str::from_utf8(n.get(&self.buf)).unwrap_or(""),
                v.get(&self.buf),
            )
        })
    }

    /// How many fields the head has.
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// The first value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(n, _)| n.get(&self.buf).eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.get(&self.buf))
    }

    /// Every value of header `name` (case-insensitive), in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n.get(&self.buf).eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.get(&self.buf))
    }

    /// Whether the connection persists after this request (RFC 9112 §9.3):
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with
    /// `Connection: keep-alive`.
    pub fn keep_alive(&self) -> bool {
        let mut close = false;
        let mut keep = false;
        for value in self.headers_named("connection") {
            for token in value.split(|b| *b == b',') {
                let token = trim_ows(token);
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep = true;
                }
            }
        }
        if close {
            return false;
        }
        self.minor_version >= 1 || keep
    }

    /// The path of the target: the part before `?`, with an absolute-form
    /// target's scheme and authority removed (RFC 9112 §3.2.2).
    pub fn path(&self) -> &str {
        let mut t = self.target();
        for scheme in ["http://", "https://"] {
            if t.len() > scheme.len() && t[..scheme.len()].eq_ignore_ascii_case(scheme) {
                t = &t[scheme.len()..];
                t = t.find('/').map_or("/", |i| &t[i..]);
                break;
            }
        }
        let end = t.find(['?', '#']).unwrap_or(t.len());
        &t[..end]
    }

    /// The host every check uses (RFC 9112 §3.2): an absolute-form
    /// target's authority, else the `Host` field; `Ok(None)` without either.
    /// With an absolute-form target the `Host` field is ignored (§3.2.2).
    ///
    /// # Errors
    /// More than one `Host` field line or a `Host` value that is not a
    /// `uri-host [":" port]` (§3.2 requires a 400 for both), or an
    /// absolute-form target whose authority is empty or carries userinfo.
    pub fn authority(&self) -> Result<Option<&[u8]>, &'static str> {
        let mut hosts = self.headers_named("host");
        let host = hosts.next();
        if hosts.next().is_some() {
            return Err("more than one Host header");
        }
        if host.is_some_and(|h| !is_authority(h)) {
            return Err("the Host header is not a host[:port]");
        }
        let t = self.target();
        for scheme in ["http://", "https://"] {
            if t.len() >= scheme.len() && t[..scheme.len()].eq_ignore_ascii_case(scheme) {
                let rest = &t[scheme.len()..];
                let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                let authority = &rest[..end];
                if authority.is_empty() || !is_authority(authority.as_bytes()) {
                    return Err("the request target's authority is not a host[:port]");
                }
                return Ok(Some(authority.as_bytes()));
            }
        }
        Ok(host)
    }

    /// How many field lines named `name` (case-insensitive) the head has.
    pub fn count(&self, name: &str) -> usize {
        self.headers_named(name).count()
    }

    /// The query string of the target (after `?`, before `#`), if any.
    pub fn query(&self) -> Option<&str> {
        let t = self.target();
        let start = t.find('?')? + 1;
        let end = t[start..].find('#').map_or(t.len(), |i| start + i);
        Some(&t[start..end])
    }
}

/// Whether `value` is an `authority` without userinfo, `host [":" port]`
/// (RFC 3986 §3.2.2-3.2.3, the grammar RFC 9110 §7.2 gives `Host`): an
/// IP literal in brackets (an IPv6 address or an `IPvFuture`) or a
/// reg-name (unreserved, sub-delims and `%` with two hex digits; an IPv4
/// address is one), then optionally `:` and digits only. `127.0.0.1:abc`,
/// `a:b:c`, `[zz]`, `%zz` are not (a 400 for `Host`, RFC 9112 §3.2).
fn is_authority(value: &[u8]) -> bool {
    let (host, port) = if value.first() == Some(&b'[') {
        let Some(close) = value.iter().position(|b| *b == b']') else {
            return false;
        };
        if !is_ip_literal(&value[1..close]) {
            return false;
        }
        (None, &value[close + 1..])
    } else {
        let end = value.iter().position(|b| *b == b':').unwrap_or(value.len());
        (Some(&value[..end]), &value[end..])
    };
    let port_ok = match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    };
    port_ok && host.is_none_or(is_reg_name)
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )` (RFC 3986 §3.2.2).
fn is_reg_name(name: &[u8]) -> bool {
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        if b == b'%' {
            if !(name.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && name.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// The inside of `IP-literal`: an `IPv6address` or
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn is_ip_literal(inner: &[u8]) -> bool {
    if let Some(rest) = inner
        .strip_prefix(b"v")
        .or_else(|| inner.strip_prefix(b"V"))
    {
        let Some(dot) = rest.iter().position(|b| *b == b'.') else {
            return false;
        };
        let (version, tail) = (&rest[..dot], &rest[dot + 1..]);
        return !version.is_empty()
            && version.iter().all(u8::is_ascii_hexdigit)
            && !tail.is_empty()
            && tail
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:".contains(b));
    }
    std::str::from_utf8(inner).is_ok_and(|s| s.parse::<std::net::Ipv6Addr>().is_ok())
}

/// A complete request: head plus decoded body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Request line and headers.
    pub head: Head,
    /// The body after transfer decoding.
    pub body: Vec<u8>,
    /// The peer's address.
    pub peer: std::net::SocketAddr,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(target: &str, minor: u8, headers: &[(&str, &str)]) -> Head {
        let fields: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
        Head::new(Method::Get, target, minor, &fields)
    }

    #[test]
    fn path_strips_query_fragment_and_absolute_form() {
        assert_eq!(head("/mcp?client=x", 1, &[]).path(), "/mcp");
        assert_eq!(head("/mcp#frag", 1, &[]).path(), "/mcp");
        assert_eq!(head("http://127.0.0.1:8080/mcp?a", 1, &[]).path(), "/mcp");
        assert_eq!(head("HTTPS://example.org", 1, &[]).path(), "/");
        assert_eq!(head("/mcp?client=x#y", 1, &[]).query(), Some("client=x"));
        assert_eq!(head("/mcp", 1, &[]).query(), None);
    }

    #[test]
    fn authority_is_the_absolute_target_else_the_single_host() {
        let h = |target: &str, hosts: &[&str]| {
            let fields: Vec<(&str, &str)> = hosts.iter().map(|v| ("Host", *v)).collect();
            head(target, 1, &fields)
                .authority()
                .map(|a| a.map(<[u8]>::to_vec))
        };
        assert_eq!(
            h("/mcp", &["127.0.0.1:8080"]),
            Ok(Some(b"127.0.0.1:8080".to_vec()))
        );
        assert_eq!(h("/mcp", &[]), Ok(None));
        assert_eq!(
            h("http://evil.example/mcp", &["127.0.0.1"]),
            Ok(Some(b"evil.example".to_vec()))
        );
        assert_eq!(h("HTTPS://[::1]:9?x", &[]), Ok(Some(b"[::1]:9".to_vec())));
        assert_eq!(h("/mcp", &["a", "a"]), Err("more than one Host header"));
        assert_eq!(
            h("http://evil.example/mcp", &["a", "b"]),
            Err("more than one Host header")
        );
        for bad in ["http:///mcp", "http://u@127.0.0.1/mcp", "https://"] {
            assert!(h(bad, &["127.0.0.1"]).is_err(), "{bad}");
        }
        for bad in [
            "a b",
            "u@h",
            "h/x",
            "h?",
            "\u{7f}",
            "é",
            "127.0.0.1:abc",
            "localhost:80:80",
            "a:b:c",
            "[zz]",
            "[::1]x",
            "[::1",
            "%zz",
            "h%4",
        ] {
            assert_eq!(
                h("/", &[bad]),
                Err("the Host header is not a host[:port]"),
                "{bad}"
            );
        }
        assert_eq!(h("/", &[""]), Ok(Some(b"".to_vec())));
        assert_eq!(h("/", &["[::1]:80"]), Ok(Some(b"[::1]:80".to_vec())));
    }

    #[test]
    fn keep_alive_follows_version_and_connection_tokens() {
        assert!(head("/", 1, &[]).keep_alive());
        assert!(!head("/", 1, &[("Connection", "Close")]).keep_alive());
        assert!(!head("/", 1, &[("connection", "keep-alive, close")]).keep_alive());
        assert!(!head("/", 0, &[]).keep_alive());
        assert!(head("/", 0, &[("Connection", "Keep-Alive")]).keep_alive());
    }

    use proptest::strategy::Strategy;

    /// RFC 3986's ABNF for `host [":" port]` (§3.2.2-3.2.3) as a regex,
    /// written from the RFC's text: the oracle of `is_authority`.
    fn authority_oracle() -> regex::bytes::Regex {
        let h16 = "[0-9A-Fa-f]{1,4}";
        let dec = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])";
        let v4 = format!("{dec}\\.{dec}\\.{dec}\\.{dec}");
        let ls32 = format!("(?:{h16}:{h16}|{v4})");
        let v6 = [
            format!("(?:{h16}:){{6}}{ls32}"),
            format!("::(?:{h16}:){{5}}{ls32}"),
            format!("(?:{h16})?::(?:{h16}:){{4}}{ls32}"),
            format!("(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}"),
            format!("(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}"),
            format!("(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}"),
            format!("(?:(?:{h16}:){{0,4}}{h16})?::{ls32}"),
            format!("(?:(?:{h16}:){{0,5}}{h16})?::{h16}"),
            format!("(?:(?:{h16}:){{0,6}}{h16})?::"),
        ]
        .join("|");
        let unreserved = "A-Za-z0-9\\-._~";
        let sub_delims = "!$&'()*+,;=";
        let future = format!("[vV][0-9A-Fa-f]+\\.[{unreserved}{sub_delims}:]+");
        let reg_name = format!("(?:[{unreserved}{sub_delims}]|%[0-9A-Fa-f]{{2}})*");
        regex::bytes::Regex::new(&format!(
            "^(?:\\[(?:{v6}|{future})\\]|{reg_name})(?::[0-9]*)?$"
        ))
        .expect("oracle regex")
    }

    proptest::proptest! {
        /// Any string over the characters that matter to the grammar is an
        /// authority exactly when RFC 3986's ABNF says so.
        #[test]
        fn is_authority_follows_rfc_3986(
            parts in proptest::collection::vec(proptest::prop_oneof![
                proptest::sample::select(vec![
                    "1", "0", "255", "256", "01", "a", "F", "g", "v", "V", ":", "::", ".",
                    "[", "]", "%", "%4", "%4a", "%zz", "@", "/", "?", "#", " ", "-", "~",
                    "!", "=", "127.0.0.1", "localhost", "ffff", "1.2.3.4", "é",
                ]).prop_map(str::to_owned),
                "[0-9a-fA-F:.]{0,6}",
            ], 0..10),
            bracket in proptest::bool::ANY,
            port in proptest::option::of("[0-9a-z]{0,3}"),
        ) {
            let mut value = parts.concat();
            if bracket {
                value = format!("[{value}]");
            }
            if let Some(port) = port {
                value = format!("{value}:{port}");
            }
            proptest::prop_assert_eq!(
                is_authority(value.as_bytes()),
                authority_oracle().is_match(value.as_bytes()),
                "{:?}", value
            );
        }
    }
}
