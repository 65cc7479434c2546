//! Handed real-world cases C02, C04, C06, C07, C08, C14, C16.

use super::*;

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
    assert_eq!(a.call().name(), "x_md_get_profile");
    assert_eq!(a.call().arguments(), json!({"handle": "example_user"}));
    let g = vec![
        ("mcp-protocol-version", "2026-07-28".to_string()),
        ("mcp-method", "tools/call".to_string()),
        ("mcp-name", "x_md_get_profile".to_string()),
    ];
    assert_eq!(call(&f, &g, &c06_body()).call().name(), "x_md_get_profile");

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
    // (c) This server does offer resources, so a method it does not offer
    // (completion/complete) stands in for the case's unoffered method.
    let (s, body) = send(
        &f,
        &mh("completion/complete"),
        &modern_req(json!(1), "completion/complete", json!({})),
    );
    assert_eq!((s, body), (404, err(json!(1), -32601, "Method not found")));
    // (d) handshake era: same error in a 200.
    let (s, body) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(1), "completion/complete", json!({})),
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

/// The handshake-era revisions; 2026-07-28 is tested with `mh`.
const HANDSHAKE_REVISIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

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
    // Every handshake revision answers the same -32602 (the product's
    // contract overrides SEP-1303's isError, protocol.md M17).
    for v in HANDSHAKE_REVISIONS {
        let (s, b) = send(&f, &lh(v), &req(json!(16), "tools/call", g.clone()));
        assert_eq!((s, b), (200, want(16)), "{v}");
    }
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
            let want = err_data(
                json!(1),
                -32602,
                &format!("Invalid arguments for tool {name}: {why}"),
                json!({"inputSchema": Tools::input_schema(name).unwrap()}),
            );
            let call = json!({"name": name, "arguments": args});
            for v in HANDSHAKE_REVISIONS {
                let (s, b) = send(&f, &lh(v), &req(json!(1), "tools/call", call.clone()));
                assert_eq!((s, b), (200, want.clone()), "{v} {name} {args}");
            }
            // 2026-07-28: the same error, in a 400.
            let mut h = mh("tools/call");
            h.push(("Mcp-Name", name.to_string()));
            let (s, b) = send(&f, &h, &modern_req(json!(1), "tools/call", call));
            assert_eq!((s, b), (400, want), "2026-07-28 {name} {args}");
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
