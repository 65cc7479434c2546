//! Shared helpers for integration tests: spawn the real `xmd` binary on
//! 127.0.0.1:0 and talk raw HTTP/1.1 to it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `xmd serve` child process, killed on drop.
pub struct Xmd {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Xmd {
    /// Starts `xmd serve --listen 127.0.0.1:0` plus `args`, waits for its
    /// "listening on" line and returns it. The syndication fallback is off
    /// unless `args` name a (loopback) `--syndication-url`: no test may
    /// reach X's real endpoint when its fake FxTwitter fails.
    pub fn start(args: &[&str]) -> Xmd {
        let mut child = Command::new(env!("CARGO_BIN_EXE_xmd"))
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .args(["--syndication-url", ""])
            .args(args)
            // A test that names no --upstream gets a closed loopback port,
            // never the default public host: the start-up check would
            // resolve it (a DNS query leaving the machine).
            .env("XMD_UPSTREAM", "http://127.0.0.1:9")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn xmd");
        let stderr = child.stderr.take().unwrap();
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        reader.read_line(&mut line).expect("read startup line");
        let endpoint = if line.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON start line");
            format!("listening on {}", v["endpoint"].as_str().unwrap_or(""))
        } else {
            line.clone()
        };
        let addr: SocketAddr = endpoint
            .split("listening on http://")
            .nth(1)
            .and_then(|r| r.split("/mcp").next())
            .unwrap_or_else(|| panic!("no listening line: {line:?}"))
            .parse()
            .unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(vec![line]));
        let sink = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for l in reader.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(l);
            }
        });
        Xmd { child, addr, log }
    }

    /// A new raw connection with a read timeout.
    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }

    /// `Host` value for this server.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Sends the server SIGTERM (graceful shutdown).
    pub fn sigterm(&self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
    }
}

impl Drop for Xmd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One parsed response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Reply {
    /// A header value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    /// The body as UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (the SSE `data:` line when framed as SSE).
    pub fn json(&self) -> serde_json::Value {
        let text = self.text();
        let data = if self.header("content-type").as_deref() == Some("text/event-stream") {
            text.lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("")
                .to_string()
        } else {
            text
        };
        serde_json::from_str(&data).unwrap_or_else(|e| panic!("not JSON ({e}): {data:?}"))
    }
}

/// Reads one response (Content-Length framed; `head_only` for HEAD).
pub fn read_reply(stream: &mut TcpStream, head_only: bool) -> Reply {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("read head");
        assert!(
            n == 1,
            "connection closed mid-head after {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let status: u16 = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line: {head:?}"));
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; if head_only || status == 100 { 0 } else { len }];
    stream.read_exact(&mut body).expect("read body");
    Reply { status, head, body }
}

/// Whether the peer closes (EOF or reset) within `wait`, discarding any
/// bytes that arrive first.
pub fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    let mut b = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Builds a POST /mcp request with the given extra header lines.
pub fn post(host: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut req = format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    req.into_bytes()
}

/// Sends one request on a fresh connection and reads one reply.
pub fn roundtrip(x: &Xmd, raw: &[u8]) -> Reply {
    let mut s = x.connect();
    s.write_all(raw).unwrap();
    read_reply(&mut s, raw.starts_with(b"HEAD "))
}

/// Elapsed time of `f`.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

/// The JSON and SSE framing headers the SDK clients send.
pub const JSON_HEADERS: [&str; 2] = [
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
];

/// The error code a tool result names in its text (`…, code X)` or
/// `code X,`), `None` for a success.
pub fn tool_error_code(v: &serde_json::Value) -> Option<String> {
    if v["result"]["isError"] != true {
        return None;
    }
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or("");
    let code = text.split("code ").nth(1)?;
    Some(code.split([',', ')']).next()?.to_string())
}
