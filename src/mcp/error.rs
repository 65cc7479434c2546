//! JSON-RPC error codes, error constructors, and the one function that maps
//! an error and an era to an HTTP status.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::version::ProtocolVersion;

/// `-32700`: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// `-32600`: not a JSON-RPC 2.0 request (also: batch arrays, and a legacy
/// request whose `MCP-Protocol-Version` header names no supported revision).
pub const INVALID_REQUEST: i64 = -32600;
/// `-32601`: unknown method, or a method of the other era.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: bad params: missing modern `_meta` fields, unknown tool,
/// arguments that miss the schema, unknown resource (modern), bad cursor.
pub const INVALID_PARAMS: i64 = -32602;
/// `-32603`: a bug on our side.
pub const INTERNAL_ERROR: i64 = -32603;
/// `-32002`: resource not found (handshake era only; 2026-07-28 forbids it).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// `-32020`: a mirrored header is missing or disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the request needs a client capability it did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the modern `_meta` claims a revision we do not serve statelessly.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Longest echo of a client-supplied string inside an error message or
/// `error.data`, in characters.
///
/// Default is 200. Longer values are cut and end in `…`, so a client that
/// sends a megabyte of name sees its first 200 characters back, never the
/// whole input.
pub const MAX_ECHO_CHARS: usize = 200;

/// Which rules a request is served under; decides HTTP statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28 framing (or a modern header): errors carry 4xx statuses.
    Modern,
    /// Handshake-era framing: JSON-RPC errors travel in HTTP 200, except
    /// for messages that are not JSON-RPC requests at all.
    Legacy,
}

impl Era {
    /// The era a negotiated revision belongs to.
    pub fn of(v: ProtocolVersion) -> Era {
        if v.is_modern() {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// One human sentence naming the problem.
    pub message: String,
    /// Machine-readable detail, if any.
    pub data: Option<Value>,
}

/// Cuts a client-supplied string to [`MAX_ECHO_CHARS`] characters.
pub fn clip(s: &str) -> Cow<'_, str> {
    crate::text::clip(s, MAX_ECHO_CHARS)
}

/// [`clip`] for raw header bytes (lossy UTF-8).
pub fn clip_bytes(b: &[u8]) -> String {
    clip(&String::from_utf8_lossy(b)).into_owned()
}

impl RpcError {
    /// Builds an error with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// `-32700 Parse error`.
    pub fn parse_error() -> RpcError {
        RpcError::new(PARSE_ERROR, "Parse error: the body is not valid JSON")
    }

    /// `-32600 Invalid Request: <why>`.
    pub fn invalid_request(why: &str) -> RpcError {
        RpcError::new(INVALID_REQUEST, format!("Invalid Request: {why}"))
    }

    /// `-32601 Method not found`.
    pub fn method_not_found() -> RpcError {
        RpcError::new(METHOD_NOT_FOUND, "Method not found")
    }

    /// `-32602` with a message naming the problem.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// `-32020`: `Header mismatch: <header> header value '<h>' does not
    /// match body value '<b>'`.
    pub fn header_mismatch(header: &str, header_value: &str, body_value: &str) -> RpcError {
        RpcError::new(
            HEADER_MISMATCH,
            format!(
                "Header mismatch: {header} header value '{}' does not match body value '{}'",
                clip(header_value),
                clip(body_value)
            ),
        )
    }

    /// `-32020` for a required mirrored header that is absent.
    pub fn header_missing(header: &str, body_value: &str) -> RpcError {
        RpcError::new(
            HEADER_MISMATCH,
            format!(
                "Header mismatch: required header {header} is missing (body value '{}')",
                clip(body_value)
            ),
        )
    }

    /// `-32022` with `data: {supported, requested}`; `supported` is
    /// [`ProtocolVersion::SUPPORTED`], the same list `server/discover` gives.
    pub fn unsupported_version(requested: &str) -> RpcError {
        let supported: Vec<&str> = ProtocolVersion::SUPPORTED
            .iter()
            .map(|v| v.as_str())
            .collect();
        RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({"supported": supported, "requested": clip(requested)}))
    }

    /// Resource not found: `-32602` in 2026-07-28, `-32002` before; both
    /// with `data.uri`.
    pub fn resource_not_found(uri: &str, era: Era) -> RpcError {
        let code = match era {
            Era::Modern => INVALID_PARAMS,
            Era::Legacy => RESOURCE_NOT_FOUND,
        };
        RpcError::new(code, "Resource not found").with_data(json!({"uri": clip(uri)}))
    }

    /// The error object as JSON.
    pub fn to_value(&self) -> Value {
        let mut v = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            v["data"] = d.clone();
        }
        v
    }
}

/// The HTTP status that carries an error with `code` in `era`.
///
/// | code | modern | legacy |
/// | --- | --- | --- |
/// | -32700, -32600 | 400 | 400 |
/// | -32020, -32021, -32022 | 400 | 400 |
/// | -32601 | 404 | 200 |
/// | -32602 | 400 | 200 |
/// | -32603 | 500 | 200 |
/// | any other | 400 | 200 |
///
/// Notes: 2026-07-28 fixes 404 for -32601 and 400 for -32020..-32022 and
/// for a missing `_meta`; this server keeps every -32602 at 400 in that era
/// (one mapping per code, as the Python SDK does; both SDK clients surface a
/// 4xx JSON-RPC body with a matching id as a typed protocol error). Legacy
/// transports give JSON-RPC errors no status of their own, and 404 there
/// means "session gone", so they ride in 200 — except for bodies that are
/// not a request at all (and unsupported version headers, signalled as
/// -32600), which are 400 in every era.
pub fn http_status(code: i64, era: Era) -> u16 {
    match (code, era) {
        (PARSE_ERROR | INVALID_REQUEST, _) => 400,
        (
            HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION,
            _,
        ) => 400,
        (METHOD_NOT_FOUND, Era::Modern) => 404,
        (INTERNAL_ERROR, Era::Modern) => 500,
        (_, Era::Modern) => 400,
        (_, Era::Legacy) => 200,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_table() {
        use Era::*;
        let rows: [(i64, u16, u16); 9] = [
            (PARSE_ERROR, 400, 400),
            (INVALID_REQUEST, 400, 400),
            (METHOD_NOT_FOUND, 404, 200),
            (INVALID_PARAMS, 400, 200),
            (INTERNAL_ERROR, 500, 200),
            (RESOURCE_NOT_FOUND, 400, 200),
            (HEADER_MISMATCH, 400, 400),
            (MISSING_REQUIRED_CLIENT_CAPABILITY, 400, 400),
            (UNSUPPORTED_PROTOCOL_VERSION, 400, 400),
        ];
        for (code, modern, legacy) in rows {
            assert_eq!(http_status(code, Modern), modern, "{code} modern");
            assert_eq!(http_status(code, Legacy), legacy, "{code} legacy");
        }
    }

    #[test]
    fn clip_bounds_echoes() {
        assert_eq!(clip("short"), "short");
        let exact = "é".repeat(MAX_ECHO_CHARS);
        assert_eq!(clip(&exact), exact.as_str());
        let long = "é".repeat(MAX_ECHO_CHARS + 1);
        let c = clip(&long);
        assert_eq!(c.chars().count(), MAX_ECHO_CHARS + 1);
        assert!(c.ends_with('…'));
        assert_eq!(clip_bytes(b"a\xffb"), "a\u{fffd}b");
    }

    #[test]
    fn error_shapes() {
        assert_eq!(
            RpcError::header_mismatch("Mcp-Name", "foo", "bar").to_value(),
            json!({"code": -32020, "message": "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"})
        );
        assert_eq!(
            RpcError::unsupported_version("v999.0.0").to_value(),
            json!({"code": -32022, "message": "Unsupported protocol version",
                   "data": {"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "requested": "v999.0.0"}})
        );
        assert_eq!(
            RpcError::resource_not_found("file:///x", Era::Modern).to_value(),
            json!({"code": -32602, "message": "Resource not found", "data": {"uri": "file:///x"}})
        );
        assert_eq!(
            RpcError::resource_not_found("file:///x", Era::Legacy).to_value(),
            json!({"code": -32002, "message": "Resource not found", "data": {"uri": "file:///x"}})
        );
        assert_eq!(Era::of(ProtocolVersion::MODERN), Era::Modern);
        assert_eq!(Era::of(ProtocolVersion::LATEST_LEGACY), Era::Legacy);
    }
}
