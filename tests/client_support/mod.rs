//! A scripted MCP server on 127.0.0.1 for the `xmd client` tests
//! (tests/client_redirect.rs, tests/client_hostile.rs): one connection per
//! request, every request recorded with its path; a reply is either a
//! whole body or a writer that streams for as long as it likes (an endless
//! SSE stream, a slow drip), so the fake can be as hostile as needed.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Req {
    pub verb: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub raw_body: Vec<u8>,
    pub body: Value,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
    pub fn id(&self) -> Value {
        self.body["id"].clone()
    }
    /// `VERB path method` (`response` for a JSON-RPC response body).
    pub fn label(&self) -> String {
        let what = if self.verb != "POST" {
            String::new()
        } else if self.body.get("method").is_some() {
            format!(" {}", self.method())
        } else {
            " response".into()
        };
        format!("{} {}{what}", self.verb, self.path)
    }
}

/// Streams a body after the head (the connection closes when it returns).
pub type Writer = Box<dyn FnOnce(&mut TcpStream) + Send>;

/// One scripted reply.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub stream: Option<Writer>,
}

impl Reply {
    pub fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: vec![],
            body: vec![],
            stream: None,
        }
    }
    pub fn raw(status: u16, ct: &str, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), ct.into())],
            body: body.as_bytes().to_vec(),
            stream: None,
        }
    }
    pub fn json(status: u16, v: Value) -> Reply {
        Reply::raw(status, "application/json", &v.to_string())
    }
    pub fn result(req: &Req, result: Value) -> Reply {
        Reply::json(
            200,
            json!({"jsonrpc": "2.0", "id": req.id(), "result": result}),
        )
    }
    pub fn error(req: &Req, code: i64, msg: &str) -> Reply {
        Reply::json(
            200,
            json!({"jsonrpc": "2.0", "id": req.id(), "error": {"code": code, "message": msg}}),
        )
    }
    /// A `text/event-stream` reply written by `w` for as long as it likes.
    pub fn sse_stream(w: impl FnOnce(&mut TcpStream) + Send + 'static) -> Reply {
        Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            body: vec![],
            stream: Some(Box::new(w)),
        }
    }
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::empty(status).header("Location", location)
    }
    pub fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
}

type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

pub struct Fake {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Fake {
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Fake {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let sink = log.clone();
        thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(conn) = conn else { continue };
                let (h, s) = (handler.clone(), sink.clone());
                thread::spawn(move || serve(conn, &*h, &s));
            }
        });
        Fake { addr, log }
    }
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
    pub fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }
    pub fn labels(&self) -> Vec<String> {
        self.requests().iter().map(Req::label).collect()
    }
}

fn serve(conn: TcpStream, handler: &Handler, log: &Mutex<Vec<Req>>) {
    let mut w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut words = line.split_whitespace();
    let verb = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap();
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; len];
    if r.read_exact(&mut body).is_err() {
        return;
    }
    let req = Req {
        verb,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw_body: body,
    };
    log.lock().unwrap().push(req.clone());
    let reply = handler(&req);
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if reply.stream.is_none() {
        head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    head.push_str("\r\n");
    if w.write_all(head.as_bytes()).is_err() {
        return;
    }
    match reply.stream {
        Some(stream) => stream(&mut w),
        None => {
            let _ = w.write_all(&reply.body);
        }
    }
    let _ = w.flush();
    let _ = w.shutdown(std::net::Shutdown::Write);
    // Let the client read to the end before the socket goes.
    thread::sleep(Duration::from_millis(5));
}

/// An `initialize` result for `version`.
pub fn init_result(req: &Req, version: &str) -> Reply {
    Reply::result(
        req,
        json!({"protocolVersion": version, "capabilities": {"tools": {}},
               "serverInfo": {"name": "fake", "version": "9"}}),
    )
}

/// A legacy server's answers to the handshake and to what has no answer:
/// `Some` for `initialize` (session `session`), notifications and client
/// responses (202), DELETE (200) and `server/discover` (400, as TS SDK v1
/// servers do); `None` for the rest.
pub fn legacy_basics(req: &Req, session: &str) -> Option<Reply> {
    if req.verb == "DELETE" {
        return Some(Reply::empty(200));
    }
    if req.method() == "initialize" {
        return Some(init_result(req, "2025-11-25").header("Mcp-Session-Id", session));
    }
    if req.method() == "server/discover" {
        return Some(Reply::json(
            400,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}),
        ));
    }
    if req.verb == "POST" && req.body.get("id").is_none_or(Value::is_null) {
        return Some(Reply::empty(202));
    }
    if req.verb == "POST" && req.body.get("method").is_none() {
        return Some(Reply::empty(202));
    }
    None
}

/// One tool named `echo`.
pub fn tools_result(req: &Req) -> Reply {
    Reply::result(
        req,
        json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
    )
}

/// What `xmd client` printed, with its exit code, time and peak RSS.
pub struct Run {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
    pub peak_rss_kib: u64,
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the binary, sampling its peak RSS (VmHWM) every 5 ms until it exits.
pub fn xmd_client(args: &[&str]) -> Run {
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_xmd"))
        .arg("client")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let peak = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let (p, d) = (peak.clone(), done.clone());
    let sampler = thread::spawn(move || {
        while d.load(Ordering::SeqCst) == 0 {
            if let Some(k) = vm_hwm_kib(pid) {
                p.fetch_max(k as usize, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(5));
        }
    });
    let out = child.wait_with_output().unwrap();
    let elapsed = start.elapsed();
    done.store(1, Ordering::SeqCst);
    sampler.join().unwrap();
    Run {
        code: out.status.code().expect("exited"),
        stdout: out.stdout,
        stderr: out.stderr,
        elapsed,
        peak_rss_kib: peak.load(Ordering::SeqCst) as u64,
    }
}
