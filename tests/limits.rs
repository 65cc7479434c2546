//! Abuse limits against the real binary: the per-client `tools/call` rate
//! limit (`--rate-limit`, `--rate-burst`) and the global upstream budget
//! (`--upstream-budget`).

mod common;
mod util;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const POST_ID: &str = "2087208847298015232";
const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn upstream() -> FakeUpstream {
    let up = FakeUpstream::start();
    up.handler(|target| {
        target
            .starts_with("/2/status/")
            .then(|| Answer::fixture(200, "status-plain.json"))
    });
    up
}

fn call_body(id: u32, post_id: &str, modern: bool) -> String {
    let meta = if modern {
        format!(r#","_meta":{META}"#)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{post_id}","handle":"demo_author","thread":"off"}}{meta}}}}}"#
    )
}

fn call_headers(modern: bool) -> Vec<&'static str> {
    let mut h = vec![
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ];
    if modern {
        h.extend([
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: x_md_get_post",
        ]);
    } else {
        h.push("MCP-Protocol-Version: 2025-11-25");
    }
    h
}

/// One `x_md_get_post` call from 127.0.0.1; returns the JSON-RPC message.
fn call(x: &Xmd, id: u32, post_id: &str, modern: bool) -> Value {
    let r = roundtrip(
        x,
        &post(
            &x.host(),
            &call_headers(modern),
            &call_body(id, post_id, modern),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// The same call sent from another loopback address (127.0.0.2). std's
/// `TcpStream` cannot choose its source address, so a one-line Python
/// client does (python3 is already required by the interop checks).
fn call_from_127_0_0_2(x: &Xmd, id: u32) -> Value {
    let headers = [
        "Content-Type: application/json",
        "Accept: application/json",
        "MCP-Protocol-Version: 2025-11-25",
        "Connection: close",
    ];
    let raw = post(&x.host(), &headers, &call_body(id, POST_ID, false));
    let script = "import socket,sys\n\
        s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=10,source_address=('127.0.0.2',0))\n\
        s.sendall(sys.stdin.buffer.read())\n\
        out=b''\n\
        while True:\n\
        \x20   b=s.recv(65536)\n\
        \x20   if not b: break\n\
        \x20   out+=b\n\
        sys.stdout.buffer.write(out)\n";
    let mut child = Command::new("python3")
        .args(["-c", script, &x.addr.port().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for the second-address client");
    child.stdin.take().unwrap().write_all(&raw).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python client failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    serde_json::from_str(body).unwrap()
}

fn is_error(v: &Value) -> bool {
    v["result"]["isError"]
        .as_bool()
        .unwrap_or_else(|| panic!("not a tools/call result: {v}"))
}

fn text(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap()
}

const LIMITED: &str = "Too many tool calls from this address. Retry after 1s. (HTTP 429, code rate_limited, retry after 1s)";

#[test]
fn a_client_past_its_burst_gets_is_error_naming_the_wait_and_others_do_not() {
    let up = upstream();
    let base = up.base_url();
    // No cache: a cached result is answered like tools/list, without a
    // worker or the upstream, and is not rate limited.
    let x = Xmd::start(&[
        "--upstream",
        &base,
        "--cache-bytes",
        "0",
        "--rate-limit",
        "1",
        "--rate-burst",
        "3",
        "--log-format",
        "off",
    ]);
    // The burst: three calls (both eras) go through.
    for (id, modern) in [(1, false), (2, true), (3, false)] {
        let v = call(&x, id, POST_ID, modern);
        assert!(!is_error(&v), "{v}");
    }
    // The fourth is refused in each era's own result shape, with the id.
    let legacy = call(&x, 4, POST_ID, false);
    assert_eq!(
        legacy,
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": LIMITED}], "isError": true}})
    );
    let modern = call(&x, 5, POST_ID, true);
    assert_eq!(modern["id"], 5);
    assert_eq!(modern["result"]["resultType"], "complete");
    assert!(is_error(&modern));
    assert_eq!(text(&modern), LIMITED);
    // Another address has its own bucket.
    let other = call_from_127_0_0_2(&x, 6);
    assert_eq!(other["id"], 6);
    assert!(!is_error(&other), "{other}");
    // A refused call never reaches the upstream: the three calls of the
    // burst and the other address's call fetched (no cache), nothing else.
    assert_eq!(up.count_prefix("/2/status/"), 4);
    // Non-tool methods are not limited.
    let r = roundtrip(
        &x,
        &post(
            &x.host(),
            &call_headers(false),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
        ),
    );
    assert_eq!(r.status, 200);
    assert!(r.json()["result"]["tools"].is_array());
    // After the announced wait the client may call again.
    std::thread::sleep(Duration::from_millis(1100));
    assert!(!is_error(&call(&x, 8, POST_ID, false)));
}

#[test]
fn rate_limit_zero_turns_it_off() {
    let up = upstream();
    let base = up.base_url();
    let x = Xmd::start(&[
        "--upstream",
        &base,
        "--rate-limit",
        "0",
        "--rate-burst",
        "1",
        "--log-format",
        "off",
    ]);
    for id in 0..5 {
        assert!(!is_error(&call(&x, id, POST_ID, false)));
    }
}

#[test]
fn the_upstream_budget_fails_fast_without_sending() {
    let up = upstream();
    let base = up.base_url();
    // 1 request/s with a burst of 3 (UPSTREAM_BUDGET_BURST_SECS); no cache,
    // so every call needs the upstream; no per-client limit.
    let x = Xmd::start(&[
        "--upstream",
        &base,
        "--upstream-budget",
        "1",
        "--cache-bytes",
        "0",
        "--rate-limit",
        "0",
        "--log-format",
        "off",
    ]);
    for id in 0..3 {
        let v = call(&x, id, POST_ID, false);
        assert!(!is_error(&v), "{v}");
    }
    assert_eq!(up.request_count(), 3);
    let v = call(&x, 3, POST_ID, true);
    assert!(is_error(&v));
    assert_eq!(
        text(&v),
        "xmd is at its own limit of requests to FxTwitter right now; no request was sent. \
         (HTTP 503, code upstream_budget, retry after 1s)"
    );
    assert_eq!(up.request_count(), 3, "the refused call sent nothing");
    std::thread::sleep(Duration::from_millis(1100));
    assert!(!is_error(&call(&x, 4, POST_ID, false)));
    assert_eq!(up.request_count(), 4);
}
