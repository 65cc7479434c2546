//! One request of a [`Client`] in its settled mode: the 2026-07-28
//! message (`_meta` and `Mcp-*` headers) or the legacy one with its
//! session (a new session and one retry when the server forgot it), the
//! server requests answered on its SSE reply, and the reading of the
//! JSON-RPC result.

use std::sync::atomic::Ordering;

use serde_json::{json, Map, Value};

use super::shape::Tally;
use super::transport::Received;
use super::{client_info, error, Client, Error, Mode, MAX_SERVER_REQUESTS_ANSWERED};
use crate::mcp::headers::{
    encode_header_value, HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_MCP_PROTOCOL_VERSION,
    HEADER_MCP_SESSION_ID,
};

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The body field mirrored in `Mcp-Name` for a method, if any.
fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

pub(super) fn into_result(received: Received) -> Result<Value, Error> {
    let mut m = received.message;
    if let Some(e) = m.get("error") {
        return Err(Error::JsonRpc {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: e.get("data").cloned(),
        });
    }
    match m.get_mut("result").map(Value::take) {
        Some(r @ Value::Object(_)) => Ok(r),
        Some(other) => Err(Error::protocol(format!(
            "result is not an object: {}",
            error::one_line(&other.to_string(), 100)
        ))),
        None => Err(Error::protocol("response has neither result nor error")),
    }
}

/// The answer the TypeScript SDK's example servers give a request whose
/// `Mcp-Session-Id` they do not know: 400 with this JSON-RPC error message
/// (typescript-sdk v1.29.0 src/examples/server/simpleStreamableHttp.ts
/// and four more examples; @modelcontextprotocol/server-everything
/// 2026.8.31 dist/transports/streamableHttp.js), instead of the 404 the
/// spec asks for. Read as an expired session too.
pub const EXAMPLE_NO_SESSION_MESSAGE: &str = "Bad Request: No valid session ID provided";

fn is_example_no_session(r: &Received) -> bool {
    r.status == 400
        && r.message.pointer("/error/message").and_then(Value::as_str)
            == Some(EXAMPLE_NO_SESSION_MESSAGE)
}

/// 2026-07-28: every result states its `resultType`.
pub(super) fn check_result_type(method: &str, r: &Value) -> Result<(), Error> {
    match r.get("resultType") {
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(Value::String(t)) if t == "input_required" => Err(Error::protocol(format!(
            "{method}: server asked for client input (resultType input_required), which this client does not support (it declares no client capabilities)"
        ))),
        Some(other) => Err(Error::protocol(format!(
            "{method}: unknown resultType {other}"
        ))),
        None => Err(Error::protocol(format!(
            "{method}: 2026-07-28 result without resultType"
        ))),
    }
}

impl Client {
    /// A modern request body and its headers.
    pub(super) fn modern_message(
        &self,
        method: &str,
        params: Value,
        version: &str,
    ) -> (Value, Vec<(&'static str, String)>) {
        let mut params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                // Not an object: sent as given (the server will refuse it).
                return (
                    json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": other}),
                    vec![
                        (HEADER_MCP_PROTOCOL_VERSION, version.to_string()),
                        (HEADER_MCP_METHOD, method.to_string()),
                    ],
                );
            }
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(META_PROTOCOL_VERSION)
                .or_insert_with(|| json!(version));
            meta.entry(META_CLIENT_INFO).or_insert_with(client_info);
            meta.entry(META_CLIENT_CAPABILITIES)
                .or_insert_with(|| json!({}));
        }
        let mut headers = vec![
            (HEADER_MCP_PROTOCOL_VERSION, version.to_string()),
            (HEADER_MCP_METHOD, method.to_string()),
        ];
        if let Some(field) = name_field(method) {
            if let Some(v) = params.get(field).and_then(Value::as_str) {
                headers.push((HEADER_MCP_NAME, encode_header_value(v)));
            }
        }
        let body = json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": params});
        (body, headers)
    }

    /// One request in the settled mode; returns the inner `result`.
    pub(super) fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request_counted(method, params).map(|(r, _)| r)
    }

    /// [`Client::request`], with what its reply held.
    pub(super) fn request_counted(
        &self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Tally), Error> {
        match self.mode()? {
            Mode::Modern { version } => {
                let (body, headers) = self.modern_message(method, params, &version);
                let received = self.transport.request(&body, &headers, &mut |_| {})?;
                let tally = received.tally;
                let r = into_result(received)?;
                check_result_type(method, &r)?;
                Ok((r, tally))
            }
            Mode::Legacy { version, session } => {
                let first = self.legacy_request(method, &params, &version, session.as_deref());
                // A 404 to a request carrying a session means the session is
                // gone, whatever the body: empty, or a JSON-RPC error (the
                // TypeScript SDK's -32001 "Session not found", the Python
                // SDK's -32600 "Session not found").
                let gone = match &first {
                    Err(Error::HttpStatus { status: 404, .. }) => true,
                    Ok(r) => r.status == 404 || is_example_no_session(r),
                    Err(_) => false,
                };
                let received = if gone && session.is_some() {
                    // The session expired: start a new one, retry once.
                    self.transport.trace_line(|| {
                        "< 404 to a request with a session: starting a new session".into()
                    });
                    self.forget_session(session.as_deref());
                    match self.mode()? {
                        Mode::Legacy { version, session } => {
                            self.legacy_request(method, &params, &version, session.as_deref())?
                        }
                        Mode::Modern { .. } => unreachable!("legacy stays legacy"),
                    }
                } else {
                    first?
                };
                let tally = received.tally;
                Ok((into_result(received)?, tally))
            }
        }
    }

    fn forget_session(&self, session: Option<&str>) {
        let mut st = self.lock();
        if st.conn.as_ref().and_then(|c| c.session_id.as_deref()) == session {
            st.conn = None;
        }
    }

    fn legacy_request(
        &self,
        method: &str,
        params: &Value,
        version: &str,
        session: Option<&str>,
    ) -> Result<Received, Error> {
        let mut body = json!({"jsonrpc": "2.0", "id": self.id(), "method": method});
        if !params.is_null() {
            body["params"] = params.clone();
        }
        let mut headers = vec![(HEADER_MCP_PROTOCOL_VERSION, version.to_string())];
        if let Some(s) = session {
            headers.push((HEADER_MCP_SESSION_ID, s.to_string()));
        }
        let transport = &self.transport;
        let mut answer = |req: &Value| {
            let what = req.get("method").and_then(Value::as_str).unwrap_or("?");
            // One budget for the client's whole life (one command), taken
            // atomically: calls from several threads share it too.
            let took = self
                .answered
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    (n < MAX_SERVER_REQUESTS_ANSWERED).then_some(n + 1)
                })
                .is_ok();
            if !took {
                if !self.told_unanswered.swap(true, Ordering::SeqCst) {
                    transport.trace_line(|| {
                        format!("< SSE request '{what}' not answered, nor any later one (more than {MAX_SERVER_REQUESTS_ANSWERED} in this command)")
                    });
                }
                return;
            }
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            let reply = if what == "ping" {
                json!({"jsonrpc": "2.0", "id": id, "result": {}})
            } else {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "Method not found"}})
            };
            let _ = transport.notify(&reply, &headers);
        };
        transport.request(&body, &headers, &mut answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::CLIENT_NAME;

    #[test]
    fn modern_message_adds_meta_and_headers() {
        let c = Client::new("http://127.0.0.1:9/mcp");
        let (body, headers) = c.modern_message(
            "tools/call",
            json!({"name": "météo", "_meta": {"io.modelcontextprotocol/clientCapabilities": {"x": {}}}}),
            "2026-07-28",
        );
        assert_eq!(body["method"], "tools/call");
        assert_eq!(body["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(
            body["params"]["_meta"][META_CLIENT_INFO]["name"],
            CLIENT_NAME
        );
        // The caller's own _meta entries win.
        assert_eq!(
            body["params"]["_meta"][META_CLIENT_CAPABILITIES],
            json!({"x": {}})
        );
        assert_eq!(
            headers,
            vec![
                (HEADER_MCP_PROTOCOL_VERSION, "2026-07-28".to_string()),
                (HEADER_MCP_METHOD, "tools/call".to_string()),
                (HEADER_MCP_NAME, "=?base64?bcOpdMOpbw==?=".to_string()),
            ]
        );
        let (_, h) = c.modern_message(
            "resources/read",
            json!({"uri": "file:///a b"}),
            "2026-07-28",
        );
        assert_eq!(h[2], (HEADER_MCP_NAME, "file:///a b".to_string()));
        let (_, h) = c.modern_message("tools/list", Value::Null, "2026-07-28");
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn result_type_rules() {
        assert!(check_result_type("m", &json!({"resultType": "complete"})).is_ok());
        assert_eq!(
            check_result_type("tools/list", &json!({"tools": []})),
            Err(Error::protocol(
                "tools/list: 2026-07-28 result without resultType"
            ))
        );
        assert!(check_result_type("m", &json!({"resultType": "input_required"})).is_err());
        assert!(check_result_type("m", &json!({"resultType": 1})).is_err());
    }
}
