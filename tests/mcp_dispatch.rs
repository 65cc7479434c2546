//! The MCP dispatcher in-process: `Mcp::handle` with a header closure and a
//! body, asserting the exact JSON-RPC bytes (as parsed JSON) and HTTP status.
//! Case ids refer to /work/shared/design/protocol.md (M*, D*, L*) and the
//! handed cases (C*).

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
            body: br#"{"code":503,"message":"unavailable"}"#.to_vec(),
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
        .body
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
        Outcome::Call(c) => c,
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
           "capabilities": {"tools": {}, "resources": {}}, "instructions": INSTRUCTIONS,
           "ttlMs": 3_600_000, "cacheScope": "public", "_meta": server_meta()})
}

fn modern_tools_list() -> Value {
    json!({"resultType": "complete", "tools": Tools::definitions(), "ttlMs": 3_600_000,
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

// ---------------------------------------------------------------- modern (M)

#[test]
fn m1_server_discover() {
    let f = fixture();
    let (status, body) = send(
        &f,
        &mh("server/discover"),
        &modern_req(json!(201), "server/discover", json!({})),
    );
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 201, "result": discover_result()})
    );
}

#[test]
fn m2_client_info_is_optional() {
    let f = fixture();
    let mut b = modern_req(json!(202), "server/discover", json!({}));
    b["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let (status, body) = send(&f, &mh("server/discover"), &b);
    assert_eq!(
        (status, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 202, "result": discover_result()})
        )
    );
}

#[test]
fn m3_missing_meta_fields_are_400_invalid_params() {
    let f = fixture();
    let h = mh("server/discover");
    let (s, b) = send(&f, &h, &req(json!(101), "server/discover", json!({})));
    assert_eq!((s, b), (400, err(json!(101), -32602, MISSING_META)));

    let mut no_version = modern_req(json!(102), "server/discover", json!({}));
    no_version["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    let (s, b) = send(&f, &h, &no_version);
    assert_eq!((s, b), (400, err(json!(102), -32602, MISSING_META)));

    let mut no_caps = modern_req(json!(104), "server/discover", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let (s, b) = send(&f, &h, &no_caps);
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(104),
                -32602,
                "Invalid params: params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is required (an object)"
            )
        )
    );

    let mut bad_claim = modern_req(json!(105), "server/discover", json!({}));
    bad_claim["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
    let (s, b) = send(&f, &h, &bad_claim);
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(105),
                -32602,
                "Invalid params: params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string"
            )
        )
    );
}

#[test]
fn m4_unsupported_version_is_400_32022() {
    let f = fixture();
    let h = vec![
        ("MCP-Protocol-Version", "v999.0.0".to_string()),
        ("Mcp-Method", "server/discover".into()),
    ];
    let mut b = modern_req(json!(301), "server/discover", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let (s, body) = send(&f, &h, &b);
    assert_eq!(
        (s, body),
        (
            400,
            err_data(
                json!(301),
                -32022,
                "Unsupported protocol version",
                json!({"supported": ALL_VERSIONS, "requested": "v999.0.0"})
            )
        )
    );
}

#[test]
fn m5_header_body_version_mismatch_is_32020_before_32022() {
    let f = fixture();
    let mut b = modern_req(json!(302), "server/discover", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let (s, body) = send(&f, &mh("server/discover"), &b);
    assert_eq!(
        (s, body),
        (
            400,
            err(
                json!(302),
                -32020,
                "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value 'v999.0.0'"
            )
        )
    );
}

#[test]
fn m6_missing_standard_headers_are_32020() {
    let f = fixture();
    let only_version = vec![("MCP-Protocol-Version", "2026-07-28".to_string())];
    let (s, b) = send(
        &f,
        &only_version,
        &modern_req(json!(1), "tools/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(1),
                -32020,
                "Header mismatch: required header Mcp-Method is missing (body value 'tools/list')"
            )
        )
    );

    let only_method = vec![("Mcp-Method", "tools/list".to_string())];
    let (s, b) = send(
        &f,
        &only_method,
        &modern_req(json!(2), "tools/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(2),
                -32020,
                "Header mismatch: required header MCP-Protocol-Version is missing (body value '2026-07-28')"
            )
        )
    );

    let body = modern_req(
        json!(3),
        "tools/call",
        json!({"name": "x", "arguments": {}}),
    );
    let (s, b) = send(&f, &mh("tools/call"), &body);
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(3),
                -32020,
                "Header mismatch: required header Mcp-Name is missing (body value 'x')"
            )
        )
    );
}

#[test]
fn m7_mismatched_headers_are_32020() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("prompts/list"),
        &modern_req(json!(1), "tools/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(json!(1), -32020, "Header mismatch: Mcp-Method header value 'prompts/list' does not match body value 'tools/list'")
        )
    );
    let (s, b) = send(
        &f,
        &mh("TOOLS/LIST"),
        &modern_req(json!(1), "tools/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(json!(1), -32020, "Header mismatch: Mcp-Method header value 'TOOLS/LIST' does not match body value 'tools/list'")
        )
    );
    let mut h = mh("tools/call");
    h.push(("Mcp-Name", "wrong_tool_name".into()));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(
            json!(1),
            "tools/call",
            json!({"name": "get_weather", "arguments": {}}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(1),
                -32020,
                "Header mismatch: Mcp-Name header value 'wrong_tool_name' does not match body value 'get_weather'"
            )
        )
    );
}

#[test]
fn m8_header_names_are_case_insensitive() {
    let f = fixture();
    for (pv, m) in [
        ("mcp-protocol-version", "mcp-method"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
    ] {
        let h = vec![
            (pv, "2026-07-28".to_string()),
            (m, "tools/list".to_string()),
        ];
        let (s, b) = send(&f, &h, &modern_req(json!(8), "tools/list", json!({})));
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 8, "result": modern_tools_list()})
            )
        );
    }
}

#[test]
fn m9_ows_is_trimmed_from_header_values() {
    let f = fixture();
    let first = TOOL_NAMES[0];
    let h = vec![
        ("MCP-Protocol-Version", " 2026-07-28\t".to_string()),
        ("Mcp-Method", "  tools/call  ".to_string()),
        ("Mcp-Name", format!("  {first}  ")),
    ];
    let pending = call(
        &f,
        &h,
        &modern_req(
            json!(9),
            "tools/call",
            json!({"name": first, "arguments": {}}),
        ),
    );
    assert_eq!(pending.call().name, first);
}

#[test]
fn m10_base64_sentinel_is_decoded_before_comparing() {
    let f = fixture();
    let header_check_passes = |method: &str, field: &str, value: &str, header: &str| {
        let mut h = mh(method);
        h.push(("Mcp-Name", header.to_string()));
        let out = outcome(
            &f,
            &h,
            &modern_req(json!(10), method, json!({ field: value })).to_string(),
        );
        match out {
            Outcome::Call(_) => true,
            Outcome::Reply(r) => {
                let (_, b) = parse_reply(r);
                b.unwrap()["error"]["code"] != json!(-32020)
            }
        }
    };
    assert!(header_check_passes(
        "tools/call",
        "name",
        "météo",
        "=?base64?bcOpdMOpbw==?="
    ));
    assert!(header_check_passes(
        "resources/read",
        "uri",
        "file:///données/é.txt",
        "=?base64?ZmlsZTovLy9kb25uw6llcy/DqS50eHQ=?="
    ));
    assert!(header_check_passes(
        "tools/call",
        "name",
        "Hello, 世界",
        "=?base64?SGVsbG8sIOS4lueVjA==?="
    ));
    assert!(header_check_passes(
        "tools/call",
        "name",
        " padded ",
        "=?base64?IHBhZGRlZCA=?="
    ));
    assert!(header_check_passes(
        "tools/call",
        "name",
        "=?base64?literal?=",
        "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    ));
    // Literal upper-case marker matches only the identical literal.
    assert!(header_check_passes(
        "tools/call",
        "name",
        "=?BASE64?SGVsbG8=?=",
        "=?BASE64?SGVsbG8=?="
    ));
    assert!(!header_check_passes(
        "tools/call",
        "name",
        "Hello",
        "=?BASE64?SGVsbG8=?="
    ));
    // Prefix without suffix is literal.
    assert!(header_check_passes(
        "tools/call",
        "name",
        "=?base64?SGVsbG8=",
        "=?base64?SGVsbG8="
    ));
    assert!(!header_check_passes(
        "tools/call",
        "name",
        "Hello",
        "=?base64?SGVsbG8="
    ));

    // Bad payloads: exact error bodies.
    for (hv, reason) in [
        (
            "=?base64?SGVsbG8?=",
            "invalid base64 payload in =?base64?…?= value",
        ),
        (
            "=?base64?SGVs!!!bG8=?=",
            "invalid base64 payload in =?base64?…?= value",
        ),
    ] {
        let mut h = mh("tools/call");
        h.push(("Mcp-Name", hv.to_string()));
        let (s, b) = send(
            &f,
            &h,
            &modern_req(json!(11), "tools/call", json!({"name": "Hello"})),
        );
        let msg =
            format!("Header mismatch: Mcp-Name header value '{hv}' cannot be decoded ({reason})");
        assert_eq!((s, b), (400, err(json!(11), -32020, &msg)));
    }
}

#[test]
fn m11_resources_read_mirrors_uri_as_is() {
    let f = fixture();
    let mut h = mh("resources/read");
    h.push(("Mcp-Name", QUERY_URI.to_string()));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(json!(11), "resources/read", json!({"uri": QUERY_URI})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 11, "result": {
                "resultType": "complete",
                "contents": [{"uri": QUERY_URI, "mimeType": "text/markdown", "text": "body"}],
                "ttlMs": 300_000, "cacheScope": "public", "_meta": server_meta()}})
        )
    );
}

#[test]
fn m13_unknown_method_is_404() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("unknown/method"),
        &modern_req(json!(601), "unknown/method", json!({})),
    );
    assert_eq!((s, b), (404, err(json!(601), -32601, "Method not found")));
}

#[test]
fn m14_removed_methods_are_404_in_modern_framing() {
    let f = fixture();
    for (i, m) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]
    .into_iter()
    .enumerate()
    {
        let (s, b) = send(
            &f,
            &mh(m),
            &modern_req(json!(700 + i), m, json!({"uri": LLMS_URI, "level": "info"})),
        );
        assert_eq!(
            (s, b),
            (404, err(json!(700 + i), -32601, "Method not found")),
            "{m}"
        );
    }
}

#[test]
fn m18_resource_not_found_is_32602_with_uri() {
    let f = fixture();
    let uri = "test://nonexistent-resource-for-conformance-testing";
    let mut h = mh("resources/read");
    h.push(("Mcp-Name", uri.to_string()));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(json!(5), "resources/read", json!({"uri": uri})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err_data(json!(5), -32602, "Resource not found", json!({"uri": uri}))
        )
    );
}

#[test]
fn m20_m21_m22_modern_results_carry_result_type_meta_and_cache_hints() {
    let f = fixture();
    let cases: [(&str, Value, Option<u64>); 5] = [
        ("server/discover", json!({}), Some(3_600_000)),
        ("tools/list", json!({}), Some(3_600_000)),
        ("resources/list", json!({}), Some(3_600_000)),
        ("resources/templates/list", json!({}), Some(3_600_000)),
        ("resources/read", json!({"uri": LLMS_URI}), Some(300_000)),
    ];
    for (m, params, ttl) in cases {
        let mut h = mh(m);
        if m == "resources/read" {
            h.push(("Mcp-Name", LLMS_URI.into()));
        }
        let (s, b) = send(&f, &h, &modern_req(json!(20), m, params));
        assert_eq!(s, 200, "{m}");
        let r = &b["result"];
        assert_eq!(r["resultType"], json!("complete"), "{m}");
        assert_eq!(r["_meta"], server_meta(), "{m}");
        assert_eq!(r["ttlMs"], json!(ttl), "{m}");
        assert_eq!(r["cacheScope"], json!("public"), "{m}");
    }
    let (_, b) = send(
        &f,
        &mh("resources/list"),
        &modern_req(json!(21), "resources/list", json!({})),
    );
    assert_eq!(
        b,
        json!({"jsonrpc": "2.0", "id": 21, "result": {"resultType": "complete", "resources": resource_entries(true),
               "ttlMs": 3_600_000, "cacheScope": "public", "_meta": server_meta()}})
    );
    let (_, b) = send(
        &f,
        &mh("resources/templates/list"),
        &modern_req(json!(22), "resources/templates/list", json!({})),
    );
    assert_eq!(
        b,
        json!({"jsonrpc": "2.0", "id": 22, "result": {"resultType": "complete", "resourceTemplates": [],
               "ttlMs": 3_600_000, "cacheScope": "public", "_meta": server_meta()}})
    );
    let mut h = mh("resources/read");
    h.push(("Mcp-Name", LLMS_URI.into()));
    let (_, b) = send(
        &f,
        &h,
        &modern_req(json!(23), "resources/read", json!({"uri": LLMS_URI})),
    );
    assert_eq!(
        b,
        json!({"jsonrpc": "2.0", "id": 23, "result": {"resultType": "complete", "contents": llms_contents(),
               "ttlMs": 300_000, "cacheScope": "public", "_meta": server_meta()}})
    );
}

#[test]
fn m20_m22_modern_tool_call_result() {
    let f = fixture();
    let name = TOOL_NAMES[1];
    let mut h = mh("tools/call");
    h.push(("Mcp-Name", name.into()));
    let pending = call(
        &f,
        &h,
        &modern_req(
            json!(24),
            "tools/call",
            json!({"name": name, "arguments": {}}),
        ),
    );
    let expected_output = f.tools.run(pending.call());
    let (s, b) = parse_reply(pending.run());
    let mut result = json!({"resultType": "complete", "_meta": server_meta(),
                            "content": [{"type": "text", "text": expected_output.text}],
                            "isError": expected_output.is_error});
    if let Some(sc) = expected_output.structured {
        result["structuredContent"] = sc;
    }
    assert_eq!(
        (s, b.unwrap()),
        (200, json!({"jsonrpc": "2.0", "id": 24, "result": result}))
    );
}

#[test]
fn m25_modern_notifications_are_202() {
    let f = fixture();
    let n = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "_meta": meta()}});
    assert_eq!(
        send_raw(&f, &mh("notifications/cancelled"), &n.to_string()),
        (202, None)
    );
}

#[test]
fn m26_responses_and_batches_under_2026_are_400_32600() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("tools/list"),
        &json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(null),
                -32600,
                "Invalid Request: 2026-07-28 clients must not POST JSON-RPC responses"
            )
        )
    );
    let batch = json!([modern_req(json!(1), "tools/list", json!({}))]);
    let (s, b) = send(&f, &mh("tools/list"), &batch);
    assert_eq!((s, b), (400, batch_error()));
}

// ------------------------------------------------------------ dual era (D)

#[test]
fn d1_meta_claim_routes_to_modern() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("tools/list"),
        &modern_req(json!(1), "tools/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": modern_tools_list()})
        )
    );
}

#[test]
fn d2_initialize_never_counter_offers_2026() {
    let f = fixture();
    let body = req(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let (s, b) = send(&f, &[], &body);
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result("2025-11-25")})
        )
    );
}

#[test]
fn d3_modern_header_without_claim_is_400_32602() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("server/discover"),
        &req(json!(101), "server/discover", json!({})),
    );
    assert_eq!((s, b), (400, err(json!(101), -32602, MISSING_META)));
    // Also without any params at all.
    let (s, b) = send(
        &f,
        &mh("tools/list"),
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    assert_eq!((s, b), (400, err(json!(3), -32602, MISSING_META)));
}

#[test]
fn d4_no_claim_and_no_or_legacy_header_is_legacy() {
    let f = fixture();
    let plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let (s, b) = send(&f, &[], &plain);
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": legacy_tools("2025-03-26")}})
        )
    );
    for v in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let (s, b) = send(&f, &lh(v), &plain);
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": legacy_tools(v)}})
            ),
            "{v}"
        );
    }
}

#[test]
fn d6_initialize_with_modern_header_and_no_claim_is_32020() {
    let f = fixture();
    let body = req(
        json!(6),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
    );
    let (s, b) = send(&f, &lh("2026-07-28"), &body);
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(6),
                -32020,
                "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match the body, which has \
                 no params._meta protocol version; send initialize without that header to start a 2025 handshake"
            )
        )
    );
}

#[test]
fn d7_session_id_and_last_event_id_are_ignored() {
    let f = fixture();
    let mut h = mh("tools/list");
    let body = modern_req(json!(7), "tools/list", json!({}));
    let without = send(&f, &h, &body);
    h.push(("Mcp-Session-Id", "stale-session-123".into()));
    h.push(("Last-Event-ID", "42".into()));
    assert_eq!(send(&f, &h, &body), without);
    let legacy = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let h = vec![
        ("MCP-Protocol-Version", "2025-11-25".to_string()),
        ("Mcp-Session-Id", "stale-session-123".to_string()),
    ];
    assert_eq!(send(&f, &h, &legacy), send(&f, &lh("2025-11-25"), &legacy));
}

#[test]
fn d8_unsupported_list_is_subset_of_discover() {
    let f = fixture();
    let (_, d) = send(
        &f,
        &mh("server/discover"),
        &modern_req(json!(1), "server/discover", json!({})),
    );
    let h = vec![
        ("MCP-Protocol-Version", "1900-01-01".to_string()),
        ("Mcp-Method", "tools/list".into()),
    ];
    let mut b = modern_req(json!(2), "tools/list", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let (s, e) = send(&f, &h, &b);
    assert_eq!(s, 400);
    let discovered = d["result"]["supportedVersions"].as_array().unwrap();
    let supported = e["error"]["data"]["supported"].as_array().unwrap();
    assert!(!supported.is_empty());
    assert!(supported.iter().all(|v| discovered.contains(v)));
    assert_eq!(supported, discovered);
}

#[test]
fn d9_legacy_discover_probe_is_never_5xx() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &[],
        &req(
            json!("server-discover-probe-1"),
            "server/discover",
            json!({}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(json!("server-discover-probe-1"), -32601, "Method not found")
        )
    );
}

// --------------------------------------------------------------- legacy (L)

fn initialize_result(v: &str) -> Value {
    let mut server_info = json!({"name": "xmd-test", "version": "9.9.9"});
    if v != "2025-03-26" {
        server_info["title"] = json!(xmd::mcp::statics::SERVER_TITLE);
    }
    json!({"protocolVersion": v, "capabilities": {"tools": {}, "resources": {}},
           "serverInfo": server_info, "instructions": INSTRUCTIONS})
}

/// `Tools::definitions()` restricted to the keys revision `v` defines.
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
    let defs = Tools::definitions();
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

#[test]
fn l1_initialize_handshake() {
    let f = fixture();
    let body = req(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1.0.0"}}),
    );
    let (s, b) = send(&f, &[], &body);
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result("2025-11-25")})
        )
    );
}

#[test]
fn l2_version_negotiation() {
    let f = fixture();
    for (asked, got) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let (s, b) = send(
            &f,
            &[],
            &req(json!(1), "initialize", json!({"protocolVersion": asked})),
        );
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 1, "result": initialize_result(got)})
            ),
            "{asked}"
        );
    }
    let (s, b) = send(
        &f,
        &[],
        &req(json!(2), "initialize", json!({"capabilities": {}})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(
                json!(2),
                -32602,
                "Invalid params: initialize requires params.protocolVersion (a string)"
            )
        )
    );
}

#[test]
fn l3_notifications_and_responses_are_202() {
    let f = fixture();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    ] {
        assert_eq!(send_raw(&f, &lh("2025-11-25"), body), (202, None), "{body}");
        assert_eq!(send_raw(&f, &[], body), (202, None), "{body}");
    }
    // An unknown legacy version header is refused even on a notification.
    assert_eq!(
        send_raw(
            &f,
            &lh("1999-01-01"),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ),
        (
            400,
            Some(err(json!(null), -32600, &bad_header_message("1999-01-01")))
        )
    );
}

#[test]
fn l4_ping_is_empty_result() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &json!({"jsonrpc": "2.0", "id": "123", "method": "ping"}),
    );
    assert_eq!(
        (s, b),
        (200, json!({"jsonrpc": "2.0", "id": "123", "result": {}}))
    );
}

fn bad_header_message(v: &str) -> String {
    format!(
        "Invalid Request: unsupported MCP-Protocol-Version header value '{v}'; after initialize this endpoint \
         accepts 2025-11-25, 2025-06-18 or 2025-03-26 (or 2026-07-28 with params._meta)"
    )
}

#[test]
fn l6_unsupported_legacy_header_is_400() {
    let f = fixture();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let (s, b) = send(&f, &lh("1999-01-01"), &body);
    assert_eq!(
        (s, b),
        (
            400,
            err(json!(1), -32600, &bad_header_message("1999-01-01"))
        )
    );
}

fn batch_error() -> Value {
    err(
        json!(null),
        -32600,
        "Invalid Request: JSON-RPC batch arrays are not supported (removed in MCP 2025-06-18); send one message per POST",
    )
}

#[test]
fn l7_batches_are_refused_in_every_era() {
    let f = fixture();
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    for h in [
        lh("2025-11-25"),
        lh("2025-06-18"),
        lh("2025-03-26"),
        vec![],
        mh("tools/list"),
    ] {
        assert_eq!(send_raw(&f, &h, batch), (400, Some(batch_error())));
        assert_eq!(send_raw(&f, &h, "[]"), (400, Some(batch_error())));
    }
}

#[test]
fn l11_unknown_legacy_method_is_200_32601() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(11), "prompts/list", json!({})),
    );
    assert_eq!((s, b), (200, err(json!(11), -32601, "Method not found")));
}

#[test]
fn l12_legacy_resource_not_found_is_32002() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(
            json!(5),
            "resources/read",
            json!({"uri": "file:///nonexistent.txt"}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err_data(
                json!(5),
                -32002,
                "Resource not found",
                json!({"uri": "file:///nonexistent.txt"})
            )
        )
    );
}

#[test]
fn legacy_resources_shapes() {
    let f = fixture();
    for (v, title) in [
        ("2025-11-25", true),
        ("2025-06-18", true),
        ("2025-03-26", false),
    ] {
        let (s, b) = send(&f, &lh(v), &req(json!(1), "resources/list", json!({})));
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"resources": resource_entries(title)}})
            )
        );
        let (s, b) = send(
            &f,
            &lh(v),
            &req(json!(2), "resources/read", json!({"uri": LLMS_URI})),
        );
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 2, "result": {"contents": llms_contents()}})
            )
        );
        let (s, b) = send(
            &f,
            &lh(v),
            &req(json!(3), "resources/templates/list", json!({})),
        );
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": 3, "result": {"resourceTemplates": []}})
            )
        );
    }
}

#[test]
fn legacy_tool_call_result_has_no_modern_fields() {
    let f = fixture();
    for v in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let name = TOOL_NAMES[0];
        let pending = call(
            &f,
            &lh(v),
            &req(
                json!(3),
                "tools/call",
                json!({"name": name, "arguments": {}}),
            ),
        );
        assert_eq!(pending.version().as_str(), v);
        let out = f.tools.run(pending.call());
        let (s, b) = parse_reply(pending.run());
        let mut result =
            json!({"content": [{"type": "text", "text": out.text}], "isError": out.is_error});
        if let (Some(sc), false) = (out.structured, v == "2025-03-26") {
            result["structuredContent"] = if sc.is_object() {
                sc
            } else {
                json!({"result": sc})
            };
        }
        assert_eq!(
            (s, b.unwrap()),
            (200, json!({"jsonrpc": "2.0", "id": 3, "result": result})),
            "{v}"
        );
    }
}

// ------------------------------------------------------------ envelope (T)

#[test]
fn parse_error_and_invalid_requests() {
    let f = fixture();
    let parse = err(
        json!(null),
        -32700,
        "Parse error: the body is not valid JSON",
    );
    for body in [
        "",
        "{",
        "not json",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x",
        "\u{feff}{}",
    ] {
        assert_eq!(
            send_raw(&f, &[], body),
            (400, Some(parse.clone())),
            "{body:?}"
        );
        assert_eq!(
            send_raw(&f, &mh("tools/list"), body),
            (400, Some(parse.clone())),
            "{body:?}"
        );
    }
    let cases: [(&str, Value, &str); 8] = [
        (
            r#""x""#,
            json!(null),
            "the body must be a JSON-RPC 2.0 request object",
        ),
        (
            "null",
            json!(null),
            "the body must be a JSON-RPC 2.0 request object",
        ),
        (
            r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
            json!(3),
            "\"jsonrpc\" must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            json!(null),
            "\"id\" must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            json!(null),
            "\"id\" must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            json!(null),
            "\"id\" must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":7}"#,
            json!("a"),
            "\"method\" must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
            json!(4),
            "\"params\" must be an object",
        ),
    ];
    for (body, id, why) in cases {
        let want = err(id, -32600, &format!("Invalid Request: {why}"));
        assert_eq!(send_raw(&f, &[], body), (400, Some(want.clone())), "{body}");
        assert_eq!(send_raw(&f, &mh("ping"), body), (400, Some(want)), "{body}");
    }
}

#[test]
fn id_zero_big_and_string_ids_are_echoed() {
    let f = fixture();
    for id in [
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("é\"\\\u{1}"),
    ] {
        let (s, b) = send(
            &f,
            &lh("2025-11-25"),
            &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        );
        assert_eq!(
            (s, b),
            (200, json!({"jsonrpc": "2.0", "id": id, "result": {}}))
        );
        let (s, b) = send(
            &f,
            &mh("server/discover"),
            &modern_req(id.clone(), "server/discover", json!({})),
        );
        assert_eq!(
            (s, b),
            (
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": discover_result()})
            )
        );
    }
}

#[test]
fn unknown_params_and_meta_keys_are_ignored() {
    let f = fixture();
    let mut body = modern_req(
        json!(1),
        "tools/list",
        json!({"extra": [1, 2], "progressToken": "p"}),
    );
    body["params"]["_meta"]["vendor.example/x"] = json!({"y": true});
    body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = json!("not an object");
    let (s, b) = send(&f, &mh("tools/list"), &body);
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": modern_tools_list()})
        )
    );
}

#[test]
fn cursors_are_refused_because_none_are_issued() {
    let f = fixture();
    let msg = "Invalid cursor: this list fits in one page and this server issues no cursors";
    let (s, b) = send(
        &f,
        &mh("tools/list"),
        &modern_req(json!(1), "tools/list", json!({"cursor": "abc"})),
    );
    assert_eq!((s, b), (400, err(json!(1), -32602, msg)));
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(2), "resources/list", json!({"cursor": "abc"})),
    );
    assert_eq!((s, b), (200, err(json!(2), -32602, msg)));
    let (s, _) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(3), "tools/list", json!({"cursor": null})),
    );
    assert_eq!(s, 200);
}

#[test]
fn echoed_values_are_clipped() {
    let f = fixture();
    let huge = "a".repeat(100_000);
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(1), "tools/call", json!({"name": huge})),
    );
    assert_eq!(s, 200);
    let msg = b["error"]["message"].as_str().unwrap();
    assert_eq!(msg, format!("Unknown tool: {}…", "a".repeat(200)));
    let mut h = mh("tools/call");
    h.push(("Mcp-Name", "b".repeat(50_000)));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(json!(2), "tools/call", json!({"name": huge})),
    );
    assert_eq!(s, 400);
    assert!(b["error"]["message"].as_str().unwrap().len() < 600);
    let mut b = modern_req(json!(3), "tools/list", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(huge);
    let h = vec![
        ("MCP-Protocol-Version", huge.clone()),
        ("Mcp-Method", "tools/list".to_string()),
    ];
    let (s, b) = send(&f, &h, &b);
    assert_eq!(s, 400);
    assert_eq!(
        b["error"]["data"]["requested"],
        json!(format!("{}…", "a".repeat(200)))
    );
}

#[test]
fn static_replies_differ_only_in_the_id() {
    let f = fixture();
    let raw = |id: u32| match outcome(
        &f,
        &lh("2025-11-25"),
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
    ) {
        Outcome::Reply(r) => String::from_utf8(r.body.unwrap()).unwrap(),
        Outcome::Call(_) => unreachable!(),
    };
    assert_eq!(raw(1).replacen("\"id\":1,", "\"id\":22,", 1), raw(22));
    assert!(raw(1).starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"#));
}

#[test]
fn error_without_id_shape() {
    let b: Value =
        serde_json::from_slice(&xmd::mcp::error_without_id(-32000, "Not Acceptable")).unwrap();
    assert_eq!(b, err(json!(null), -32000, "Not Acceptable"));
}

// ------------------------------------------------------------ handed cases

#[test]
fn c02_notifications_and_stray_responses_get_202_without_body() {
    let f = fixture();
    let h = lh("2025-11-25");
    assert_eq!(
        send_raw(
            &f,
            &h,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ),
        (202, None)
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#;
    assert_eq!(send_raw(&f, &h, cancel), (202, None));
    assert_eq!(
        send_raw(&f, &h, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
        (202, None)
    );
    // Modern variant: the same cancel body under modern headers.
    assert_eq!(
        send_raw(&f, &mh("notifications/cancelled"), cancel),
        (202, None)
    );
    // And the next request still works.
    let (s, _) = send(
        &f,
        &h,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}}),
    );
    assert_eq!(s, 200);
}

#[test]
fn c04_legacy_version_header_and_initialize_negotiation() {
    let f = fixture();
    let tools_list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    for bad in ["1900-01-01", "not-a-version"] {
        let (s, b) = send(&f, &lh(bad), &tools_list);
        assert_eq!(
            (s, b),
            (400, err(json!(1), -32600, &bad_header_message(bad))),
            "{bad}"
        );
    }
    let (s, b) = send(&f, &[], &tools_list);
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": legacy_tools("2025-03-26")}})
        )
    );

    let init = |v: &str| {
        req(
            json!(1),
            "initialize",
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "case-client", "version": "0.0.1"}}),
        )
    };
    let (s, b) = send(&f, &[], &init("2025-06-18"));
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": initialize_result("2025-06-18")})
        )
    );
    let (s, b) = send(&f, &lh("2099-01-01"), &init("2099-01-01"));
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": initialize_result("2025-11-25")})
        )
    );
    let (s, b) = send(&f, &[], &init("2026-07-28"));
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": initialize_result("2025-11-25")})
        )
    );
}

fn c06_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {
        "name": "x_md_get_profile", "arguments": {"handle": "example_user"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "case-client", "version": "0.0.1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

#[test]
fn c06_mirrored_headers_are_decoded_and_mismatches_refused_before_dispatch() {
    let f = fixture();
    let base = |name: Option<&str>, method: &str| {
        let mut h = vec![
            ("MCP-Protocol-Version", "2026-07-28".to_string()),
            ("Mcp-Method", method.to_string()),
        ];
        if let Some(n) = name {
            h.push(("Mcp-Name", n.to_string()));
        }
        h
    };
    // (a) valid encoded name, (g) lower-case header names.
    let a = call(
        &f,
        &base(Some("=?base64?eF9tZF9nZXRfcHJvZmlsZQ==?="), "tools/call"),
        &c06_body(),
    );
    assert_eq!(a.call().name, "x_md_get_profile");
    assert_eq!(a.call().arguments, json!({"handle": "example_user"}));
    let g = vec![
        ("mcp-protocol-version", "2026-07-28".to_string()),
        ("mcp-method", "tools/call".to_string()),
        ("mcp-name", "x_md_get_profile".to_string()),
    ];
    assert_eq!(call(&f, &g, &c06_body()).call().name, "x_md_get_profile");

    let decode_err = "invalid base64 payload in =?base64?…?= value";
    let cases: [(Vec<(&str, String)>, String); 6] = [
        (
            base(Some("=?base64?not*base64?="), "tools/call"),
            format!("Header mismatch: Mcp-Name header value '=?base64?not*base64?=' cannot be decoded ({decode_err})"),
        ),
        (
            base(Some("x_md_get_followers"), "tools/call"),
            "Header mismatch: Mcp-Name header value 'x_md_get_followers' does not match body value 'x_md_get_profile'"
                .into(),
        ),
        (
            base(Some("x_md_get_profile"), "tools/list"),
            "Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'".into(),
        ),
        (
            base(Some("X_MD_GET_PROFILE"), "tools/call"),
            "Header mismatch: Mcp-Name header value 'X_MD_GET_PROFILE' does not match body value 'x_md_get_profile'"
                .into(),
        ),
        (
            base(Some("=?BASE64?eF9tZF9nZXRfcHJvZmlsZQ==?="), "tools/call"),
            "Header mismatch: Mcp-Name header value '=?BASE64?eF9tZF9nZXRfcHJvZmlsZQ==?=' does not match body value \
             'x_md_get_profile'"
                .into(),
        ),
        (
            base(None, "tools/call"),
            "Header mismatch: required header Mcp-Name is missing (body value 'x_md_get_profile')".into(),
        ),
    ];
    for (h, msg) in cases {
        // A Reply (not a Call) means the tool was never prepared or run.
        let (s, b) = send(&f, &h, &c06_body());
        assert_eq!((s, b), (400, err(json!(12), -32020, &msg)));
    }
    assert_eq!(f.upstream.0.load(Ordering::SeqCst), 0, "upstream untouched");
}

#[test]
fn c07_unsupported_version_and_unknown_method_have_json_rpc_bodies() {
    let f = fixture();
    // (a)
    let h = vec![
        ("MCP-Protocol-Version", "2027-01-01".to_string()),
        ("Mcp-Method", "server/discover".into()),
    ];
    let mut b = modern_req(json!(1), "server/discover", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2027-01-01");
    let (s, body) = send(&f, &h, &b);
    assert_eq!(
        (s, body),
        (
            400,
            err_data(
                json!(1),
                -32022,
                "Unsupported protocol version",
                json!({"supported": ALL_VERSIONS, "requested": "2027-01-01"})
            )
        )
    );
    // (b)
    let (s, body) = send(
        &f,
        &mh("server/discover"),
        &modern_req(json!(1), "server/discover", json!({})),
    );
    assert_eq!(
        (s, body),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": discover_result()})
        )
    );
    // (c) This server does offer resources, so the method it does not offer
    // (prompts/list) stands in for the case's unoffered method.
    let (s, body) = send(
        &f,
        &mh("prompts/list"),
        &modern_req(json!(1), "prompts/list", json!({})),
    );
    assert_eq!((s, body), (404, err(json!(1), -32601, "Method not found")));
    // (d) handshake era: same error in a 200.
    let (s, body) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(1), "prompts/list", json!({})),
    );
    assert_eq!((s, body), (200, err(json!(1), -32601, "Method not found")));
}

#[test]
fn c08_batches_execute_nothing() {
    let f = fixture();
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    for h in [lh("2025-11-25"), lh("2025-03-26"), mh("tools/list")] {
        assert_eq!(send_raw(&f, &h, batch), (400, Some(batch_error())));
        assert_eq!(send_raw(&f, &h, "[]"), (400, Some(batch_error())));
    }
    assert_eq!(f.upstream.0.load(Ordering::SeqCst), 0);
}

fn available() -> Value {
    json!({"availableTools": TOOL_NAMES})
}

#[test]
fn c14_unknown_tool_and_invalid_arguments() {
    let f = fixture();
    // (f) unknown tool, both eras.
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(
            json!(14),
            "tools/call",
            json!({"name": "x_md_delete_post", "arguments": {}}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err_data(
                json!(14),
                -32602,
                "Unknown tool: x_md_delete_post",
                available()
            )
        )
    );
    let mut h = mh("tools/call");
    h.push(("Mcp-Name", "x_md_delete_post".into()));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(
            json!(15),
            "tools/call",
            json!({"name": "x_md_delete_post", "arguments": {}}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err_data(
                json!(15),
                -32602,
                "Unknown tool: x_md_delete_post",
                available()
            )
        )
    );

    // (g) arguments that are not an object: -32602 with the tool's inputSchema.
    let schema = Tools::input_schema("x_md_get_profile").expect("schema");
    let want = |id: i64| {
        err_data(
            json!(id),
            -32602,
            "Invalid arguments for tool x_md_get_profile: params.arguments must be an object of named arguments",
            json!({"inputSchema": schema}),
        )
    };
    let g = json!({"name": "x_md_get_profile", "arguments": "handle=example_user"});
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(16), "tools/call", g.clone()),
    );
    assert_eq!((s, b), (200, want(16)));
    let mut h = mh("tools/call");
    h.push(("Mcp-Name", "x_md_get_profile".into()));
    let (s, b) = send(&f, &h, &modern_req(json!(17), "tools/call", g));
    assert_eq!((s, b), (400, want(17)));

    // params.name missing or not a string.
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(18), "tools/call", json!({"name": 7})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(
                json!(18),
                -32602,
                "Invalid params: params.name must be a string naming a tool"
            )
        )
    );
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(19), "tools/call", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(json!(19), -32602, "Invalid params: params.name is missing")
        )
    );
    assert_eq!(f.upstream.0.load(Ordering::SeqCst), 0, "upstream untouched");
}

#[test]
fn c14_invalid_arguments_from_the_tool_carry_its_schema() {
    // Whatever the tools reject (per their real schemas), the dispatcher
    // must turn it into -32602 with that tool's inputSchema.
    let f = fixture();
    let candidates = [
        json!({"handle": "has spaces here"}),
        json!({}),
        json!({"handle": "example_user", "unknown_flag": true}),
        json!({"query": "rust", "limit": 500}),
    ];
    for name in TOOL_NAMES {
        for args in &candidates {
            let Err(xmd::x::tools::PrepareError::InvalidArguments(why)) =
                Tools::prepare(name, Some(args))
            else {
                continue;
            };
            let (s, b) = send(
                &f,
                &lh("2025-11-25"),
                &req(
                    json!(1),
                    "tools/call",
                    json!({"name": name, "arguments": args}),
                ),
            );
            assert_eq!(
                (s, b),
                (
                    200,
                    err_data(
                        json!(1),
                        -32602,
                        &format!("Invalid arguments for tool {name}: {why}"),
                        json!({"inputSchema": Tools::input_schema(name).unwrap()})
                    )
                )
            );
        }
    }
    assert_eq!(f.upstream.0.load(Ordering::SeqCst), 0);
}

#[test]
fn c16_tool_names_are_portable_and_equal_in_both_eras() {
    let f = fixture();
    let names = |b: &Value| -> Vec<String> {
        b["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, modern) = send(
        &f,
        &mh("tools/list"),
        &modern_req(json!(1), "tools/list", json!({})),
    );
    let modern = names(&modern);
    assert_eq!(modern, TOOL_NAMES);
    for v in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let (_, legacy) = send(&f, &lh(v), &req(json!(1), "tools/list", json!({})));
        assert_eq!(names(&legacy), modern, "{v}");
    }
    let mut unique = modern.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), modern.len());
    for n in &modern {
        assert!(is_valid_tool_name(n), "{n}");
        assert!(n.len() <= 18 + 7, "{n} leaves room for client prefixes");
    }
    assert!(
        !is_valid_tool_name("a.b")
            && !is_valid_tool_name("")
            && !is_valid_tool_name(&"a".repeat(65))
    );
}

#[test]
fn modern_tool_schemas_are_the_tools_own() {
    let f = fixture();
    let (_, b) = send(
        &f,
        &mh("tools/list"),
        &modern_req(json!(1), "tools/list", json!({})),
    );
    for t in b["result"]["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(
            Some(&t["inputSchema"]),
            Tools::input_schema(name).as_ref(),
            "{name}"
        );
    }
}
