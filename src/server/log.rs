//! The access log: one line per answered request on stderr, as plain text
//! or JSON lines, never with the request body. Lines are buffered on the
//! event-loop thread and written once per loop turn, so logging costs no
//! system call per request.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::http::{Method, Trace};

/// Access-log format (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `time client method path status bytes duration key=value…`; the
    /// client is the TCP peer, or the address a trusted proxy reported
    /// (then `via=<peer>` follows).
    Plain,
    /// One JSON object per line.
    Json,
    /// No access log (start-up and shutdown lines are still written).
    Off,
}

impl LogFormat {
    /// Parses `plain`, `json` or `off`.
    pub fn parse(s: &str) -> Option<LogFormat> {
        match s {
            "plain" => Some(LogFormat::Plain),
            "json" => Some(LogFormat::Json),
            "off" => Some(LogFormat::Off),
            _ => None,
        }
    }
}

/// Buffered access-log lines.
pub struct AccessLog {
    format: LogFormat,
    buf: RefCell<String>,
}

/// One finished exchange.
pub struct Entry<'a> {
    /// The peer.
    pub peer: SocketAddr,
    /// Request method.
    pub method: &'a Method,
    /// Request path (no query).
    pub path: &'a str,
    /// Response status.
    pub status: u16,
    /// Response body bytes.
    pub bytes: usize,
    /// From the end of the request to the response being queued.
    pub duration: Duration,
    /// Details from the layers above HTTP.
    pub trace: &'a Trace,
}

impl AccessLog {
    /// A log in `format`.
    pub fn new(format: LogFormat) -> AccessLog {
        AccessLog {
            format,
            buf: RefCell::new(String::new()),
        }
    }

    /// Whether lines are written at all.
    pub fn enabled(&self) -> bool {
        self.format != LogFormat::Off
    }

    /// Appends one line.
    pub fn record(&self, e: &Entry) {
        if !self.enabled() {
            return;
        }
        let mut b = self.buf.borrow_mut();
        let time = rfc3339_now();
        let ms = e.duration.as_secs_f64() * 1000.0;
        match self.format {
            LogFormat::Plain => {
                let _ = match e.trace.client {
                    Some(client) => write!(b, "{time} {client}"),
                    None => write!(b, "{time} {}", e.peer),
                };
                let _ = write!(
                    b,
                    " {} {} {} {}B {ms:.2}ms",
                    e.method.as_str(),
                    e.path,
                    e.status,
                    e.bytes
                );
                if let Some(m) = &e.trace.rpc_method {
                    let _ = write!(b, " rpc={m}");
                }
                if let Some(t) = e.trace.tool {
                    let _ = write!(b, " tool={t}");
                }
                if let Some(t) = e.trace.tool_ms {
                    let _ = write!(b, " tool_ms={t}");
                }
                if let Some(c) = e.trace.cache {
                    let _ = write!(b, " cache={c}");
                }
                if let Some(err) = &e.trace.error {
                    let _ = write!(b, " error={err}");
                }
                if e.trace.client.is_some() {
                    let _ = write!(b, " via={}", e.peer);
                }
                b.push('\n');
            }
            LogFormat::Json => {
                let mut v = serde_json::json!({
                    "time": time, "peer": e.peer.to_string(), "method": e.method.as_str(), "path": e.path,
                    "status": e.status, "bytes": e.bytes, "duration_ms": (ms * 100.0).round() / 100.0,
                });
                if let Some(m) = &e.trace.rpc_method {
                    v["rpc"] = m.as_ref().into();
                }
                if let Some(t) = e.trace.tool {
                    v["tool"] = t.into();
                }
                if let Some(t) = e.trace.tool_ms {
                    v["tool_ms"] = t.into();
                }
                if let Some(c) = e.trace.cache {
                    v["cache"] = c.into();
                }
                if let Some(err) = &e.trace.error {
                    v["error"] = err.as_ref().into();
                }
                if let Some(client) = e.trace.client {
                    v["client"] = client.to_string().into();
                }
                let _ = writeln!(b, "{v}");
            }
            LogFormat::Off => {}
        }
    }

    /// Writes buffered lines to stderr.
    pub fn flush(&self) {
        let mut b = self.buf.borrow_mut();
        if !b.is_empty() {
            let _ = std::io::stderr().lock().write_all(b.as_bytes());
            b.clear();
            if b.capacity() > 64 * 1024 {
                *b = String::new();
            }
        }
    }
}

/// Now as RFC 3339 UTC with milliseconds, e.g. `2026-11-30T00:55:00.123Z`.
pub fn rfc3339_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = crate::http::date::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}
