//! HTTP/1.1 behaviour of the real binary on the wire: framing, limits,
//! timeouts, routes, CORS and DNS-rebinding protection. Raw bytes over
//! `TcpStream` to `xmd` on 127.0.0.1:0.

mod util;

use std::io::Write;
use std::thread::sleep;
use std::time::{Duration, Instant};

use util::*;

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
const LEGACY: [&str; 3] = [
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    "MCP-Protocol-Version: 2025-11-25",
];

fn legacy_list(x: &Xmd, accept: Option<&str>) -> Vec<u8> {
    let mut h = vec![
        "Content-Type: application/json",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    let line;
    if let Some(a) = accept {
        line = format!("Accept: {a}");
        h.push(&line);
    }
    post(&x.host(), &h, LIST)
}

#[test]
fn c01_accept_negotiation() {
    let x = Xmd::start(&[]);
    let cases: &[(Option<&str>, u16, Option<&str>)] = &[
        (Some("*/*"), 200, Some("application/json")),
        (Some("application/json"), 200, Some("application/json")),
        (Some("text/event-stream"), 200, Some("text/event-stream")),
        (
            Some("application/*;q=0.9, text/*;q=0.5"),
            200,
            Some("application/json"),
        ),
        (Some("text/html"), 406, Some("application/json")),
        (None, 200, Some("application/json")),
        (
            Some("application/json;q=0, text/event-stream"),
            200,
            Some("text/event-stream"),
        ),
    ];
    for (accept, status, ctype) in cases {
        let r = roundtrip(&x, &legacy_list(&x, *accept));
        assert_eq!(r.status, *status, "Accept {accept:?}");
        assert_eq!(
            r.header("content-type").as_deref(),
            *ctype,
            "Accept {accept:?}"
        );
        let v = r.json();
        if *status == 406 {
            assert_eq!(v["id"], serde_json::Value::Null);
            assert_eq!(v["error"]["code"], -32600);
        }
    }
    let sse = roundtrip(&x, &legacy_list(&x, Some("text/event-stream")));
    let text = sse.text();
    assert!(
        text.starts_with("event: message\ndata: {") && text.ends_with("}\n\n"),
        "{text:?}"
    );
    assert_eq!(text.matches("data: ").count(), 1);
    assert_eq!(sse.header("x-accel-buffering").as_deref(), Some("no"));
}

#[test]
fn c03_get_delete_head_and_stale_sessions_on_one_connection() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let mut s = x.connect();
    let mut raw = format!("GET /mcp HTTP/1.1\r\nHost: {h}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n");
    raw += &format!("DELETE /mcp HTTP/1.1\r\nHost: {h}\r\nMcp-Session-Id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n");
    raw += &format!("HEAD /mcp HTTP/1.1\r\nHost: {h}\r\n\r\n");
    s.write_all(raw.as_bytes()).unwrap();
    s.write_all(&post(
        &h,
        &[
            LEGACY[0],
            LEGACY[1],
            LEGACY[2],
            "Mcp-Session-Id: stale-session-123",
            "Last-Event-ID: 42",
        ],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    ))
    .unwrap();
    let get = read_reply(&mut s, false);
    assert_eq!(get.status, 405);
    assert_eq!(
        get.header("allow").as_deref(),
        Some("GET, HEAD, POST, OPTIONS")
    );
    assert_ne!(
        get.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    let delete = read_reply(&mut s, false);
    assert_eq!(delete.status, 405);
    assert_eq!(
        delete.header("allow").as_deref(),
        Some("GET, HEAD, POST, OPTIONS")
    );
    let head = read_reply(&mut s, true);
    assert_eq!(
        head.status, 200,
        "HEAD mirrors GET /mcp (the manifest) without body bytes"
    );
    assert!(
        head.header("content-length")
            .unwrap()
            .parse::<usize>()
            .unwrap()
            > 100
    );
    let list = read_reply(&mut s, false);
    assert_eq!(list.status, 200);
    for r in [&get, &delete, &head, &list] {
        assert_eq!(r.header("mcp-session-id"), None);
    }
    // Nothing stray after the HEAD: the POST answer parsed cleanly above.
    assert!(!closed_within(&mut s, Duration::from_millis(100)));
}

#[test]
fn get_mcp_without_sse_is_the_discovery_manifest() {
    let x = Xmd::start(&[]);
    let r = roundtrip(
        &x,
        format!("GET /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    let v = r.json();
    assert_eq!(v["endpoint"], format!("http://{}/mcp", x.addr));
    assert_eq!(
        v["supportedVersions"],
        serde_json::json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(
        v["serverCard"]["remotes"][0]["url"],
        format!("http://{}/mcp", x.addr)
    );
    for path in ["/mcp/server-card", "/.well-known/mcp/server-card.json"] {
        let r = roundtrip(
            &x,
            format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
        );
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/mcp-server-card+json")
        );
        assert_eq!(r.json()["name"], "io.github.xmd/xmd");
    }
    let r = roundtrip(
        &x,
        format!("GET /server.json HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
    );
    assert_eq!(
        r.json()["remotes"][0]["url"],
        format!("http://{}/mcp", x.addr)
    );
    let r = roundtrip(
        &x,
        format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
    );
    assert_eq!(r.text(), r#"{"status":"ok"}"#);
    for path in ["/llms.txt", "/llms-full.txt", "/openapi.json", "/index.md"] {
        let r = roundtrip(
            &x,
            format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
        );
        assert_eq!(r.status, 200, "{path}");
        assert!(
            !r.text().contains("{{PUBLIC_URL}}"),
            "{path} has an unfilled placeholder"
        );
        let r = roundtrip(
            &x,
            format!(
                "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\r\n",
                x.host()
            )
            .as_bytes(),
        );
        assert_eq!(r.status, 405, "{path}");
        assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD, OPTIONS"));
    }
}

/// RFC 9110 §9.1: any method token the server does not recognize is
/// `501` on every path (method names are case-sensitive: `get` is one);
/// a recognized method a route does not allow is `405` with `Allow`.
/// Tokens generated from RFC 9110 §5.6.2's `tchar`; the connection stays
/// usable after either.
#[test]
fn unrecognized_methods_are_501_and_known_ones_405() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    const KNOWN: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
    ];
    let x = Xmd::start(&[]);
    let h = x.host();
    let token = "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}"
        .prop_filter("a recognized method", |m| !KNOWN.contains(&m.as_str()));
    let path = prop::sample::select(vec!["/mcp", "/healthz", "/demo_author", "/nope"]);
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    runner
        .run(&(token, path), |(method, path)| {
            let mut s = x.connect();
            let raw = format!("{method} {path} HTTP/1.1\r\nHost: {h}\r\n\r\nGET /healthz HTTP/1.1\r\nHost: {h}\r\n\r\n");
            s.write_all(raw.as_bytes()).unwrap();
            let r = read_reply(&mut s, method == "HEAD");
            prop_assert_eq!(r.status, 501, "{} {}", method, path);
            prop_assert_eq!(read_reply(&mut s, false).status, 200);
            Ok(())
        })
        .unwrap();
    for method in ["PUT", "DELETE", "PATCH", "CONNECT", "TRACE", "get", "Post"] {
        let raw = format!("{method} /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Length: 0\r\n\r\n");
        let r = roundtrip(&x, raw.as_bytes());
        let want = if method.bytes().all(|b| b.is_ascii_uppercase()) {
            405
        } else {
            501
        };
        assert_eq!(r.status, want, "{method}");
        if want == 405 {
            assert_eq!(
                r.header("allow").as_deref(),
                Some("GET, HEAD, POST, OPTIONS")
            );
        }
    }
}

#[test]
fn c09_content_type_must_be_json() {
    let x = Xmd::start(&[]);
    for (ct, status) in [
        (Some("application/json; charset=utf-8"), 200),
        (Some("Application/JSON;Charset=\"UTF-8\""), 200),
        (None, 415),
        (Some("text/plain"), 415),
        (Some("application/jsonx"), 415),
        (Some("application/json-patch+json"), 415),
    ] {
        let line = ct.map(|c| format!("Content-Type: {c}"));
        let mut h = vec![
            "Accept: application/json, text/event-stream",
            "MCP-Protocol-Version: 2025-11-25",
        ];
        if let Some(l) = &line {
            h.push(l);
        }
        let r = roundtrip(&x, &post(&x.host(), &h, LIST));
        assert_eq!(r.status, status, "{ct:?}");
        if status == 415 {
            assert_eq!(r.json()["id"], serde_json::Value::Null);
        }
    }
}

#[test]
fn c10_paths_never_redirect() {
    let x = Xmd::start(&[]);
    let h = x.host();
    for (path, status) in [
        ("/mcp/", 200),
        ("/mcp?client=case", 200),
        ("//mcp", 404),
        ("/MCP", 404),
        ("/", 405),
    ] {
        let raw = post(&h, &LEGACY, LIST);
        let raw =
            String::from_utf8(raw)
                .unwrap()
                .replacen("POST /mcp ", &format!("POST {path} "), 1);
        let r = roundtrip(&x, raw.as_bytes());
        assert_eq!(r.status, status, "{path}");
        assert_eq!(r.header("location"), None);
        assert!(r.status < 300 || r.status >= 400);
    }
}

#[test]
fn c11_cors_preflight_and_foreign_origins() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let preflight = |origin: &str| {
        roundtrip(&x, format!("OPTIONS /mcp HTTP/1.1\r\nHost: {h}\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, mcp-param-region\r\n\r\n").as_bytes())
    };
    let r = preflight("http://localhost:6274");
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("http://localhost:6274")
    );
    assert!(r
        .header("access-control-allow-methods")
        .unwrap()
        .contains("POST"));
    let allowed = r
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase();
    for name in [
        "content-type",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-session-id",
        "last-event-id",
        "mcp-param-region",
    ] {
        assert!(
            allowed.split(", ").any(|a| a == name),
            "{name} missing from {allowed}"
        );
    }
    assert_eq!(r.header("vary").as_deref(), Some("Origin"));
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("86400"));
    let mut hs = LEGACY.to_vec();
    hs.push("Origin: http://localhost:6274");
    let r = roundtrip(&x, &post(&h, &hs, LIST));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("http://localhost:6274")
    );
    assert_eq!(preflight("http://attacker.example").status, 403);
    let mut hs = LEGACY.to_vec();
    hs.push("Origin: http://attacker.example");
    let r = roundtrip(&x, &post(&h, &hs, LIST));
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["id"], serde_json::Value::Null);
}

#[test]
fn dns_rebinding_host_is_refused_on_loopback() {
    let x = Xmd::start(&[]);
    let r = roundtrip(
        &x,
        &post(
            "evil.example.com",
            &[
                "Content-Type: application/json",
                "Origin: http://evil.example.com",
            ],
            LIST,
        ),
    );
    assert_eq!(r.status, 403);
    let port = x.addr.port();
    let r = roundtrip(
        &x,
        &post(
            &format!("localhost:{port}"),
            &[
                "Content-Type: application/json",
                &format!("Origin: http://localhost:{port}"),
            ],
            LIST,
        ),
    );
    assert_eq!(r.status, 200);
    let r = roundtrip(&x, b"GET /healthz HTTP/1.1\r\n\r\n");
    assert_eq!(r.status, 400, "HTTP/1.1 without Host");
}

#[test]
fn c18_pipelined_requests_in_one_segment() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let mut raw = post(
        &h,
        &[
            "Content-Type: application/json",
            "Accept: application/json",
            "MCP-Protocol-Version: 2025-11-25",
        ],
        LIST,
    );
    raw.extend(post(
        &h,
        &[
            "Content-Type: application/json",
            "Accept: application/json",
            "MCP-Protocol-Version: 2025-11-25",
        ],
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ));
    raw.extend(format!("GET /mcp HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes());
    let mut s = x.connect();
    s.write_all(&raw).unwrap();
    let statuses: Vec<u16> = (0..3).map(|_| read_reply(&mut s, false).status).collect();
    assert_eq!(statuses, [200, 200, 200]);
    assert!(
        !closed_within(&mut s, Duration::from_millis(100)),
        "connection stays open"
    );

    // Content-Length 52 for a 58-byte body: the 6 leftover bytes make the
    // next request line malformed → 400 and close, never silently skipped.
    let mut raw = post(&h, &LEGACY, LIST);
    let text = String::from_utf8(raw.clone())
        .unwrap()
        .replace("Content-Length: 58", "Content-Length: 52");
    raw = text.into_bytes();
    raw.extend(format!("GET /mcp HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes());
    let mut s = x.connect();
    s.write_all(&raw).unwrap();
    let first = read_reply(&mut s, false);
    assert_eq!(first.status, 400, "truncated JSON body is a parse error");
    let second = read_reply(&mut s, false);
    assert_eq!(second.status, 400);
    assert_eq!(second.header("connection").as_deref(), Some("close"));
    assert!(closed_within(&mut s, Duration::from_secs(2)));
}

#[test]
fn c19_partial_reads_stalls_and_large_bodies() {
    let x = Xmd::start(&[]);
    let h = x.host();
    // (a) one byte per write, 5 ms apart, multi-byte characters split.
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"note":"é🦀"}}}"#;
    let raw = post(&h, &LEGACY, body);
    let mut s = x.connect();
    for b in &raw {
        s.write_all(&[*b]).unwrap();
        sleep(Duration::from_millis(5));
    }
    let (r, t) = timed(|| read_reply(&mut s, false));
    assert_eq!(r.status, 200);
    assert!(t < Duration::from_millis(500), "{t:?}");
    // (b) a complete request plus "POS": the first answer is not held back.
    let mut s = x.connect();
    let mut first = post(&h, &LEGACY, LIST);
    first.extend_from_slice(b"POS");
    s.write_all(&first).unwrap();
    let (r, t) = timed(|| read_reply(&mut s, false));
    assert_eq!(r.status, 200);
    assert!(t < Duration::from_millis(100), "{t:?}");
    sleep(Duration::from_millis(300));
    s.write_all(&post(&h, &LEGACY, LIST)[3..]).unwrap();
    assert_eq!(read_reply(&mut s, false).status, 200);
    // (c) 300 KiB in one write: answered within 1 s.
    let pad = "A".repeat(300_000);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"_meta":{{"pad":"{pad}"}}}}}}"#
    );
    let mut s = x.connect();
    let (r, t) = timed(|| {
        s.write_all(&post(&h, &LEGACY, &big)).unwrap();
        read_reply(&mut s, false)
    });
    assert_eq!(r.status, 200);
    assert!(t < Duration::from_secs(1), "{t:?}");
    // (d) 5 MiB: 413 and close, before the body is read.
    let pad = "A".repeat(5 * 1024 * 1024);
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{"_meta":{{"pad":"{pad}"}}}}}}"#
    );
    let mut s = x.connect();
    let req = post(&h, &LEGACY, &huge);
    let head_end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    s.write_all(&req[..head_end]).unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 413);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
}

#[test]
fn c20_expect_continue() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let send_head = |ctype: &str, expect: &str| {
        let mut s = x.connect();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Type: {ctype}\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nExpect: {expect}\r\nContent-Length: 58\r\n\r\n");
        s.write_all(head.as_bytes()).unwrap();
        s
    };
    let mut s = send_head("application/json", "100-continue");
    let (interim, t) = timed(|| read_reply(&mut s, false));
    assert_eq!(interim.status, 100);
    assert_eq!(interim.head, "HTTP/1.1 100 Continue\r\n\r\n");
    assert!(t < Duration::from_millis(100), "{t:?}");
    s.write_all(LIST.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut s, false).status, 200);
    // A head refused whatever its body gets its refusal instead of
    // 100 Continue (issue 19 item 6), and the connection closes.
    let mut s = send_head("text/plain", "100-continue");
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 415);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    let mut s = send_head("application/json", "something-else");
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 417);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
}

#[test]
fn c22_header_limits() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let mut many: Vec<String> = LEGACY.iter().map(|s| s.to_string()).collect();
    for i in 1..=150 {
        many.push(format!("X-Pad-{i}: v"));
    }
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let mut s = x.connect();
    s.write_all(&post(&h, &refs, LIST)).unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 431);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert!(closed_within(&mut s, Duration::from_secs(2)));
    let cookie = format!("Cookie: {}", "c".repeat(70_000));
    let mut hs = LEGACY.to_vec();
    hs.push(&cookie);
    let r = roundtrip(&x, &post(&h, &hs, LIST));
    assert_eq!(r.status, 431);
    let r = roundtrip(&x, format!("POST /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\nContent-Length: 16000000\r\n\r\n0123456789").as_bytes());
    assert_eq!(r.status, 413);
}

#[test]
fn c22_slow_clients_are_cut_off_without_delaying_others() {
    let x = Xmd::start(&["--header-timeout", "2", "--body-timeout", "2"]);
    let h = x.host();
    let mut dribblers: Vec<_> = (0..50)
        .map(|_| {
            let mut s = x.connect();
            s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {h}\r\n").as_bytes())
                .unwrap();
            s
        })
        .collect();
    let mut stalled = x.connect();
    stalled.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n0123456789").as_bytes()).unwrap();
    let start = Instant::now();
    let mut worst = Duration::ZERO;
    while start.elapsed() < Duration::from_millis(3500) {
        for s in dribblers.iter_mut().skip(1).take(5) {
            let _ = s.write_all(b"X");
        }
        let (r, t) = timed(|| roundtrip(&x, &post(&h, &LEGACY, LIST)));
        assert_eq!(r.status, 200);
        worst = worst.max(t);
        sleep(Duration::from_millis(250));
    }
    assert!(
        worst < Duration::from_millis(100),
        "a normal client waited {worst:?}"
    );
    // A quiet slow client gets a clean 408; one that kept dribbling may see
    // the 408 or a reset (it wrote after the server closed): either way it is gone.
    let r = read_reply(&mut dribblers[0], false);
    assert_eq!(r.status, 408);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    for (i, s) in dribblers.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(1)),
            "slow client {i} still open"
        );
    }
    let r = read_reply(&mut stalled, false);
    assert_eq!(r.status, 408);
}

#[test]
fn smuggling_shapes_are_rejected_and_nothing_after_runs() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let shapes = [
        (
            "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_string(),
            400,
        ),
        (
            "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!".to_string(),
            400,
        ),
        ("Content-Length: 0x5\r\n\r\nhello".to_string(), 400),
        ("Content-Length: +5\r\n\r\nhello".to_string(), 400),
        (
            "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n".to_string(),
            501,
        ),
        (
            "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n".to_string(),
            400,
        ),
        ("Transfer-Encoding: chunked\r\n\r\nZZ\r\n".to_string(), 400),
        (
            "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n".to_string(),
            400,
        ),
        (
            "X-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n".to_string(),
            400,
        ),
        ("X-Space : a\r\nContent-Length: 0\r\n\r\n".to_string(), 400),
        ("X-Cr: a\rb\r\nContent-Length: 0\r\n\r\n".to_string(), 400),
        ("X-Nul: a\0b\r\nContent-Length: 0\r\n\r\n".to_string(), 400),
    ];
    for (rest, status) in shapes {
        let mut s = x.connect();
        let raw = format!("POST /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\n{rest}GET /healthz HTTP/1.1\r\nHost: {h}\r\n\r\n");
        s.write_all(raw.as_bytes()).unwrap();
        let r = read_reply(&mut s, false);
        assert_eq!(r.status, status, "{rest:?}");
        assert_eq!(r.header("connection").as_deref(), Some("close"), "{rest:?}");
        assert!(
            closed_within(&mut s, Duration::from_secs(2)),
            "smuggled request ran after {rest:?}"
        );
    }
    // The server is still healthy.
    assert_eq!(
        roundtrip(
            &x,
            format!("GET /healthz HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes()
        )
        .status,
        200
    );
}

#[test]
fn chunked_bodies_and_http10() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        &LIST[..16],
        LIST.len() - 16,
        &LIST[16..]
    );
    let r = roundtrip(&x, chunked.as_bytes());
    assert_eq!(r.status, 200);
    let mut s = x.connect();
    s.write_all(b"GET /healthz HTTP/1.0\r\n\r\n").unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert!(closed_within(&mut s, Duration::from_secs(2)));
}

#[test]
fn connections_past_the_maximum_get_503() {
    let x = Xmd::start(&["--max-connections", "2"]);
    // Each has a request in progress (a head begun), so neither is an
    // idle connection the server could close to make room.
    let mut a = x.connect();
    let mut b = x.connect();
    a.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    b.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    sleep(Duration::from_millis(100));
    let mut c = x.connect();
    let r = read_reply(&mut c, false);
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after").as_deref(), Some("1"));
}

#[test]
fn sigterm_shuts_down_cleanly() {
    let mut x = Xmd::start(&[]);
    let mut idle = x.connect();
    x.sigterm();
    let status = x.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(closed_within(&mut idle, Duration::from_secs(2)));
}
