//! A mutating proxy for `xmd probe`'s mutant corpus: a loopback HTTP/1.1
//! server in front of a real `xmd serve` that relays every exchange
//! unchanged except for the one rule its [`Mutant`] breaks.
//!
//! Requests the proxy can read cleanly (one `Content-Length` or none, no
//! `Transfer-Encoding`, no `Expect`) are forwarded rebuilt, so a mutant can
//! change the request or the response; anything else (malformed heads,
//! chunked bodies, `Expect`) is relayed byte for byte on a new upstream
//! connection, so xmd's own framing answers it.
#![allow(dead_code)]

pub mod corpus;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use xmd::probe::wire::{Conn, Target};

/// A parsed request.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn set_header(&mut self, name: &str, value: Option<&str>) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(v) = value {
            self.headers.push((name.to_string(), v.to_string()));
        }
    }
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
    pub fn set_json(&mut self, v: &Value) {
        self.body = v.to_string().into_bytes();
    }
    /// `method` of the JSON body.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()?.get("method")?.as_str().map(String::from)
    }
    /// A modern request: the body claims a `_meta` protocol version.
    pub fn is_modern(&self) -> bool {
        self.json()
            .and_then(|j| {
                j.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                    .cloned()
            })
            .is_some()
    }
}

/// A response to write.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub close: bool,
}

impl Resp {
    pub fn new(status: u16, content_type: Option<&str>, body: &[u8]) -> Resp {
        let mut headers = Vec::new();
        if let Some(ct) = content_type {
            headers.push(("Content-Type".to_string(), ct.to_string()));
        }
        Resp {
            status,
            headers,
            body: body.to_vec(),
            close: false,
        }
    }
    pub fn json(status: u16, v: &Value) -> Resp {
        Resp::new(status, Some("application/json"), v.to_string().as_bytes())
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn set_header(&mut self, name: &str, value: Option<&str>) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(v) = value {
            self.headers.push((name.to_string(), v.to_string()));
        }
    }
    pub fn is_sse(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
    }
    /// The JSON-RPC message (plain JSON, or the last SSE data line).
    pub fn rpc(&self) -> Option<Value> {
        if self.is_sse() {
            let text = String::from_utf8_lossy(&self.body);
            text.lines().rev().find_map(|l| {
                l.strip_prefix("data:")
                    .and_then(|d| serde_json::from_str(d.trim()).ok())
            })
        } else {
            serde_json::from_slice(&self.body).ok()
        }
    }
    /// Rewrites the JSON-RPC message (keeping SSE framing).
    pub fn edit_rpc(&mut self, f: impl FnOnce(&mut Value)) {
        let Some(mut v) = self.rpc() else { return };
        f(&mut v);
        if self.is_sse() {
            self.body = format!("event: message\ndata: {v}\n\n").into_bytes();
        } else {
            self.body = v.to_string().into_bytes();
        }
    }
    pub fn error_code(&self) -> Option<i64> {
        self.rpc()?.pointer("/error/code")?.as_i64()
    }
}

/// What a raw-level hook decides.
pub enum Raw {
    /// Replace the buffered bytes and go on.
    Rewrite(Vec<u8>),
    /// Answer this and close.
    Answer(Resp),
}

type RawHook = fn(&[u8]) -> Option<Raw>;
type ReqHook = fn(&mut Req, &State) -> Option<Resp>;
type RespHook = fn(&Req, &mut Resp, &State);

/// Per-proxy state a hook may use.
#[derive(Default)]
pub struct State {
    /// Requests seen, per rpc method.
    pub count: AtomicUsize,
    /// Legacy sessions issued (`<session>-<n>`).
    pub issued: Mutex<Vec<String>>,
    /// Legacy sessions ended with DELETE.
    pub ended: Mutex<Vec<String>>,
}

/// One rule broken.
#[derive(Clone, Copy)]
pub struct Mutant {
    pub name: &'static str,
    /// The checks that must catch it (fail or warn), the first its own.
    pub catches: &'static [&'static str],
    pub on_raw: Option<RawHook>,
    pub on_request: Option<ReqHook>,
    pub on_response: Option<RespHook>,
    /// Issue legacy session ids `<this>-<n>` on `initialize`.
    pub session: Option<&'static str>,
    /// With `session`: answer 404 to a legacy request with an id not
    /// issued, or ended with `DELETE`.
    pub enforce_session: bool,
    /// Serve one connection at a time (a stalled client blocks all).
    pub serialize: bool,
    /// Keep SSE replies to an `Accept` preferring `text/event-stream` open
    /// 5 s after the last event, close-delimited.
    pub hold_sse: bool,
    /// Leave pipelined requests unanswered (connection held open).
    pub drop_pipelined: bool,
    /// Read an `Expect: 100-continue` request's body without sending 100.
    pub ignore_expect: bool,
}

impl Mutant {
    pub const fn base(name: &'static str, catches: &'static [&'static str]) -> Mutant {
        Mutant {
            name,
            catches,
            on_raw: None,
            on_request: None,
            on_response: None,
            session: None,
            enforce_session: false,
            serialize: false,
            hold_sse: false,
            drop_pipelined: false,
            ignore_expect: false,
        }
    }
}

/// A running proxy (threads live until the test process ends).
pub struct Proxy {
    pub url: String,
}

impl Proxy {
    pub fn start(upstream: &str, mutant: Mutant) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let upstream = Target::parse(upstream).unwrap();
        let state = Arc::new(State::default());
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                if mutant.serialize {
                    // In the accept loop itself: the next connection waits
                    // until this one is done.
                    serve(s, &upstream, mutant, &state);
                    continue;
                }
                let (up, st) = (upstream.clone(), Arc::clone(&state));
                std::thread::spawn(move || serve(s, &up, mutant, &st));
            }
        });
        Proxy {
            url: format!("http://{addr}/mcp"),
        }
    }
}

fn find_head_end(b: &[u8]) -> Option<usize> {
    b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

fn write_resp(s: &mut TcpStream, r: &Resp, close: bool) {
    let mut out = format!("HTTP/1.1 {} X\r\n", r.status).into_bytes();
    for (n, v) in &r.headers {
        if ["content-length", "transfer-encoding", "connection"]
            .contains(&n.to_ascii_lowercase().as_str())
        {
            continue;
        }
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n", r.body.len()).as_bytes());
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&r.body);
    let _ = s.write_all(&out);
}

fn relay(mut client: TcpStream, up: &Target, buf: &[u8]) {
    let Ok(mut server) = TcpStream::connect((up.host.as_str(), up.port)) else {
        return;
    };
    let _ = server.write_all(buf);
    let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let t = std::thread::spawn(move || {
        let _ = std::io::copy(&mut s2, &mut c2);
        let _ = c2.shutdown(std::net::Shutdown::Both);
    });
    let _ = std::io::copy(&mut client, &mut server);
    let _ = server.shutdown(std::net::Shutdown::Write);
    let _ = t.join();
}

fn read_more(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 65536];
    match s.read(&mut chunk) {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

fn serve(mut s: TcpStream, up: &Target, m: Mutant, st: &State) {
    // An idle keep-alive connection (the client's pool) is dropped after
    // 5 s: longer than the probe's 3 s timeout, so a stalled client still
    // blocks the one-connection-at-a-time mutant past it.
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.set_nodelay(true);
    let mut buf = Vec::new();
    loop {
        let end = loop {
            if let Some(e) = find_head_end(&buf) {
                break e;
            }
            if !read_more(&mut s, &mut buf) {
                return;
            }
        };
        if let Some(hook) = m.on_raw {
            match hook(&buf) {
                Some(Raw::Rewrite(b)) => {
                    buf = b;
                    continue;
                }
                Some(Raw::Answer(r)) => {
                    write_resp(&mut s, &r, true);
                    return;
                }
                None => {}
            }
        }
        let mut hs = [httparse::EMPTY_HEADER; 128];
        let mut pr = httparse::Request::new(&mut hs);
        let Ok(httparse::Status::Complete(_)) = pr.parse(&buf[..end]) else {
            return relay(s, up, &buf);
        };
        let method = pr.method.unwrap_or("").to_string();
        let target = pr.path.unwrap_or("/").to_string();
        let headers: Vec<(String, String)> = pr
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        let count = |n: &str| {
            headers
                .iter()
                .filter(|(h, _)| h.eq_ignore_ascii_case(n))
                .count()
        };
        let expect = count("expect") > 0;
        if count("transfer-encoding") > 0
            || count("content-length") > 1
            || (expect && !m.ignore_expect)
            || count("host") != 1
            || !["GET", "POST", "DELETE", "HEAD", "PUT"].contains(&method.as_str())
        {
            return relay(s, up, &buf);
        }
        let cl: usize = match headers
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case("content-length"))
        {
            Some((_, v)) => match v.trim().parse() {
                Ok(n) => n,
                Err(_) => return relay(s, up, &buf),
            },
            None => 0,
        };
        while buf.len() < end + cl {
            if !read_more(&mut s, &mut buf) {
                return;
            }
        }
        let body = buf[end..end + cl].to_vec();
        buf.drain(..end + cl);
        let mut req = Req {
            method,
            target,
            headers: headers
                .into_iter()
                .filter(|(n, _)| {
                    !n.eq_ignore_ascii_case("content-length") && !n.eq_ignore_ascii_case("expect")
                })
                .collect(),
            body,
        };
        st.count.fetch_add(1, Ordering::SeqCst);
        // Legacy sessions.
        let mut issue = None;
        if let Some(base) = m.session {
            if !req.is_modern() && req.rpc_method().as_deref() == Some("initialize") {
                let mut issued = st.issued.lock().unwrap();
                let id = format!("{base}-{}", issued.len() + 1);
                issued.push(id.clone());
                issue = Some(id);
            } else if req.method == "DELETE" && req.header("mcp-session-id").is_some() {
                // Ends the session: later requests with it get 404 (when enforced).
                st.ended
                    .lock()
                    .unwrap()
                    .push(req.header("mcp-session-id").unwrap_or("").to_string());
                write_resp(&mut s, &Resp::new(200, None, b""), false);
                continue;
            } else if m.enforce_session && !req.is_modern() {
                if let Some(got) = req.header("mcp-session-id") {
                    if !st.issued.lock().unwrap().iter().any(|e| e == got)
                        || st.ended.lock().unwrap().iter().any(|e| e == got)
                    {
                        write_resp(
                            &mut s,
                            &Resp::json(
                                404,
                                &serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}),
                            ),
                            false,
                        );
                        continue;
                    }
                }
            }
        }
        let resp = match m.on_request.and_then(|h| h(&mut req, st)) {
            Some(r) => Some(r),
            None => forward(up, &req),
        };
        let Some(mut resp) = resp else { return };
        if let Some(id) = &issue {
            resp.set_header("Mcp-Session-Id", Some(id));
        }
        if let Some(h) = m.on_response {
            h(&req, &mut resp, st);
        }
        if m.hold_sse
            && resp.is_sse()
            && req
                .header("accept")
                .is_some_and(|a| a.starts_with("text/event-stream"))
        {
            let mut out = format!("HTTP/1.1 {} X\r\n", resp.status).into_bytes();
            for (n, v) in &resp.headers {
                if !["content-length", "transfer-encoding", "connection"]
                    .contains(&n.to_ascii_lowercase().as_str())
                {
                    out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
                }
            }
            out.extend_from_slice(b"Connection: close\r\n\r\n");
            out.extend_from_slice(&resp.body);
            let _ = s.write_all(&out);
            std::thread::sleep(Duration::from_secs(5));
            return;
        }
        let close = resp.close;
        write_resp(&mut s, &resp, close);
        if close {
            return;
        }
        if m.drop_pipelined && !buf.is_empty() {
            std::thread::sleep(Duration::from_secs(4));
            return;
        }
    }
}

fn forward(up: &Target, req: &Req) -> Option<Resp> {
    let mut c = Conn::open(up, Duration::from_secs(20)).ok()?;
    let mut raw = format!("{} {} HTTP/1.1\r\n", req.method, req.target).into_bytes();
    for (n, v) in &req.headers {
        raw.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    if !req.body.is_empty() || req.method == "POST" {
        raw.extend_from_slice(format!("Content-Length: {}\r\n", req.body.len()).as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    raw.extend_from_slice(&req.body);
    c.send(&raw).ok()?;
    let r = c.read_response(req.method == "HEAD").ok()?;
    Some(Resp {
        status: r.status,
        headers: r.headers.clone(),
        body: r.body.clone(),
        close: false,
    })
}
