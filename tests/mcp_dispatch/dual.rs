//! Era routing on one endpoint: protocol.md D1–D9.

use super::*;

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
