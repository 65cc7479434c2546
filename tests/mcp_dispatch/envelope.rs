//! JSON-RPC envelope rules that hold in every era.

use super::*;

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
        Outcome::Reply(r) => String::from_utf8(r.message().unwrap()).unwrap(),
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
