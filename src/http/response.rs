//! Responses and their encoding (RFC 9112 §4, §6).
//!
//! `encode` always writes a framing the peer can rely on: `Content-Length`
//! on every response that may carry content (even for `HEAD`, where the
//! body bytes are left out), `Connection: close` whenever the server will
//! close, and a `Date` (RFC 9110 §6.6.1).

use std::borrow::Cow;
use std::sync::Arc;

use super::outgoing::Outgoing;

/// Response content, without copying static or shared bytes until encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// No content.
    Empty,
    /// Bytes compiled into the binary.
    Static(&'static [u8]),
    /// Bytes built once at start-up and shared between threads.
    Shared(Arc<[u8]>),
    /// Bytes built for this response.
    Owned(Vec<u8>),
    /// A small owned prefix, a large shared middle and a static suffix:
    /// the shape of a pre-serialized JSON-RPC result with its id spliced
    /// in. The middle is written by reference, never copied.
    Spliced {
        /// Bytes before the shared part.
        prefix: Vec<u8>,
        /// The shared part.
        shared: Arc<[u8]>,
        /// Bytes after it.
        suffix: &'static [u8],
    },
}

impl Body {
    /// Content length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::Static(b) => b.len(),
            Body::Shared(b) => b.len(),
            Body::Owned(b) => b.len(),
            Body::Spliced {
                prefix,
                shared,
                suffix,
            } => prefix.len() + shared.len() + suffix.len(),
        }
    }

    /// Whether there is no content.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The content, copied into one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Outgoing::new();
        self.push_into(&mut out);
        out.to_vec()
    }

    /// Queues the content without copying large shared parts.
    pub fn push_into(&self, out: &mut Outgoing) {
        match self {
            Body::Empty => {}
            Body::Static(b) => out.push_static(b),
            Body::Shared(b) => out.push_shared(b),
            Body::Owned(b) => out.push_bytes(b),
            Body::Spliced {
                prefix,
                shared,
                suffix,
            } => {
                out.push_bytes(prefix);
                out.push_shared(shared);
                out.push_static(suffix);
            }
        }
    }
}

/// What the layers above HTTP learned about a request, for the access log
/// and metrics. Never encoded on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Index into [`crate::metrics::ROUTES`].
    pub route: usize,
    /// The JSON-RPC method, when the body had one.
    pub rpc_method: Option<Box<str>>,
    /// The tool of a `tools/call`.
    pub tool: Option<&'static str>,
    /// How long the tool ran, in milliseconds (upstream time included).
    pub tool_ms: Option<u64>,
    /// The tool result's cache status (`hit`, `miss`, `bypass`).
    pub cache: Option<&'static str>,
    /// The client address a trusted proxy reported, when it differs from
    /// the TCP peer (`--trusted-proxies`).
    pub client: Option<std::net::IpAddr>,
    /// Why a tool call failed: its error code and cause, e.g.
    /// `fxtwitter_unreachable cause=dns`.
    pub error: Option<Box<str>>,
    /// A result served by the post fallback after FxTwitter failed:
    /// the provider and FxTwitter's failure, e.g.
    /// `syndication after=upstream_status_500`.
    pub fallback: Option<Box<str>>,
}

/// A response ready to encode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header fields other than `Content-Length`, `Connection` and `Date`,
    /// which `encode` writes itself.
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The content.
    pub body: Body,
    /// Close the connection after this response.
    pub close: bool,
    /// Log and metrics details (not sent).
    pub trace: Trace,
}

impl Response {
    /// An empty response with `status`.
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Empty,
            close: false,
            trace: Trace::default(),
        }
    }

    /// A response with a content type and body.
    pub fn with_body(status: u16, content_type: &'static str, body: Body) -> Response {
        let mut r = Response::new(status);
        r.headers
            .push(("Content-Type", Cow::Borrowed(content_type)));
        r.body = body;
        r
    }

    /// Adds a header field.
    pub fn header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// Marks the connection for closing after this response.
    pub fn closing(mut self) -> Response {
        self.close = true;
        self
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    /// Appends the encoded response to `out`.
    ///
    /// `head_only` leaves the body bytes out (a `HEAD` request);
    /// `keep_alive` false writes `Connection: close`; `http10` with
    /// keep-alive writes `Connection: keep-alive` (RFC 9112 §9.3).
    pub fn encode(
        &self,
        head_only: bool,
        keep_alive: bool,
        http10: bool,
        date: &str,
        queue: &mut Outgoing,
    ) {
        let body_len = self.body.len();
        let mut out = Vec::with_capacity(160 + self.headers.len() * 48);
        out.extend_from_slice(b"HTTP/1.1 ");
        crate::text::push_u64(&mut out, u64::from(self.status));
        out.push(b' ');
        out.extend_from_slice(reason_phrase(self.status).as_bytes());
        out.extend_from_slice(b"\r\nDate: ");
        out.extend_from_slice(date.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        let no_content = self.status < 200 || self.status == 204 || self.status == 304;
        if !no_content {
            out.extend_from_slice(b"Content-Length: ");
            crate::text::push_u64(&mut out, body_len as u64);
            out.extend_from_slice(b"\r\n");
        }
        if !keep_alive || self.close {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if http10 {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
        out.extend_from_slice(b"\r\n");
        queue.push_owned(out);
        if !head_only && !no_content {
            self.body.push_into(queue);
        }
    }
}

/// The reason phrase for a status code (RFC 9110 §15).
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

    fn encoded(r: &Response, head_only: bool, keep_alive: bool, http10: bool) -> String {
        let mut out = Outgoing::new();
        r.encode(head_only, keep_alive, http10, DATE, &mut out);
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn encodes_body_with_length() {
        let r = Response::with_body(200, "application/json", Body::Static(b"{}"));
        assert_eq!(
            encoded(&r, false, true, false),
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
    }

    #[test]
    fn head_keeps_length_but_drops_body() {
        let r = Response::with_body(200, "text/plain", Body::Owned(b"hello".to_vec()));
        assert_eq!(
            encoded(&r, true, false, false),
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn accepted_has_zero_length_and_no_type() {
        assert_eq!(
            encoded(&Response::new(202), false, true, true),
            "HTTP/1.1 202 Accepted\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
        );
        assert_eq!(
            encoded(&Response::new(204), false, true, false),
            "HTTP/1.1 204 No Content\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"
        );
    }
}
