//! End to end over the wire: the real binary, a loopback fake FxTwitter
//! upstream, and exact JSON-RPC bytes for both protocol eras, including the
//! handed cases C02, C04, C06, C07 and C08.

mod common;
mod util;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const POST_ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";
const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"case-client","version":"0.0.1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn upstream() -> FakeUpstream {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    up.on(
        &format!("/2/thread/{POST_ID}"),
        Answer::json(
            200,
            &format!(
                r#"{{"code":200,"status":{s},"thread":[{s}],"author":null}}"#,
                s = status_json()
            ),
        ),
    );
    up
}

fn status_json() -> String {
    let v: Value =
        serde_json::from_str(&common::fake_upstream::fixture("status-plain.json")).unwrap();
    v["status"].to_string()
}

fn start(up: &FakeUpstream, extra: &[&str]) -> Xmd {
    let base = up.base_url();
    let mut args = vec!["--upstream", base.as_str()];
    args.extend_from_slice(extra);
    Xmd::start(&args)
}

/// The Markdown `x_md_get_post` renders in-process for the same upstream:
/// the wire must carry exactly these bytes.
fn expected_post_text(up: &FakeUpstream, args: Value) -> (String, Value) {
    use xmd::x::tools::Tools;
    let upstream = Arc::new(xmd::x::upstream::HttpUpstream::new(
        &up.base_url(),
        Duration::from_secs(5),
    ));
    let tools = Tools::new(upstream);
    let call = Tools::prepare("x_md_get_post", Some(&args)).unwrap();
    let out = tools.run(&call);
    assert!(!out.is_error, "{}", out.text);
    (out.text, out.structured.unwrap())
}

fn legacy_headers(version: Option<&str>) -> Vec<String> {
    let mut h = vec![
        "Content-Type: application/json".to_string(),
        "Accept: application/json, text/event-stream".to_string(),
    ];
    if let Some(v) = version {
        h.push(format!("MCP-Protocol-Version: {v}"));
    }
    h
}

fn modern_headers(method: &str, name: Option<&str>) -> Vec<String> {
    let mut h = legacy_headers(Some("2026-07-28"));
    h.push(format!("Mcp-Method: {method}"));
    if let Some(n) = name {
        h.push(format!("Mcp-Name: {n}"));
    }
    h
}

fn send(x: &Xmd, headers: &[String], body: &str) -> Reply {
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    roundtrip(x, &post(&x.host(), &refs, body))
}

#[test]
fn legacy_handshake_list_and_call_over_sse() {
    let up = upstream();
    let x = start(&up, &[]);
    let init = send(
        &x,
        &legacy_headers(None),
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    assert_eq!(init.status, 200);
    assert_eq!(
        init.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    let v = init.json();
    assert_eq!(v["id"], 0);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(v["result"]["serverInfo"]["name"], "xmd");
    assert_eq!(
        v["result"]["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}, "logging": {}})
    );
    assert!(v["result"].get("resultType").is_none());
    assert_eq!(init.header("mcp-session-id"), None);

    let list = send(
        &x,
        &legacy_headers(Some("2025-11-25")),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let names: Vec<String> = list.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "x_md_get_post",
            "x_md_get_profile",
            "x_md_search_posts",
            "x_md_get_followers",
            "x_md_get_following",
            "x_md_get_quotes",
            "x_md_get_reposts",
            "x_md_get_trends"
        ]
    );

    let args = json!({"url": POST_URL, "thread": "off"});
    let (text, structured) = expected_post_text(&up, args.clone());
    let before = up.request_count();
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": args}}).to_string();
    let call = send(&x, &legacy_headers(Some("2025-11-25")), &body);
    assert_eq!(call.status, 200);
    assert_eq!(
        call.json(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false}})
    );
    assert!(
        text.contains("Small release day: cold starts are 30% faster"),
        "{text}"
    );
    assert_eq!(up.request_count(), before + 1);
    assert_eq!(
        up.targets().last().map(String::as_str),
        Some("/2/status/2087208847298015232")
    );
}

#[test]
fn modern_discover_and_call_over_json() {
    let up = upstream();
    let x = start(&up, &[]);
    let mut h = modern_headers("server/discover", None);
    h[1] = "Accept: application/json".into();
    let r = send(
        &x,
        &h,
        &format!(
            r#"{{"jsonrpc":"2.0","id":"d-1","method":"server/discover","params":{{"_meta":{META}}}}}"#
        ),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    let v = r.json();
    assert_eq!(v["id"], "d-1");
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(
        v["result"]["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(v["result"]["ttlMs"], 3_600_000);
    assert_eq!(v["result"]["cacheScope"], "public");
    assert_eq!(
        v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "xmd"
    );

    let args = json!({"url": POST_URL, "thread": "off", "full": true});
    let (text, structured) = expected_post_text(&up, args.clone());
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{args},"_meta":{META}}}}}"#
    );
    let r = send(
        &x,
        &modern_headers("tools/call", Some("x_md_get_post")),
        &body,
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(
        v["result"]["content"],
        json!([{"type": "text", "text": text}])
    );
    assert_eq!(v["result"]["structuredContent"], structured);
    assert_eq!(v["result"]["isError"], false);
}

#[test]
fn c02_notifications_get_bare_202_and_the_connection_lives_on() {
    let up = upstream();
    let x = start(&up, &[]);
    let h = x.host();
    let legacy: Vec<String> = legacy_headers(Some("2025-11-25"));
    let refs: Vec<&str> = legacy.iter().map(String::as_str).collect();
    let mut s = x.connect();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
    ] {
        s.write_all(&post(&h, &refs, body)).unwrap();
        let r = read_reply(&mut s, false);
        assert_eq!(r.status, 202, "{body}");
        let lines: Vec<&str> = r.head.lines().filter(|l| !l.starts_with("Date:")).collect();
        assert_eq!(
            lines,
            ["HTTP/1.1 202 Accepted", "Content-Length: 0", ""],
            "{body}"
        );
        assert!(r.body.is_empty());
    }
    let modern = modern_headers("notifications/cancelled", None);
    let mrefs: Vec<&str> = modern.iter().map(String::as_str).collect();
    s.write_all(&post(&h, &mrefs, &format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":7,"_meta":{META}}}}}"#))).unwrap();
    assert_eq!(read_reply(&mut s, false).status, 202);
    s.write_all(&post(
        &h,
        &refs,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
    ))
    .unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["result"]["tools"].as_array().unwrap().len(),
        xmd::x::tools::TOOL_NAMES.len()
    );
}

#[test]
fn c04_handshake_versions() {
    let up = upstream();
    let x = start(&up, &[]);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    for bad in ["1900-01-01", "not-a-version"] {
        let r = send(&x, &legacy_headers(Some(bad)), list);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.json().get("error").is_some());
        assert!(r.json().get("result").is_none());
    }
    assert_eq!(send(&x, &legacy_headers(None), list).status, 200);
    let init = |proposed: &str, header: Option<&str>| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{proposed}","capabilities":{{}},"clientInfo":{{"name":"case-client","version":"0.0.1"}}}}}}"#
        );
        let r = send(&x, &legacy_headers(header), &body);
        assert_eq!(r.status, 200, "{proposed}");
        assert_eq!(r.header("mcp-session-id"), None);
        r.json()["result"]["protocolVersion"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(init("2025-06-18", None), "2025-06-18");
    assert_eq!(init("2099-01-01", Some("2099-01-01")), "2025-11-25");
    assert_eq!(init("2026-07-28", None), "2025-11-25");
}

#[test]
fn c06_mirrored_headers_are_checked_before_dispatch() {
    let up = upstream();
    let x = start(&up, &[]);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"{POST_URL}","thread":"off"}},"_meta":{META}}}}}"#
    );
    let ok = |headers: Vec<String>| send(&x, &headers, &body);
    // (a) sentinel-encoded name (base64 of x_md_get_post), (g) lower-case names.
    let r = ok(modern_headers(
        "tools/call",
        Some("=?base64?eF9tZF9nZXRfcG9zdA==?="),
    ));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["isError"], false);
    let mut lower = legacy_headers(Some("2026-07-28"));
    lower.push("mcp-method: tools/call".into());
    lower.push("mcp-name: x_md_get_post".into());
    assert_eq!(ok(lower).status, 200);
    let count = up.request_count();
    let variants = [
        modern_headers("tools/call", Some("=?base64?not*base64?=")),
        modern_headers("tools/call", Some("x_md_get_followers")),
        modern_headers("tools/list", Some("x_md_get_post")),
        modern_headers("tools/call", Some("X_MD_GET_POST")),
        modern_headers("tools/call", Some("=?BASE64?eF9tZF9nZXRfcG9zdA==?=")),
        modern_headers("tools/call", None),
    ];
    for (i, h) in variants.into_iter().enumerate() {
        let r = ok(h);
        assert_eq!(r.status, 400, "variant {i}");
        let v = r.json();
        assert_eq!(v["id"], 12, "variant {i}");
        assert_eq!(v["error"]["code"], -32020, "variant {i}");
    }
    assert_eq!(
        up.request_count(),
        count,
        "upstream untouched by refused calls"
    );
}

#[test]
fn c07_unsupported_version_and_unknown_methods() {
    let up = upstream();
    let x = start(&up, &[]);
    let meta = META.replace("2026-07-28", "2027-01-01");
    let mut h = modern_headers("server/discover", None);
    h[2] = "MCP-Protocol-Version: 2027-01-01".into();
    let r = send(
        &x,
        &h,
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{meta}}}}}"#
        ),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    let v = r.json();
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["error"]["data"]["requested"], "2027-01-01");
    assert_eq!(
        v["error"]["data"]["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    let r = send(
        &x,
        &modern_headers("completion/complete", None),
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{{"_meta":{META}}}}}"#
        ),
    );
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": r.json()["error"]["message"]}})
    );
    let r = send(
        &x,
        &legacy_headers(Some("2025-11-25")),
        r#"{"jsonrpc":"2.0","id":1,"method":"completion/complete"}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["error"]["code"], -32601);
}

#[test]
fn c08_batches_are_refused_whole() {
    let up = upstream();
    let x = start(&up, &[]);
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    for (version, method) in [
        ("2025-11-25", None),
        ("2026-07-28", Some("tools/list")),
        ("2025-03-26", None),
    ] {
        let mut h = legacy_headers(Some(version));
        if let Some(m) = method {
            h.push(format!("Mcp-Method: {m}"));
        }
        for body in [batch, "[]"] {
            let r = send(&x, &h, body);
            assert_eq!(r.status, 400, "{version} {body}");
            let v = r.json();
            assert_eq!(v["id"], Value::Null);
            assert_eq!(v["error"]["code"], -32600);
        }
    }
}

#[test]
fn upstream_failures_are_tool_errors_not_transport_errors() {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(429, "error-429-rate-limited.json").header("Retry-After", "30"),
    );
    let x = start(&up, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": POST_URL, "thread": "off"}}}).to_string();
    let r = send(&x, &legacy_headers(Some("2025-11-25")), &body);
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"].get("structuredContent").is_none());
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("(HTTP 503, code upstream_rate_limited, retry after 30s)"),
        "{text}"
    );

    // Nothing listens on the upstream port: a network failure, still a result.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let x = Xmd::start(&["--upstream", &dead_url]);
    let r = send(&x, &legacy_headers(Some("2025-11-25")), &body);
    assert_eq!(r.status, 200);
    let text = r.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("code fxtwitter_network"), "{text}");
}

/// One worker, a queue of one, a 1.5 s upstream, the workers blocking
/// through each upstream request (`--upstream-io threads`): sends `request`
/// (built for the server's host) on three connections 50 ms apart and
/// reads the three answers; the third finds the queue full. Also returns
/// the upstream and the server (both live while held) and the raw request.
/// (With the event loops making the requests, the default, a call waiting
/// for the upstream holds no worker: see
/// `calls_waiting_for_the_upstream_hold_no_worker`.)
fn three_behind_one_worker(
    request: impl Fn(&str) -> Vec<u8>,
) -> (FakeUpstream, Xmd, Vec<u8>, Vec<Reply>) {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json").delay(Duration::from_millis(1500)),
    );
    let x = start(
        &up,
        &["--workers", "1", "--queue", "1", "--upstream-io", "threads"],
    );
    let raw = request(&x.host());
    let mut conns: Vec<_> = (0..3).map(|_| x.connect()).collect();
    for c in &mut conns {
        c.write_all(&raw).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    let replies: Vec<_> = conns.iter_mut().map(|c| read_reply(c, false)).collect();
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 503]);
    let busy = &replies[2];
    assert_eq!(busy.header("retry-after").as_deref(), Some("1"));
    (up, x, raw, replies)
}

/// Issue 28 item 3: with the event loops making the upstream requests, a
/// call waiting for the upstream is parked on its loop, not on a worker.
/// One worker and a queue of one serve ten calls against a 1.5 s upstream,
/// sent 20 ms apart (each first run, a few hundred microseconds, is done
/// before the next call comes: the queue bounds CPU work, not waiting),
/// all in about one upstream round trip, with one upstream request for
/// the ten (single-flight across the loops).
#[test]
fn calls_waiting_for_the_upstream_hold_no_worker() {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json").delay(Duration::from_millis(1500)),
    );
    let x = start(
        &up,
        &["--workers", "1", "--queue", "1", "--upstream-io", "loop"],
    );
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": POST_URL, "thread": "off"}}}).to_string();
    let headers = legacy_headers(Some("2025-11-25"));
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let raw = post(&x.host(), &refs, &body);
    let started = std::time::Instant::now();
    let mut conns: Vec<_> = (0..10).map(|_| x.connect()).collect();
    for c in &mut conns {
        c.write_all(&raw).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let statuses: Vec<u16> = conns
        .iter_mut()
        .map(|c| read_reply(c, false).status)
        .collect();
    assert_eq!(statuses, [200; 10]);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2900), "{took:?}");
    assert_eq!(up.count_prefix("/2/status/"), 1);
}

#[test]
fn full_worker_queue_answers_503_with_retry_after() {
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": POST_URL, "thread": "off"}}}).to_string();
    let headers = legacy_headers(Some("2025-11-25"));
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let (_up, x, raw, replies) = three_behind_one_worker(|host| post(host, &refs, &body));
    // The refusal is this request's JSON-RPC error: its id, not null.
    let busy = &replies[2];
    assert_eq!(
        busy.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        busy.json(),
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Server busy: worker queue full, retry shortly"}})
    );
    let mut c = x.connect();
    c.write_all(&raw).unwrap();
    assert_eq!(read_reply(&mut c, false).status, 200, "the server recovers");
}

#[test]
fn full_worker_queue_on_an_x_route_is_a_problem_document() {
    let (_up, _x, _, replies) = three_behind_one_worker(|host| {
        format!("GET /demo_author/status/{POST_ID}?thread=off HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n\r\n").into_bytes()
    });
    let busy = &replies[2];
    assert_eq!(
        busy.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(
        busy.json(),
        json!({"type": "about:blank", "title": "Service Unavailable", "status": 503,
               "detail": "Every worker is busy and the tool-call queue is full; retry shortly.",
               "code": "server_busy", "retry_after": 1})
    );
}

#[test]
fn sigterm_during_a_slow_call_still_delivers_its_answer() {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json").delay(Duration::from_millis(800)),
    );
    let mut x = start(&up, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": POST_URL, "thread": "off"}}}).to_string();
    let headers = legacy_headers(Some("2025-11-25"));
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut c = x.connect();
    c.write_all(&post(&x.host(), &refs, &body)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    x.sigterm();
    let r = read_reply(&mut c, false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert_eq!(r.json()["result"]["isError"], false);
    assert_eq!(x.child.wait().unwrap().code(), Some(0));
}

#[test]
fn repeated_calls_are_answered_from_the_result_cache() {
    let up = upstream();
    let x = start(&up, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": POST_URL, "thread": "off"}}}).to_string();
    let first = send(&x, &legacy_headers(Some("2025-11-25")), &body).json();
    assert_eq!(first["result"]["structuredContent"]["cache"], "miss");
    let count = up.request_count();
    for version in ["2025-11-25", "2025-03-26"] {
        let again = send(&x, &legacy_headers(Some(version)), &body).json();
        assert_eq!(again["id"], 8);
        assert_eq!(
            again["result"]["content"], first["result"]["content"],
            "{version}"
        );
        if version == "2025-11-25" {
            let mut want = first["result"]["structuredContent"].clone();
            want["cache"] = json!("hit");
            assert_eq!(again["result"]["structuredContent"], want);
        } else {
            assert!(
                again["result"].get("structuredContent").is_none(),
                "2025-03-26 has none"
            );
        }
    }
    let modern = format!(
        r#"{{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"{POST_URL}","thread":"off"}},"_meta":{META}}}}}"#
    );
    let r = send(
        &x,
        &modern_headers("tools/call", Some("x_md_get_post")),
        &modern,
    )
    .json();
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["structuredContent"]["cache"], "hit");
    assert_eq!(
        up.request_count(),
        count,
        "no upstream request for a cached result"
    );
}

/// `x_md_get_quotes` and `x_md_get_reposts` over the wire in both eras:
/// the result carries exactly the text and `structuredContent` the tools
/// compute in-process over the same upstream (the cache status aside),
/// and walking `next_cursor` reads every row once.
#[test]
fn quotes_and_reposts_tools_call_over_the_wire() {
    use common::status_lists::serve_status_list;
    let up = upstream();
    serve_status_list(&up, "quotes");
    serve_status_list(&up, "reposts");
    // One cursor secret, so the server's cursors are the in-process ones.
    let secret = "e2e-cursor-secret-of-at-least-32-bytes";
    let x = start(&up, &["--cursor-secret", secret]);
    let tools = xmd::x::tools::Tools::new(Arc::new(xmd::x::upstream::HttpUpstream::new(
        &up.base_url(),
        Duration::from_secs(5),
    )))
    .with_settings(xmd::x::budget::Settings {
        cursor_key: xmd::x::cursor::CursorKey::from_secret(secret.as_bytes()),
        ..Default::default()
    });
    let public = format!("http://{}", x.addr);
    for (tool, key) in [("x_md_get_quotes", "posts"), ("x_md_get_reposts", "users")] {
        let mut args = json!({"url": POST_URL, "limit": 2});
        let mut rows = Vec::new();
        for id in 1..10 {
            let modern = id % 2 == 0;
            let body = if modern {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{META}}}}}"#
                )
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
                )
            };
            let headers = if modern {
                modern_headers("tools/call", Some(tool))
            } else {
                legacy_headers(Some("2025-06-18"))
            };
            let r = send(&x, &headers, &body);
            assert_eq!(r.status, 200, "{tool}: {}", r.text());
            let result = r.json()["result"].clone();
            assert_eq!(result["isError"], false, "{result}");
            let call = xmd::x::tools::Tools::prepare(tool, Some(&args)).unwrap();
            let want = tools.run(&call);
            let text = want.text.replace("](/", &format!("]({public}/"));
            assert_eq!(result["content"][0]["text"], text.as_str(), "{tool}");
            let mut sc = result["structuredContent"].clone();
            let mut want_sc = want.structured.unwrap();
            sc["cache"] = json!(null);
            want_sc["cache"] = json!(null);
            assert_eq!(sc, want_sc, "{tool}");
            rows.extend(
                sc[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v["id"].as_str().unwrap().to_string()),
            );
            match sc.get("next_cursor").and_then(Value::as_str) {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
        let mut unique = rows.clone();
        unique.sort();
        unique.dedup();
        assert_eq!((rows.len(), unique.len()), (5, 5), "{tool}: {rows:?}");
    }
}
