//! MCP properties: the `=?base64?…?=` header codec and the dispatcher.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::upstream::{Down, Routes};
use super::Input;
use crate::mcp::headers::{
    decode_header_value, encode_header_value, HEADER_MCP_METHOD, HEADER_MCP_NAME,
    HEADER_MCP_PROTOCOL_VERSION, SENTINEL_PREFIX,
};
use crate::mcp::{Mcp, Outcome, Reply, ServerInfo};
use crate::x::tools::Tools;
use crate::x::upstream::Upstream;

/// `decode_header_value` never panics and agrees with itself around OWS;
/// for every UTF-8 string derived from the input (lossy text, the decoded
/// value, each line), `encode_header_value` gives a printable-ASCII value
/// without edge spaces that decodes back to the same string.
pub fn check_header_b64(data: &[u8]) {
    let decoded = decode_header_value(data);
    let mut padded = b" \t".to_vec();
    padded.extend_from_slice(data);
    padded.extend_from_slice(b"\t ");
    assert_eq!(
        decode_header_value(&padded),
        decoded,
        "OWS changed the value"
    );
    if let (Ok(s), Some(payload)) = (
        &decoded,
        std::str::from_utf8(data)
            .ok()
            .and_then(|t| t.strip_prefix(SENTINEL_PREFIX))
            .and_then(|t| t.strip_suffix("?=")),
    ) {
        // Only canonical payloads are accepted: re-encoding the decoded
        // bytes gives the payload back.
        use base64::Engine as _;
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(s.as_bytes()),
            payload,
            "non-canonical payload accepted"
        );
    }
    let lossy = String::from_utf8_lossy(data).into_owned();
    let mut strings = vec![lossy.clone()];
    strings.extend(lossy.split('\n').map(str::to_owned));
    if let Ok(s) = decoded {
        strings.push(s);
    }
    for s in strings {
        let enc = encode_header_value(&s);
        assert!(
            enc.bytes().all(|c| (0x20..=0x7e).contains(&c)),
            "encoded value not printable ASCII: {enc:?}"
        );
        assert!(!enc.starts_with(' ') && !enc.ends_with(' '), "{enc:?}");
        assert_eq!(
            decode_header_value(enc.as_bytes()).as_deref(),
            Ok(s.as_str())
        );
    }
}

const KNOWN: [&str; 16] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "resources/read",
    "resources/list",
    "notifications/initialized",
    "x_md_get_post",
    "=?base64?eF9tZF9nZXRfcG9zdA==?=",
    "http://127.0.0.1:8080/llms.txt",
    "x_md_get_profile",
    "",
];

fn build(upstream: Arc<dyn Upstream>) -> Mcp {
    let public = "http://127.0.0.1:8080";
    let card = crate::app::statics::server_card(public);
    let card_text = serde_json::to_string_pretty(&card).unwrap_or_default();
    let info = ServerInfo {
        name: crate::app::statics::SERVER_NAME.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        public_url: public.to_string(),
    };
    Mcp::new(
        info,
        crate::docs::resources(public, &card_text),
        Arc::new(Tools::new(upstream)),
    )
}

/// Two dispatchers: over the recorded fixtures, and over a dead upstream.
fn dispatchers() -> &'static [Mcp; 2] {
    static MCPS: OnceLock<[Mcp; 2]> = OnceLock::new();
    MCPS.get_or_init(|| [build(Arc::new(Routes::fixtures())), build(Arc::new(Down))])
}

/// Checks one reply against the request body it answers.
fn check_reply(reply: &Reply, request: Option<&Value>) {
    let message = reply.message();
    let Some(body) = &message else {
        assert_eq!(reply.status, 202, "no body but status {}", reply.status);
        let obj = request
            .and_then(Value::as_object)
            .expect("202 for a body that is not a JSON object");
        let notification = obj.contains_key("method") && !obj.contains_key("id");
        let response = !obj.contains_key("method")
            && (obj.contains_key("result") || obj.contains_key("error"));
        assert!(notification || response, "202 for a request: {obj:?}");
        return;
    };
    assert!(
        matches!(reply.status, 200 | 400 | 404),
        "status {}",
        reply.status
    );
    let text = String::from_utf8_lossy(body);
    let v: Value = serde_json::from_slice(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {text}"));
    assert_eq!(obj.get("jsonrpc"), Some(&Value::from("2.0")), "{text}");
    for k in obj.keys() {
        assert!(
            matches!(k.as_str(), "jsonrpc" | "id" | "result" | "error"),
            "member {k}: {text}"
        );
    }
    let id = obj.get("id").unwrap_or_else(|| panic!("no id: {text}"));
    assert!(
        id.is_string() || id.is_i64() || id.is_u64() || id.is_null(),
        "id {id}"
    );
    if !id.is_null() {
        let sent = request.and_then(|r| r.get("id"));
        assert_eq!(sent, Some(id), "reply id differs from the request id");
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(result), None) => {
            assert_eq!(reply.status, 200, "result with status {}", reply.status);
            assert!(result.is_object(), "result {result}");
        }
        (None, Some(error)) => {
            let code = error.get("code").and_then(Value::as_i64);
            assert!(code.is_some(), "error code: {text}");
            assert!(error.get("message").is_some_and(Value::is_string), "{text}");
            if reply.status == 404 {
                assert_eq!(code, Some(-32601), "404 for {text}");
            }
        }
        _ => panic!("not exactly one of result and error: {text}"),
    }
}

/// Arbitrary body and `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name`
/// values through `Mcp::handle` (and `PendingCall::run` over a fake
/// upstream): always a 202 for a notification or response, or a single
/// JSON-RPC 2.0 response object (`jsonrpc`, exactly one of result/error, id
/// string/integer/null and equal to the request's when not null) with HTTP
/// status 200, 400 or 404 (404 only for `-32601`).
///
/// Input: `flags`, then per header flagged present a length byte (≥ 0xF0
/// picks a known value) and that many bytes, then the body.
pub fn check_mcp_dispatch(data: &[u8]) {
    let mut input = Input::new(data);
    let flags = input.byte();
    let mut values: [Option<Vec<u8>>; 3] = [None, None, None];
    for (i, slot) in values.iter_mut().enumerate() {
        if flags & (1 << i) != 0 {
            let len = input.byte();
            *slot = Some(if len >= 0xF0 {
                KNOWN[usize::from(len - 0xF0)].as_bytes().to_vec()
            } else {
                input.take(usize::from(len)).to_vec()
            });
        }
    }
    let body = input.rest();
    let mcp = &dispatchers()[usize::from(flags >> 7)];
    let names = [
        HEADER_MCP_PROTOCOL_VERSION,
        HEADER_MCP_METHOD,
        HEADER_MCP_NAME,
    ];
    let lookup = |name: &str| -> Option<&[u8]> {
        names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .and_then(|i| values[i].as_deref())
    };
    let request: Option<Value> = serde_json::from_slice(body).ok();
    match mcp.handle(&lookup, body) {
        Outcome::Reply(reply) => check_reply(&reply, request.as_ref()),
        Outcome::Call(call) => {
            let reply = call.run();
            assert_eq!(reply.status, 200);
            check_reply(&reply, request.as_ref());
            let v: Value = serde_json::from_slice(reply.message().as_deref().unwrap_or_default())
                .expect("checked above");
            let result = &v["result"];
            assert_eq!(result["content"][0]["type"], "text", "{result}");
            assert!(result["content"][0]["text"].is_string(), "{result}");
            assert!(result["isError"].is_boolean(), "{result}");
        }
    }
}
