//! 2026-07-28 framing: protocol.md M1–M26.

use super::*;

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
            json!({"name": first, "arguments": {"url": "https://x.com/demo_author/status/2087208847298015232"}}),
        ),
    );
    assert_eq!(pending.call().name(), first);
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
            json!({"name": name, "arguments": {"handle": "demo_author"}}),
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

/// The conformance suite's `caching` and `prompts-list` scenarios call
/// `prompts/list` unconditionally: an empty list with the cache hints;
/// `prompts/get` for any name is 400 -32602.
#[test]
fn m_prompts_list_is_empty_with_cache_hints() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &mh("prompts/list"),
        &modern_req(json!(1), "prompts/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"prompts": [], "resultType": "complete",
                   "ttlMs": 3_600_000, "cacheScope": "public", "_meta": server_meta()}})
        )
    );
    let mut h = mh("prompts/get");
    h.push(("Mcp-Name", "p".to_string()));
    let (s, b) = send(
        &f,
        &h,
        &modern_req(json!(2), "prompts/get", json!({"name": "p"})),
    );
    assert_eq!(
        (s, b),
        (
            400,
            err(
                json!(2),
                -32602,
                "Unknown prompt: p (this server offers no prompts; prompts/list is empty)"
            )
        )
    );
}
