//! Raw HTTP/1.1 exchanges over `std::net::TcpStream`: the probe must send
//! bytes no well-behaved client would (duplicate `Content-Length`, bare CR,
//! header names in odd case) and see the status, every header and the body
//! as the server wrote them. Response bodies are delimited by xmd's own
//! chunked decoder ([`crate::http::chunked`]) or `Content-Length`, or read
//! to the close; `text/event-stream` bodies are decoded with the client's
//! SSE decoder ([`crate::client::sse`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::sse::SseDecoder;
use crate::http::chunked::ChunkedDecoder;

/// Most bytes of a response the probe reads: 4 MiB. A longer body is cut
/// there and the exchange notes it (`truncated`); nothing a check looks at
/// needs more.
pub const MAX_READ_BYTES: usize = 4 * 1024 * 1024;

/// Most header fields read from one response head: 128 (httparse's
/// array). More makes the exchange fail with "response head too large".
pub const MAX_RESPONSE_HEADERS: usize = 128;

/// Characters of a body kept as evidence: 2,000.
pub const EVIDENCE_BODY_CHARS: usize = 2000;

/// Bytes of a request kept as evidence: 4,000 (a hostile payload of
/// megabytes is kept as its first 4,000 bytes and its length).
pub const EVIDENCE_REQUEST_BYTES: usize = 4000;

/// Headers whose values evidence never shows.
const REDACTED: [&str; 4] = [
    "authorization",
    "cookie",
    "proxy-authorization",
    "mcp-session-id",
];

/// Where the probe connects.
#[derive(Debug, Clone)]
pub struct Target {
    /// `http` or `https`.
    pub scheme: String,
    /// Host as written (no brackets for IPv6).
    pub host: String,
    /// Port.
    pub port: u16,
    /// Path and query (what goes on the request line).
    pub target: String,
    /// The `Host` header value.
    pub authority: String,
}

impl Target {
    /// Parses an `http://` URL (userinfo is dropped).
    ///
    /// # Errors
    /// A scheme other than http, no host, or a bad port.
    pub fn parse(url: &str) -> Result<Target, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("not a URL: {url}"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" {
            return Err(format!(
                "{scheme}:// is not supported: the probe writes raw HTTP/1.1 bytes, so it needs http:// (probe a TLS server through a local terminator)"
            ));
        }
        let (auth, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let auth = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
        let path = path.split('#').next().unwrap_or("/");
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        let (host, port) = if let Some(r) = auth.strip_prefix('[') {
            let (h, p) = r.split_once(']').ok_or("bad IPv6 host")?;
            (h.to_string(), p.strip_prefix(':').unwrap_or(""))
        } else {
            match auth.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), p),
                None => (auth.to_string(), ""),
            }
        };
        if host.is_empty() {
            return Err(format!("no host in {url}"));
        }
        let port = if port.is_empty() {
            80
        } else {
            port.parse().map_err(|_| format!("bad port in {url}"))?
        };
        Ok(Target {
            scheme,
            authority: auth.to_string(),
            host,
            port,
            target: path,
        })
    }

    /// The URL as reported: no userinfo, no query, no fragment.
    pub fn redacted_url(&self) -> String {
        let path = self.target.split('?').next().unwrap_or("/");
        format!("{}://{}{}", self.scheme, self.authority, path)
    }

    /// Whether the host is a loopback address or `localhost`.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    fn addr(&self) -> Result<SocketAddr, String> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", self.host))?
            .next()
            .ok_or_else(|| format!("no address for {}", self.host))
    }
}

/// One response as read off the wire.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// Status code (the final one; `100 Continue` heads are listed in `interim`).
    pub status: u16,
    /// Interim (1xx) statuses seen before it.
    pub interim: Vec<u16>,
    /// Header fields in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
    /// The server closed the connection after this response.
    pub closed: bool,
    /// The body was cut at [`MAX_READ_BYTES`].
    pub truncated: bool,
}

impl Response {
    /// First header value named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type`, lowercased, parameters dropped.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// Whether the body is an event stream.
    pub fn is_sse(&self) -> bool {
        self.media_type() == "text/event-stream"
    }

    /// The JSON-RPC messages in the body: the JSON value itself, or every
    /// SSE event's data parsed as JSON (events that are not JSON are left out).
    pub fn messages(&self) -> Vec<Value> {
        if self.is_sse() {
            let mut d = SseDecoder::new();
            let mut out = Vec::new();
            if let Ok(events) = d.feed(&self.body) {
                for e in events {
                    if let Ok(v) = serde_json::from_str::<Value>(&e.data) {
                        out.push(v);
                    }
                }
            }
            out
        } else {
            serde_json::from_slice::<Value>(&self.body)
                .map(|v| vec![v])
                .unwrap_or_default()
        }
    }

    /// The JSON-RPC response in the body: the last message carrying
    /// `result` or `error` (an SSE stream may carry notifications first).
    pub fn rpc(&self) -> Option<Value> {
        self.messages()
            .into_iter()
            .rev()
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
    }

    /// `error.code` of the JSON-RPC response, if any.
    pub fn error_code(&self) -> Option<i64> {
        self.rpc()?.pointer("/error/code")?.as_i64()
    }

    /// The `result` object of the JSON-RPC response, if any.
    pub fn result(&self) -> Option<Value> {
        self.rpc()?.get("result").cloned()
    }
}

/// One exchange, kept as evidence.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// What was sent (redacted, cut at [`EVIDENCE_REQUEST_BYTES`]).
    pub request: String,
    /// Length of what was sent, in bytes.
    pub request_len: usize,
    /// The response, if one was read.
    pub response: Option<Response>,
    /// Why no response was read (connect, timeout, closed).
    pub error: Option<String>,
    /// Milliseconds from the first byte sent to the last byte read.
    pub elapsed_ms: u64,
}

impl Exchange {
    /// The status, if a response came.
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }
}

/// Redacts credential and session header values in raw request bytes.
pub fn redact(raw: &[u8]) -> String {
    let cut = &raw[..raw.len().min(EVIDENCE_REQUEST_BYTES)];
    let text = String::from_utf8_lossy(cut);
    let mut out = String::with_capacity(text.len());
    let mut in_head = true;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i == 0 {
            // The request line: a query may carry a token, like userinfo.
            if let Some((before, after)) = line.split_once('?') {
                let rest = after.find(' ').map_or("", |j| &after[j..]);
                out.push_str(before);
                out.push_str("?<redacted>");
                out.push_str(rest);
                continue;
            }
        }
        if in_head {
            if line == "\r\n" || line == "\n" {
                in_head = false;
            } else if let Some((name, _)) = line.split_once(':') {
                if REDACTED.contains(&name.trim().to_ascii_lowercase().as_str()) {
                    out.push_str(name);
                    out.push_str(": <redacted>");
                    out.push_str(if line.ends_with("\r\n") { "\r\n" } else { "\n" });
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    if raw.len() > cut.len() {
        out.push_str(&format!("… ({} bytes in all)", raw.len()));
    }
    out
}

/// An open connection to the target.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    eof: bool,
    timeout: Duration,
}

impl Conn {
    /// Connects with `timeout` for the connect and every read and write.
    ///
    /// # Errors
    /// Resolution or connection failure.
    pub fn open(target: &Target, timeout: Duration) -> Result<Conn, String> {
        let addr = target.addr()?;
        let stream = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| format!("connect {addr}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(timeout));
        let _ = stream.set_write_timeout(Some(timeout));
        Ok(Conn {
            stream,
            buf: Vec::new(),
            eof: false,
            timeout,
        })
    }

    /// Writes bytes.
    ///
    /// # Errors
    /// The write failed (the peer closed, or the timeout passed).
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stream
            .write_all(bytes)
            .map_err(|e| format!("write: {e}"))
    }

    /// Sets the read timeout (e.g. a short wait for bytes that should not come).
    pub fn set_read_timeout(&mut self, t: Duration) {
        let _ = self.stream.set_read_timeout(Some(t));
    }

    /// Restores the read timeout to the connection's.
    pub fn reset_read_timeout(&mut self) {
        let _ = self.stream.set_read_timeout(Some(self.timeout));
    }

    fn fill(&mut self) -> Result<usize, String> {
        if self.eof {
            return Ok(0);
        }
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => {
                self.eof = true;
                Ok(0)
            }
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                self.eof = true;
                Ok(0)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err("timeout".into())
            }
            Err(e) => Err(format!("read: {e}")),
        }
    }

    /// Whether the peer has closed (reads EOF within `wait`) with no more bytes.
    pub fn closed_within(&mut self, wait: Duration) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        self.set_read_timeout(wait);
        let r = self.fill();
        self.reset_read_timeout();
        matches!(r, Ok(0))
    }

    /// Bytes that arrive within `wait` (after a response, there should be none).
    pub fn stray_bytes(&mut self, wait: Duration) -> usize {
        if !self.buf.is_empty() {
            return self.buf.len();
        }
        self.set_read_timeout(wait);
        let _ = self.fill();
        self.reset_read_timeout();
        self.buf.len()
    }

    /// Reads one response; `head_only` for a response to HEAD.
    ///
    /// # Errors
    /// Closed before a full head, timeout, or a malformed head.
    pub fn read_response(&mut self, head_only: bool) -> Result<Response, String> {
        let mut interim = Vec::new();
        loop {
            let (status, headers, used) = loop {
                let mut hs = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
                let mut r = httparse::Response::new(&mut hs);
                match r.parse(&self.buf) {
                    Ok(httparse::Status::Complete(n)) => {
                        let hv = r
                            .headers
                            .iter()
                            .map(|h| {
                                (
                                    h.name.to_string(),
                                    String::from_utf8_lossy(h.value).into_owned(),
                                )
                            })
                            .collect::<Vec<_>>();
                        break (r.code.unwrap_or(0), hv, n);
                    }
                    Ok(httparse::Status::Partial) => {
                        if self.fill()? == 0 {
                            return Err(if self.buf.is_empty() {
                                "connection closed without a response".into()
                            } else {
                                "connection closed inside the response head".into()
                            });
                        }
                    }
                    Err(e) => return Err(format!("malformed response head: {e}")),
                }
            };
            self.buf.drain(..used);
            if (100..200).contains(&status) && status != 101 {
                interim.push(status);
                continue;
            }
            let mut resp = Response {
                status,
                interim,
                headers,
                ..Response::default()
            };
            let no_body = head_only || status == 204 || status == 304;
            if !no_body {
                self.read_body(&mut resp)?;
            }
            let conn_close = resp
                .header("connection")
                .is_some_and(|v| v.to_ascii_lowercase().contains("close"));
            resp.closed = resp.closed || conn_close || self.eof && self.buf.is_empty();
            return Ok(resp);
        }
    }

    fn read_body(&mut self, resp: &mut Response) -> Result<(), String> {
        let te = resp
            .header("transfer-encoding")
            .map(|v| v.to_ascii_lowercase());
        if te.as_deref().is_some_and(|t| t.contains("chunked")) {
            let mut dec = ChunkedDecoder::new(MAX_READ_BYTES);
            loop {
                match dec.feed(&self.buf) {
                    Ok(n) => {
                        self.buf.drain(..n);
                    }
                    Err(r) if r.status == 413 => {
                        resp.truncated = true;
                        resp.closed = true;
                        return Ok(());
                    }
                    Err(r) => return Err(format!("bad chunked response body: {}", r.reason)),
                }
                if dec.is_done() {
                    resp.body = dec.into_body();
                    return Ok(());
                }
                if self.fill()? == 0 {
                    resp.closed = true;
                    return Err("connection closed inside a chunked body".into());
                }
            }
        }
        if let Some(cl) = resp.header("content-length") {
            let n: usize = cl
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length in response: {cl}"))?;
            let want = n.min(MAX_READ_BYTES);
            while self.buf.len() < want {
                if self.fill()? == 0 {
                    resp.closed = true;
                    return Err(format!(
                        "connection closed after {} of {n} body bytes",
                        self.buf.len()
                    ));
                }
            }
            resp.body = self.buf.drain(..want).collect();
            resp.truncated = n > want;
            return Ok(());
        }
        // Read to the close.
        loop {
            if self.buf.len() >= MAX_READ_BYTES {
                resp.truncated = true;
                break;
            }
            match self.fill() {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e == "timeout" && resp.is_sse() => {
                    resp.body = std::mem::take(&mut self.buf);
                    return Err("the event stream did not end within the timeout".into());
                }
                Err(e) => return Err(e),
            }
        }
        resp.body = std::mem::take(&mut self.buf);
        resp.closed = true;
        Ok(())
    }
}

/// Sends `raw` on a new connection and reads one response.
pub fn exchange(target: &Target, raw: &[u8], timeout: Duration, head_only: bool) -> Exchange {
    let start = Instant::now();
    let mut ex = Exchange {
        request: redact(raw),
        request_len: raw.len(),
        ..Exchange::default()
    };
    let res = Conn::open(target, timeout).and_then(|mut c| {
        c.send(raw)?;
        c.read_response(head_only)
    });
    match res {
        Ok(r) => ex.response = Some(r),
        Err(e) => ex.error = Some(e),
    }
    ex.elapsed_ms = start.elapsed().as_millis() as u64;
    ex
}

/// Builds a request: request line, headers in order, `Content-Length` when
/// there is a body and none was given, then the body.
pub fn build(method: &str, target: &str, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\n").into_bytes();
    let mut has_cl = false;
    for (n, v) in headers {
        if n.eq_ignore_ascii_case("content-length") || n.eq_ignore_ascii_case("transfer-encoding") {
            has_cl = true;
        }
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !has_cl && (!body.is_empty() || method == "POST") {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// A body excerpt for evidence: UTF-8 (lossy), cut at [`EVIDENCE_BODY_CHARS`].
pub fn excerpt(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    if s.chars().count() > EVIDENCE_BODY_CHARS {
        let mut c: String = s.chars().take(EVIDENCE_BODY_CHARS).collect();
        c.push('…');
        c
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_parse_strips_userinfo_and_query() {
        let t = Target::parse("http://u:p@127.0.0.1:8080/mcp?token=x#f").unwrap();
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.port, 8080);
        assert_eq!(t.target, "/mcp?token=x");
        assert_eq!(t.authority, "127.0.0.1:8080");
        assert_eq!(t.redacted_url(), "http://127.0.0.1:8080/mcp");
        assert!(t.is_loopback());
        let t = Target::parse("http://[::1]/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 80));
        assert!(Target::parse("https://a/").is_err());
    }

    #[test]
    fn redact_hides_credentials_only_in_the_head() {
        let raw = b"POST /mcp?key=k1 HTTP/1.1\r\nAuthorization: Bearer s3cret\r\nmcp-session-id: abc\r\nX: 1\r\n\r\nAuthorization: body";
        let r = redact(raw);
        assert_eq!(
            r,
            "POST /mcp?<redacted> HTTP/1.1\r\nAuthorization: <redacted>\r\nmcp-session-id: <redacted>\r\nX: 1\r\n\r\nAuthorization: body"
        );
    }
}
