//! Handshake-era framing: protocol.md L1–L12 and per-revision shapes.

use super::*;

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
        &req(json!(11), "completion/complete", json!({})),
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
        let name = TOOL_NAMES[1];
        let pending = call(
            &f,
            &lh(v),
            &req(
                json!(3),
                "tools/call",
                json!({"name": name, "arguments": {"handle": "demo_author"}}),
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

/// The conformance suite's `prompts-list` and `logging-set-level`
/// scenarios: an empty prompt list, `{}` for a valid level, -32602 for an
/// invalid one, and -32602 naming an unknown prompt.
#[test]
fn l13_prompts_list_is_empty_and_set_level_is_accepted() {
    let f = fixture();
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(1), "prompts/list", json!({})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"prompts": []}})
        )
    );
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(json!(2), "logging/setLevel", json!({"level": "info"})),
    );
    assert_eq!(
        (s, b),
        (200, json!({"jsonrpc": "2.0", "id": 2, "result": {}}))
    );
    let (s, b) = send(
        &f,
        &lh("2025-06-18"),
        &req(json!(3), "logging/setLevel", json!({"level": "loud"})),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(
                json!(3),
                -32602,
                "Invalid params: params.level must be one of debug, info, notice, warning, error, critical, alert, emergency"
            )
        )
    );
    let (s, b) = send(
        &f,
        &lh("2025-11-25"),
        &req(
            json!(4),
            "prompts/get",
            json!({"name": "test_simple_prompt"}),
        ),
    );
    assert_eq!(
        (s, b),
        (
            200,
            err(
                json!(4),
                -32602,
                "Unknown prompt: test_simple_prompt (this server offers no prompts; prompts/list is empty)"
            )
        )
    );
}
