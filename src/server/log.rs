//! The access log: one line per answered request on stderr, as plain text
//! or JSON lines, never with the request body. Lines are buffered on the
//! event-loop thread and written once per loop turn, so logging costs no
//! system call per request.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::config::LogFormat;
use crate::http::{Method, Trace};

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
                    Escaped(e.method.as_str()),
                    Escaped(e.path),
                    e.status,
                    e.bytes
                );
                if let Some(m) = &e.trace.rpc_method {
                    let _ = write!(b, " rpc={}", Escaped(m));
                }
                if let Some(t) = e.trace.tool {
                    let _ = write!(b, " tool={}", Escaped(t));
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
                if let Some(f) = &e.trace.fallback {
                    let _ = write!(b, " fallback={f}");
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
                if let Some(f) = &e.trace.fallback {
                    v["fallback"] = f.as_ref().into();
                }
                if let Some(client) = e.trace.client {
                    v["client"] = client.to_string().into();
                }
                push_json_line(&mut b, &v.to_string());
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

/// A request-derived field of the plain log, escaped so that no request
/// can add a line, a field or a terminal control sequence: printable ASCII
/// other than backslash and `"` passes; a backslash is written as two;
/// every other byte of the UTF-8 form (controls, space, `"`, DEL, all
/// non-ASCII) is written `\xHH`. An empty field is written `""`. The
/// mapping is injective, so the original is always recoverable.
pub struct Escaped<'a>(pub &'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("\"\"");
        }
        let bytes = self.0.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let plain = b.is_ascii_graphic() && b != b'\\' && b != b'"';
            if plain {
                continue;
            }
            // Every byte of a multi-byte character is escaped, so a
            // non-empty run of plain bytes is ASCII and both its ends are
            // character boundaries.
            if i > start {
                f.write_str(&self.0[start..i])?;
            }
            if b == b'\\' {
                f.write_str("\\\\")?;
            } else {
                write!(f, "\\x{b:02X}")?;
            }
            start = i + 1;
        }
        f.write_str(&self.0[start..])
    }
}

/// Appends one JSON log line. `serde_json` escapes the C0 controls, `"`
/// and `\\` but writes every other character raw; DEL, the C1 controls
/// (U+0080 to U+009F, which include CSI U+009B, a terminal escape on its
/// own, and NEL U+0085) and the Unicode line and paragraph separators
/// (U+2028, U+2029) are line breaks or controls to terminals and common
/// line splitters, so they are written as `\uXXXX` too; so are the bidi
/// controls ([`is_bidi_control`]), which reorder what a terminal or viewer
/// shows after them (a log line that reads backwards), and the BOM U+FEFF.
/// Such characters can only occur inside JSON strings, where the escape
/// means the same.
fn push_json_line(b: &mut String, json: &str) {
    for c in json.chars() {
        if matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
        ) || is_bidi_control(c)
        {
            let _ = write!(b, "\\u{:04x}", u32::from(c));
        } else {
            b.push(c);
        }
    }
    b.push('\n');
}

/// True for a Unicode bidirectional formatting character: LRM, RLM
/// (U+200E, U+200F), ALM (U+061C), the embeddings and overrides
/// (U+202A–U+202E) and the isolates (U+2066–U+2069).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Now as RFC 3339 UTC with milliseconds, e.g. `2026-11-30T00:55:00.123Z`.
pub fn rfc3339_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = crate::calendar::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The inverse of [`Escaped`], written independently of it: the oracle
    /// that every field decodes back to what the request sent.
    fn unescape(field: &str) -> Vec<u8> {
        if field == "\"\"" {
            return Vec::new();
        }
        let b = field.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' if b.get(i + 1) == Some(&b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                b'\\' if b.get(i + 1) == Some(&b'x') => {
                    let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap();
                    out.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 4;
                }
                c => {
                    assert!(c.is_ascii_graphic() && c != b'"' && c != b'\\', "{field}");
                    out.push(c);
                    i += 1;
                }
            }
        }
        out
    }

    /// The line `format` writes for one request.
    fn record(format: LogFormat, method: &str, path: &str, rpc: Option<&str>) -> String {
        let log = AccessLog::new(format);
        let trace = Trace {
            rpc_method: rpc.map(Into::into),
            ..Trace::default()
        };
        log.record(&Entry {
            peer: "127.0.0.1:9".parse().unwrap(),
            method: &Method::from_token(method),
            path,
            status: 200,
            bytes: 5,
            duration: Duration::from_millis(1),
            trace: &trace,
        });
        let s = log.buf.borrow().clone();
        s
    }

    fn line(method: &str, path: &str, rpc: Option<&str>) -> String {
        record(LogFormat::Plain, method, path, rpc)
    }

    #[test]
    fn forged_lines_and_terminal_controls_are_escaped() {
        let l = line(
            "POST",
            "/mcp",
            Some("x\n2026-01-01T00:00:00.000Z 10.0.0.1 GET /admin 200 0B 0.00ms\x1b[2J\0\r"),
        );
        assert_eq!(l.matches('\n').count(), 1);
        let rpc = l.split(' ').nth(7).unwrap();
        assert_eq!(
            rpc,
            "rpc=x\\x0A2026-01-01T00:00:00.000Z\\x2010.0.0.1\\x20GET\\x20/admin\\x20200\\x200B\\x200.00ms\\x1B[2J\\x00\\x0D\n"
        );
        assert!(
            line("GET", "/a\"b\\c", Some("")).contains(" /a\\x22b\\\\c 200 5B 1.00ms rpc=\"\"\n")
        );
    }

    fn json_line(path: &str, rpc: &str) -> String {
        record(LogFormat::Json, "POST", path, Some(rpc))
    }

    #[test]
    fn json_lines_escape_bidi_controls_and_the_bom() {
        let l = json_line("/mcp\u{202e}gpj.exe", "\u{feff}a\u{2066}b\u{200f}\u{61c}");
        assert!(l.contains("\"path\":\"/mcp\\u202egpj.exe\""), "{l}");
        assert!(
            l.contains("\"rpc\":\"\\ufeffa\\u2066b\\u200f\\u061c\""),
            "{l}"
        );
    }

    #[test]
    fn json_lines_escape_c1_controls_and_unicode_line_separators() {
        let l = json_line("/mcp", "a\u{85}b\u{9b}31mc\u{2028}d\u{2029}e\u{a0}");
        assert!(
            l.contains("\"rpc\":\"a\\u0085b\\u009b31mc\\u2028d\\u2029e\u{a0}\""),
            "{l}"
        );
    }

    proptest! {
        /// Any JSON-RPC method and path make exactly one JSON line with no
        /// control or line-separator character (C0, DEL, C1, U+2028/9) and the same values when parsed back;
        /// the oracle is Python's `str.splitlines` set of line breaks.
        #[test]
        fn any_request_makes_one_json_line(
            path in any::<String>(),
            rpc in prop_oneof![
                any::<String>(),
                prop::collection::vec(prop::sample::select(vec![
                    '\u{200e}', '\u{200f}', '\u{061c}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
                    '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{feff}', 'a', '"', '\\',
                    '\u{85}', '\u{2028}', 'é',
                ]), 0..24).prop_map(|v| v.into_iter().collect()),
            ],
        ) {
            let l = json_line(&path, &rpc);
            prop_assert!(l.ends_with('\n'));
            let body = &l[..l.len() - 1];
            let breaks = ['\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}'];
            prop_assert!(!body.chars().any(|c| breaks.contains(&c) || c.is_control()), "{:?}", body);
            // No bidi control or BOM raw (they reorder or hide what follows).
            let hidden = ['\u{200e}', '\u{200f}', '\u{061c}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{feff}'];
            prop_assert!(!body.chars().any(|c| hidden.contains(&c)), "{:?}", body);
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            prop_assert_eq!(v["path"].as_str(), Some(path.as_str()));
            prop_assert_eq!(v["rpc"].as_str(), Some(rpc.as_str()));
        }

        /// Any method, path and JSON-RPC method make exactly one line of
        /// printable ASCII with the same number of fields, each decoding
        /// back to what was sent.
        #[test]
        fn any_request_makes_one_plain_line(
            method in "\\PC{0,12}|[\\x00-\\x7f]{0,12}",
            path in any::<String>(),
            rpc in proptest::option::of(any::<String>()),
        ) {
            let l = line(&method, &path, rpc.as_deref());
            prop_assert!(l.ends_with('\n'));
            prop_assert_eq!(l.matches('\n').count(), 1);
            let body = &l[..l.len() - 1];
            prop_assert!(body.bytes().all(|b| (0x20..0x7f).contains(&b)), "{:?}", body);
            let fields: Vec<&str> = body.split(' ').collect();
            prop_assert_eq!(fields.len(), 7 + usize::from(rpc.is_some()));
            let sent = Method::from_token(&method);
            prop_assert_eq!(unescape(fields[2]), sent.as_str().as_bytes());
            prop_assert_eq!(unescape(fields[3]), path.as_bytes());
            if let Some(rpc) = &rpc {
                let f = fields[7].strip_prefix("rpc=").unwrap();
                prop_assert_eq!(unescape(f), rpc.as_bytes());
            }
        }
    }
}
