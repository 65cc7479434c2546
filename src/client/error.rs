//! The one error type of the MCP client.

use serde_json::Value;

/// Why a transport attempt produced no HTTP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// DNS failure, connection refused or reset before an answer.
    Connect,
    /// The request timeout passed (connect, send or reading the reply).
    Timeout,
    /// The TLS handshake or certificate check failed.
    Tls,
    /// The request could not be built: a bad URL or header name/value.
    Request,
    /// Any other I/O or HTTP framing failure.
    Io,
}

impl TransportKind {
    fn label(self) -> &'static str {
        match self {
            TransportKind::Connect => "cannot connect",
            TransportKind::Timeout => "timed out",
            TransportKind::Tls => "TLS failure",
            TransportKind::Request => "invalid request (URL or header)",
            TransportKind::Io => "transport failure",
        }
    }
}

/// Everything that can go wrong talking to an MCP server. A tool that
/// fails is **not** an error: it is a [`CallToolResult`](super::CallToolResult)
/// with `is_error: true`.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// No HTTP answer: connect, timeout, TLS, URL or I/O trouble.
    Transport {
        /// What kind of failure.
        kind: TransportKind,
        /// The underlying error text.
        message: String,
    },
    /// The server answered with a non-success HTTP status and no JSON-RPC
    /// error body for our request.
    HttpStatus {
        /// The HTTP status code.
        status: u16,
        /// The response body (at most [`MAX_ERROR_BODY_BYTES`] of it, lossy UTF-8).
        body: String,
    },
    /// The server answered our request with a JSON-RPC error object.
    JsonRpc {
        /// `error.code`.
        code: i64,
        /// `error.message`.
        message: String,
        /// `error.data`, if present.
        data: Option<Value>,
    },
    /// The server broke the protocol: unparsable or mismatched reply, a
    /// 2026-07-28 result without `resultType`, 202 to a request, an SSE
    /// stream ending before the response, an endless list, …
    Protocol(String),
}

/// How much of an error response body [`Error::HttpStatus`] keeps: 64 KiB.
/// The rest is dropped (the message says so) so a huge error page cannot
/// balloon memory.
pub const MAX_ERROR_BODY_BYTES: u64 = 64 * 1024;

impl Error {
    pub(crate) fn protocol(msg: impl Into<String>) -> Error {
        Error::Protocol(msg.into())
    }

    pub(crate) fn transport(kind: TransportKind, msg: impl Into<String>) -> Error {
        Error::Transport {
            kind,
            message: msg.into(),
        }
    }

    /// The JSON-RPC error code, if this is a JSON-RPC error.
    pub fn code(&self) -> Option<i64> {
        match self {
            Error::JsonRpc { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The CLI exit code: 3 for a JSON-RPC error, 4 for everything else
    /// (transport, HTTP status, protocol violation).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::JsonRpc { .. } => 3,
            _ => 4,
        }
    }
}

/// Collapses whitespace runs (including newlines) so messages stay on one line,
/// and cuts to `max` characters.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > max {
        let mut cut: String = joined.chars().take(max).collect();
        cut.push('…');
        cut
    } else {
        joined
    }
}

/// How many characters of an HTTP error body or `error.data` the one-line
/// [`Display`](std::fmt::Display) form shows: 300.
pub const DISPLAY_DETAIL_CHARS: usize = 300;

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Transport { kind, message } => {
                write!(f, "{}: {}", kind.label(), one_line(message, 500))
            }
            Error::HttpStatus { status, body } => {
                let body = one_line(body, DISPLAY_DETAIL_CHARS);
                if body.is_empty() {
                    write!(f, "HTTP {status} with an empty body")
                } else {
                    write!(f, "HTTP {status}: {body}")
                }
            }
            Error::JsonRpc {
                code,
                message,
                data,
            } => {
                write!(f, "JSON-RPC error {code}: {}", one_line(message, 500))?;
                if let Some(d) = data {
                    write!(
                        f,
                        " (data: {})",
                        one_line(&d.to_string(), DISPLAY_DETAIL_CHARS)
                    )?;
                }
                Ok(())
            }
            Error::Protocol(m) => write!(f, "protocol violation: {}", one_line(m, 500)),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn display_is_one_line() {
        let e = Error::HttpStatus {
            status: 502,
            body: "<html>\n  <b>bad</b>\r\n gateway</html>".into(),
        };
        assert_eq!(e.to_string(), "HTTP 502: <html> <b>bad</b> gateway</html>");
        assert_eq!(
            Error::HttpStatus {
                status: 500,
                body: String::new()
            }
            .to_string(),
            "HTTP 500 with an empty body"
        );
        let e = Error::JsonRpc {
            code: -32602,
            message: "Unknown tool: nope".into(),
            data: Some(json!({"availableTools": ["a"]})),
        };
        assert_eq!(
            e.to_string(),
            r#"JSON-RPC error -32602: Unknown tool: nope (data: {"availableTools":["a"]})"#
        );
        assert_eq!(e.exit_code(), 3);
        assert_eq!(e.code(), Some(-32602));
        let e = Error::transport(TransportKind::Timeout, "deadline\npassed");
        assert_eq!(e.to_string(), "timed out: deadline passed");
        assert_eq!(e.exit_code(), 4);
        assert_eq!(Error::protocol("x").to_string(), "protocol violation: x");
    }

    #[test]
    fn long_details_are_cut() {
        let e = Error::HttpStatus {
            status: 400,
            body: "a".repeat(1000),
        };
        let s = e.to_string();
        assert_eq!(
            s.chars().count(),
            "HTTP 400: ".len() + DISPLAY_DETAIL_CHARS + 1
        );
        assert!(s.ends_with('…'));
    }
}
