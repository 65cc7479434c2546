//! The MCP dispatcher in-process: `Mcp::handle` with a header closure and a
//! body, asserting the exact JSON-RPC bytes (as parsed JSON) and HTTP status.
//! Case ids refer to /work/shared/design/protocol.md (M*, D*, L*) and the
//! handed cases (C*). Helpers live here; the cases are in tests/mcp_dispatch/. Helpers live here; the cases are in tests/mcp_dispatch/.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use xmd::mcp::statics::INSTRUCTIONS;
use xmd::mcp::{Mcp, Outcome, PendingCall, Reply, Resource, ServerInfo};
use xmd::x::tools::{Tools, TOOL_NAMES};
use xmd::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// A fake upstream that counts requests and always answers 503.
struct CountingUpstream(AtomicUsize);

impl Upstream for CountingUpstream {
    fn get(&self, _path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(UpstreamResponse {
            status: 503,
            retry_after: Some("7".into()),
            content_type: Some("application/json".into()),
            body: br#"{"code":503,"message":"unavailable"}"#[..].into(),
        })
    }
}

const BASE: &str = "http://127.0.0.1:8080";
const LLMS_URI: &str = "http://127.0.0.1:8080/llms.txt";
const QUERY_URI: &str = "http://127.0.0.1:8080/doc?id=123&x=%20y";
const ALL_VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

struct Fixture {
    mcp: Mcp,
    tools: Arc<Tools>,
    upstream: Arc<CountingUpstream>,
}

fn fixture() -> Fixture {
    let upstream = Arc::new(CountingUpstream(AtomicUsize::new(0)));
    let tools = Arc::new(Tools::new(upstream.clone()));
    let info = ServerInfo {
        name: "xmd-test".into(),
        version: "9.9.9".into(),
        public_url: BASE.into(),
    };
    let resources = vec![
        Resource {
            uri: LLMS_URI.into(),
            name: "llms.txt".into(),
            title: "xmd for agents (short)".into(),
            description: "Short contract.".into(),
            mime_type: "text/plain".into(),
            text: "# xmd\nhello \"agents\"\n".into(),
        },
        Resource {
            uri: QUERY_URI.into(),
            name: "doc".into(),
            title: "A doc".into(),
            description: "URI with a query.".into(),
            mime_type: "text/markdown".into(),
            text: "body".into(),
        },
    ];
    Fixture {
        mcp: Mcp::new(info, resources, tools.clone()),
        tools,
        upstream,
    }
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1.0.0"},
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn server_meta() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "xmd-test", "version": "9.9.9"}})
}

/// `MH(method)` minus the transport headers the HTTP layer handles.
fn mh(method: &str) -> Vec<(&'static str, String)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", method.into()),
    ]
}

fn lh(version: &str) -> Vec<(&'static str, String)> {
    vec![("MCP-Protocol-Version", version.into())]
}

fn outcome(f: &Fixture, headers: &[(&str, String)], body: &str) -> Outcome {
    let lookup = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_bytes())
    };
    f.mcp.handle(&lookup, body.as_bytes())
}

fn parse_reply(r: Reply) -> (u16, Option<Value>) {
    let body = r
        .message()
        .map(|b| serde_json::from_slice(&b).expect("reply body is JSON"));
    (r.status, body)
}

/// Sends and expects a finished reply.
fn send(f: &Fixture, headers: &[(&str, String)], body: &Value) -> (u16, Value) {
    match outcome(f, headers, &body.to_string()) {
        Outcome::Reply(r) => {
            let (status, body) = parse_reply(r);
            (status, body.expect("a body"))
        }
        Outcome::Call(_) => panic!("expected a reply, got a tool call for {body}"),
    }
}

fn send_raw(f: &Fixture, headers: &[(&str, String)], body: &str) -> (u16, Option<Value>) {
    match outcome(f, headers, body) {
        Outcome::Reply(r) => parse_reply(r),
        Outcome::Call(_) => panic!("expected a reply, got a tool call"),
    }
}

fn call(f: &Fixture, headers: &[(&str, String)], body: &Value) -> PendingCall {
    match outcome(f, headers, &body.to_string()) {
        Outcome::Call(c) => *c,
        Outcome::Reply(r) => panic!("expected a tool call, got {:?}", parse_reply(r)),
    }
}

fn err(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn err_data(id: Value, code: i64, message: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

fn req(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn modern_req(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    req(id, method, params)
}

fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ALL_VERSIONS,
           "capabilities": {"tools": {}, "resources": {}, "prompts": {}}, "instructions": INSTRUCTIONS,
           "ttlMs": 3_600_000, "cacheScope": "public", "_meta": server_meta()})
}

/// The tool definitions as `tools/list` serves them: each declares the
/// result budget (the default, 40,000) to Claude Code.
fn served_definitions() -> Value {
    let mut defs = Tools::definitions();
    for t in defs.as_array_mut().unwrap() {
        t["_meta"] = json!({"anthropic/maxResultSizeChars": 40_000});
    }
    defs
}

fn modern_tools_list() -> Value {
    json!({"resultType": "complete", "tools": served_definitions(), "ttlMs": 3_600_000,
           "cacheScope": "public", "_meta": server_meta()})
}

fn resource_entries(with_title: bool) -> Value {
    let mut a = json!({"uri": LLMS_URI, "name": "llms.txt", "title": "xmd for agents (short)",
                       "description": "Short contract.", "mimeType": "text/plain"});
    let mut b = json!({"uri": QUERY_URI, "name": "doc", "title": "A doc",
                       "description": "URI with a query.", "mimeType": "text/markdown"});
    if !with_title {
        a.as_object_mut().unwrap().remove("title");
        b.as_object_mut().unwrap().remove("title");
    }
    json!([a, b])
}

fn llms_contents() -> Value {
    json!([{"uri": LLMS_URI, "mimeType": "text/plain", "text": "# xmd\nhello \"agents\"\n"}])
}

const MISSING_META: &str =
    "Invalid params: MCP-Protocol-Version 2026-07-28 requires params._meta with \
io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities";

fn is_valid_tool_name(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn initialize_result(v: &str) -> Value {
    let mut server_info = json!({"name": "xmd-test", "version": "9.9.9"});
    if v != "2025-03-26" {
        server_info["title"] = json!(xmd::mcp::statics::SERVER_TITLE);
    }
    json!({"protocolVersion": v, "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "logging": {}},
           "serverInfo": server_info, "instructions": INSTRUCTIONS})
}

/// [`served_definitions`] restricted to the keys revision `v` defines.
fn legacy_tools(v: &str) -> Value {
    let keys: &[&str] = match v {
        "2025-03-26" => &["name", "description", "inputSchema", "annotations"],
        "2025-06-18" => &[
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
            "_meta",
        ],
        _ => &[
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
            "_meta",
            "icons",
            "execution",
        ],
    };
    let defs = served_definitions();
    Value::Array(
        defs.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                Value::Object(
                    t.as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| keys.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            })
            .collect(),
    )
}

fn bad_header_message(v: &str) -> String {
    format!(
        "Invalid Request: unsupported MCP-Protocol-Version header value '{v}'; after initialize this endpoint \
         accepts 2025-11-25, 2025-06-18 or 2025-03-26 (or 2026-07-28 with params._meta)"
    )
}

fn batch_error() -> Value {
    err(
        json!(null),
        -32600,
        "Invalid Request: JSON-RPC batch arrays are not supported (removed in MCP 2025-06-18); send one message per POST",
    )
}

fn c06_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {
        "name": "x_md_get_profile", "arguments": {"handle": "example_user"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "case-client", "version": "0.0.1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

fn available() -> Value {
    json!({"availableTools": TOOL_NAMES})
}

#[path = "mcp_dispatch/dual.rs"]
mod dual;
#[path = "mcp_dispatch/envelope.rs"]
mod envelope;
#[path = "mcp_dispatch/handed.rs"]
mod handed;
#[path = "mcp_dispatch/legacy.rs"]
mod legacy;
#[path = "mcp_dispatch/modern.rs"]
mod modern;
