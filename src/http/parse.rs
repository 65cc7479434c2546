//! Request head parsing (via `httparse`) and message body framing
//! (RFC 9112 §6.3).
//!
//! `try_parse_head` is incremental: `Ok(None)` means "need more bytes" and is
//! never an error. Every way a head or its framing can be refused is a
//! [`Rejection`] carrying the status to answer with; every rejection closes
//! the connection, so nothing pipelined after a refused request runs.

use super::{Head, Method};
use crate::text::trim_ows;

/// Size of the header array handed to httparse; the configured header
/// limit is clamped to it.
pub const HEADER_ARRAY_LEN: usize = 128;

/// Why a request was refused before it reached a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    /// The status to answer with (400, 408, 413, 431, 501, ...).
    pub status: u16,
    /// A short reason, sent in the response body.
    pub reason: &'static str,
}

impl Rejection {
    const fn new(status: u16, reason: &'static str) -> Rejection {
        Rejection { status, reason }
    }
}

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body (neither `Content-Length` nor `Transfer-Encoding`).
    Empty,
    /// Exactly this many bytes follow the head.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// Parses one request head from the start of `buf`.
///
/// Returns `Ok(Some((n, head)))` with `n` bytes of `buf` consumed (the body
/// starts there), or `Ok(None)` when the head is incomplete and still within
/// `max_head_bytes`.
///
/// # Errors
/// - 431 when the head is longer than `max_head_bytes` or has more than
///   `max_headers` fields (RFC 6585 §5);
/// - 400 for anything httparse refuses: bad request line, bad token, bare
///   CR, NUL, whitespace before a colon, obs-fold (RFC 9112 §5.1, §5.2);
/// - 400 for a header value that is not valid in a target or method.
pub fn try_parse_head(
    buf: &[u8],
    max_head_bytes: usize,
    max_headers: usize,
) -> Result<Option<(usize, Head)>, Rejection> {
    let mut storage = [httparse::EMPTY_HEADER; HEADER_ARRAY_LEN];
    let count = max_headers.clamp(1, HEADER_ARRAY_LEN);
    let mut req = httparse::Request::new(&mut storage[..count]);
    // Only the first `max_head_bytes` can matter: a malformed byte past the
    // cap must not turn the 431 a shorter read already got into a 400, so
    // the answer never depends on how the bytes were chunked.
    let buf = &buf[..buf.len().min(max_head_bytes)];
    match req.parse(buf) {
        Ok(httparse::Status::Partial) => {
            if buf.len() >= max_head_bytes {
                Err(Rejection::new(431, "request head too large"))
            } else {
                Ok(None)
            }
        }
        Ok(httparse::Status::Complete(n)) => {
            if n > max_head_bytes {
                return Err(Rejection::new(431, "request head too large"));
            }
            let method = Method::from_token(req.method.unwrap_or(""));
            check_target_form(&method, req.path.unwrap_or(""))?;
            let minor_version = req.version.unwrap_or(1);
            let head = Head::from_parts(
                method,
                minor_version,
                &buf[..n],
                req.path.unwrap_or(""),
                req.headers,
            );
            Ok(Some((n, head)))
        }
        Err(httparse::Error::TooManyHeaders) => Err(Rejection::new(431, "too many header fields")),
        Err(httparse::Error::Version) => other_version(buf, max_head_bytes, max_headers),
        Err(_) => Err(Rejection::new(400, "malformed request head")),
    }
}

/// A request line whose version httparse does not take (it takes
/// `HTTP/1.0` and `HTTP/1.1`): a later HTTP/1 minor version is read as
/// HTTP/1.1 (RFC 9110 §2.5: a recipient SHOULD process it as the highest
/// minor version it implements), another major version is `505` (RFC 9110
/// §15.6.6), and anything not `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3) is `400`.
/// Waits for the whole request line before it decides.
fn other_version(
    buf: &[u8],
    max_head_bytes: usize,
    max_headers: usize,
) -> Result<Option<(usize, Head)>, Rejection> {
    let Some(line_end) = buf.iter().position(|b| *b == b'\n') else {
        return if buf.len() >= max_head_bytes {
            Err(Rejection::new(431, "request head too large"))
        } else {
            Ok(None)
        };
    };
    let line = buf[..line_end]
        .strip_suffix(b"\r")
        .unwrap_or(&buf[..line_end]);
    // RFC 9112 §3: method SP request-target SP HTTP-version, nothing else.
    if line.iter().filter(|b| **b == b' ').count() != 2 {
        return Err(Rejection::new(400, "malformed request line"));
    }
    let start = line.iter().rposition(|b| *b == b' ').map_or(0, |i| i + 1);
    match &line[start..] {
        // 1.0 and 1.1 are httparse's own: refused for another reason, and
        // never patched again (the patched head is parsed once).
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', b'0' | b'1'] => {
            Err(Rejection::new(400, "malformed request head"))
        }
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
            // Read as HTTP/1.1: the same bytes with the minor digit made 1.
            let mut patched = buf.to_vec();
            patched[start + 7] = b'1';
            try_parse_head(&patched, max_head_bytes, max_headers)
        }
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Err(Rejection::new(
                505,
                "HTTP version not supported: this server speaks HTTP/1.1",
            ))
        }
        _ => Err(Rejection::new(400, "malformed HTTP version")),
    }
}

/// The request-target forms RFC 9112 §3.2 allows for `method`: origin-form
/// (`/path?query`), absolute-form (an `http` or `https` URI), `*` for
/// OPTIONS only, and any form for CONNECT (refused later with `405`); a
/// target never carries a fragment (`#`).
fn check_target_form(method: &Method, target: &str) -> Result<(), Rejection> {
    if target.contains('#') {
        return Err(Rejection::new(400, "the request target has a fragment (#)"));
    }
    let absolute = ["http://", "https://"].iter().any(|scheme| {
        target.len() > scheme.len() && target[..scheme.len()].eq_ignore_ascii_case(scheme)
    });
    let ok = target.starts_with('/')
        || absolute
        || (target == "*" && *method == Method::Options)
        || matches!(method, Method::Other(m) if m == "CONNECT");
    if ok {
        Ok(())
    } else {
        Err(Rejection::new(
            400,
            "the request target is neither origin-form (/path) nor an http(s) URI",
        ))
    }
}

/// Decides how the body of `head` is framed (RFC 9112 §6.1–§6.3).
///
/// # Errors
/// - 400 when `Content-Length` and `Transfer-Encoding` are both present,
///   when `Content-Length` values differ or are not plain decimal digits,
///   when `Transfer-Encoding` is sent in HTTP/1.0, or when its final coding
///   is not `chunked` (or `chunked` appears twice);
/// - 501 for a transfer coding other than `chunked` (RFC 9112 §6.1);
/// - 413 when the announced length exceeds `max_body_bytes`;
/// - 417 for an `Expect` other than `100-continue` (RFC 9110 §10.1.1).
pub fn body_framing(head: &Head, max_body_bytes: usize) -> Result<BodyFraming, Rejection> {
    for value in head.headers_named("expect") {
        if !trim_ows(value).eq_ignore_ascii_case(b"100-continue") {
            return Err(Rejection::new(417, "unsupported expectation"));
        }
    }
    let mut codings: Vec<&[u8]> = Vec::new();
    let mut has_te = false;
    for value in head.headers_named("transfer-encoding") {
        has_te = true;
        for token in value.split(|b| *b == b',') {
            let token = trim_ows(token);
            if !token.is_empty() {
                codings.push(token);
            }
        }
    }
    let mut length: Option<usize> = None;
    let mut has_cl = false;
    for value in head.headers_named("content-length") {
        has_cl = true;
        for token in value.split(|b| *b == b',') {
            let n = parse_decimal(trim_ows(token))
                .ok_or(Rejection::new(400, "malformed Content-Length"))?;
            match length {
                Some(prev) if prev != n => {
                    return Err(Rejection::new(400, "conflicting Content-Length values"))
                }
                _ => length = Some(n),
            }
        }
    }
    if has_te {
        if has_cl {
            return Err(Rejection::new(
                400,
                "both Content-Length and Transfer-Encoding present",
            ));
        }
        if head.minor_version == 0 {
            return Err(Rejection::new(
                400,
                "Transfer-Encoding in an HTTP/1.0 request",
            ));
        }
        let Some((last, rest)) = codings.split_last() else {
            return Err(Rejection::new(400, "empty Transfer-Encoding"));
        };
        if !last.eq_ignore_ascii_case(b"chunked") {
            return Err(Rejection::new(400, "final transfer coding is not chunked"));
        }
        if rest.iter().any(|c| c.eq_ignore_ascii_case(b"chunked")) {
            return Err(Rejection::new(400, "chunked applied more than once"));
        }
        if !rest.is_empty() {
            return Err(Rejection::new(501, "transfer coding not implemented"));
        }
        return Ok(BodyFraming::Chunked);
    }
    match length {
        Some(n) if n > max_body_bytes => Err(Rejection::new(413, "request body too large")),
        Some(0) | None => Ok(BodyFraming::Empty),
        Some(n) => Ok(BodyFraming::Length(n)),
    }
}

/// Whether the client asked for `100 Continue` before sending its body.
pub fn expects_continue(head: &Head) -> bool {
    head.minor_version >= 1
        && head
            .headers_named("expect")
            .any(|v| trim_ows(v).eq_ignore_ascii_case(b"100-continue"))
}

/// Parses `1*DIGIT` without sign, spaces or overflow.
fn parse_decimal(bytes: &[u8]) -> Option<usize> {
    if bytes.is_empty() || bytes.len() > 19 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    bytes.iter().try_fold(0usize, |acc, b| {
        acc.checked_mul(10)?.checked_add(usize::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 16 * 1024;

    fn parse(raw: &str) -> Result<Option<(usize, Head)>, Rejection> {
        try_parse_head(raw.as_bytes(), MAX, 64)
    }

    fn framing(raw: &str) -> Result<BodyFraming, Rejection> {
        let (_, head) = parse(raw).unwrap().unwrap();
        body_framing(&head, 1024)
    }

    #[test]
    fn complete_head_reports_consumed_bytes() {
        let raw = "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";
        let (n, head) = parse(raw).unwrap().unwrap();
        assert_eq!(n, raw.len() - 2);
        assert_eq!(head.method, Method::Post);
        assert_eq!(head.target(), "/mcp");
        assert_eq!(head.minor_version, 1);
        assert_eq!(head.header("content-length"), Some(&b"2"[..]));
    }

    #[test]
    fn every_prefix_of_a_head_is_partial() {
        let raw = "GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\n";
        for i in 0..raw.len() {
            assert_eq!(parse(&raw[..i]), Ok(None), "prefix {i}");
        }
        assert!(parse(raw).unwrap().is_some());
    }

    #[test]
    fn oversized_and_overfull_heads_are_431() {
        let long = format!("GET / HTTP/1.1\r\nCookie: {}\r\n\r\n", "a".repeat(MAX));
        assert_eq!(parse(&long).unwrap_err().status, 431);
        let partial = format!("GET / HTTP/1.1\r\nCookie: {}", "a".repeat(MAX));
        assert_eq!(parse(&partial).unwrap_err().status, 431);
        let mut many = String::from("GET / HTTP/1.1\r\n");
        for i in 0..150 {
            many.push_str(&format!("X-Pad-{i}: v\r\n"));
        }
        many.push_str("\r\n");
        assert_eq!(parse(&many).unwrap_err().status, 431);
    }

    #[test]
    fn malformed_heads_are_400() {
        for raw in [
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n",
            "G@T / HTTP/1.1\r\n\r\n",
            "\u{1}\u{2}\r\n\r\n",
            "GET / HTTP/1.12\r\n\r\n",
            // Not three tokens, or the version httparse refused is not the
            // last one: refused, never patched again (a refused line ending
            // in `HTTP/1.1` was patched to itself, forever).
            "GET / HTTP/1.1x HTTP/1.2\r\n\r\n",
            "GET / HTTP/1.1x HTTP/1.1\r\n\r\n",
            "GET  / HTTP/1.2\r\n\r\n",
            "GET HTTP/1.2\r\n\r\n",
            "GET / x HTTP/1.1\r\n\r\n",
            "GET / HTTP/1\r\n\r\n",
            "GET / http/1.1\r\n\r\n",
            "GET / FTP/1.1\r\n\r\n",
            // RFC 9112 §3.2: no fragment, no relative target, `*` only
            // for OPTIONS, no other scheme.
            "GET /healthz#x HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET healthz HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET ftp://a/x HTTP/1.1\r\nHost: a\r\n\r\n",
        ] {
            assert_eq!(parse(raw).unwrap_err().status, 400, "{raw:?}");
        }
    }

    /// RFC 9110 §2.5: a later HTTP/1 minor version is read as HTTP/1.1;
    /// §15.6.6: another major version is 505. Decided once the request
    /// line is whole, however the bytes arrive.
    #[test]
    fn other_versions() {
        for raw in [
            "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.9\nHost: a\n\n",
        ] {
            let (n, head) = parse(raw).unwrap().unwrap();
            assert_eq!((n, head.minor_version, head.path()), (raw.len(), 1, "/"));
            assert_eq!(head.header("host"), Some(&b"a"[..]));
            for cut in 1..raw.len() {
                assert_eq!(parse(&raw[..cut]).map(|r| r.is_none()), Ok(true), "{cut}");
            }
        }
        for raw in [
            "GET / HTTP/2.0\r\n\r\n",
            "GET / HTTP/9.9\r\n\r\n",
            "GET / HTTP/0.9\r\n\r\n",
        ] {
            assert_eq!(parse(raw).unwrap_err().status, 505, "{raw:?}");
        }
        // Allowed forms.
        for raw in [
            "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET http://a/x?y HTTP/1.1\r\nHost: a\r\n\r\n",
            "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n",
        ] {
            assert!(parse(raw).unwrap().is_some(), "{raw:?}");
        }
    }

    #[test]
    fn content_length_rules() {
        let base = "POST / HTTP/1.1\r\n";
        assert_eq!(framing(&format!("{base}\r\n")), Ok(BodyFraming::Empty));
        assert_eq!(
            framing(&format!("{base}Content-Length: 0\r\n\r\n")),
            Ok(BodyFraming::Empty)
        );
        assert_eq!(
            framing(&format!("{base}Content-Length: 58\r\n\r\n")),
            Ok(BodyFraming::Length(58))
        );
        assert_eq!(
            framing(&format!(
                "{base}Content-Length: 5\r\nContent-Length: 5\r\n\r\n"
            )),
            Ok(BodyFraming::Length(5))
        );
        assert_eq!(
            framing(&format!("{base}Content-Length: 5, 5\r\n\r\n")),
            Ok(BodyFraming::Length(5))
        );
        for bad in [
            "5\r\nContent-Length: 6",
            "+5",
            "-1",
            "5 5",
            "0x10",
            "",
            "99999999999999999999",
        ] {
            let raw = format!("{base}Content-Length: {bad}\r\n\r\n");
            assert_eq!(framing(&raw).unwrap_err().status, 400, "{bad}");
        }
        assert_eq!(
            framing(&format!("{base}Content-Length: 1025\r\n\r\n"))
                .unwrap_err()
                .status,
            413
        );
    }

    #[test]
    fn transfer_encoding_rules() {
        let base = "POST / HTTP/1.1\r\n";
        assert_eq!(
            framing(&format!("{base}Transfer-Encoding: chunked\r\n\r\n")),
            Ok(BodyFraming::Chunked)
        );
        assert_eq!(
            framing(&format!("{base}Transfer-Encoding:  Chunked \r\n\r\n")),
            Ok(BodyFraming::Chunked)
        );
        let cases = [
            ("Transfer-Encoding: chunked\r\nContent-Length: 5", 400),
            ("Transfer-Encoding: gzip", 400),
            ("Transfer-Encoding: chunked, identity", 400),
            (
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
                400,
            ),
            ("Transfer-Encoding: gzip, chunked", 501),
            ("Transfer-Encoding: ", 400),
            ("Expect: something-else", 417),
        ];
        for (line, status) in cases {
            let raw = format!("{base}{line}\r\n\r\n");
            assert_eq!(framing(&raw).unwrap_err().status, status, "{line}");
        }
        let old = "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(framing(old).unwrap_err().status, 400);
    }

    #[test]
    fn expect_continue_is_recognised_in_http11_only() {
        let (_, h) = parse("POST / HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(expects_continue(&h));
        let (_, h) = parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!expects_continue(&h));
    }
}
