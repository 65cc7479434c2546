//! Operations surface: `/metrics` (checked with a real Prometheus text
//! parser, counters moving as requests say they should) and the access log.

mod common;
mod util;

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use util::*;

const POST_ID: &str = "2087208847298015232";

fn scrape(x: &Xmd) -> HashMap<String, f64> {
    let r = roundtrip(
        x,
        format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = r.text();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("valid Prometheus text format");
    let mut out = HashMap::new();
    for s in scrape.samples {
        let mut labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        labels.sort();
        let value = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            prometheus_parse::Value::Histogram(h) => {
                for b in h {
                    out.insert(
                        format!("{}_bucket{{le={}}}", s.metric, b.less_than),
                        b.count,
                    );
                }
                continue;
            }
            prometheus_parse::Value::Summary(_) => continue,
        };
        out.insert(format!("{}{{{}}}", s.metric, labels.join(",")), value);
    }
    out
}

fn get(m: &HashMap<String, f64>, key: &str) -> f64 {
    m.get(key).copied().unwrap_or(0.0)
}

#[test]
fn metrics_parse_and_move_with_requests() {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    let x = Xmd::start(&["--upstream", &up.base_url()]);
    let h = x.host();
    let before = scrape(&x);
    let legacy = [
        "Content-Type: application/json",
        "Accept: application/json",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    for _ in 0..3 {
        assert_eq!(
            roundtrip(
                &x,
                &post(
                    &h,
                    &legacy,
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
                )
            )
            .status,
            200
        );
    }
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/demo_author/status/{POST_ID}","thread":"off"}}}}}}"#
    );
    assert_eq!(roundtrip(&x, &post(&h, &legacy, &call)).status, 200);
    assert_eq!(
        roundtrip(&x, &post(&h, &["Content-Type: text/plain"], "{}")).status,
        415
    );
    let mut s = x.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        .unwrap();
    assert_eq!(read_reply(&mut s, false).status, 400);
    assert_eq!(
        roundtrip(
            &x,
            format!("GET /no-such-route HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes()
        )
        .status,
        404
    );
    std::thread::sleep(Duration::from_millis(50));
    let after = scrape(&x);
    let delta = |k: &str| get(&after, k) - get(&before, k);
    assert_eq!(
        delta("xmd_mcp_requests_total{method=tools/list,status=200}"),
        3.0
    );
    assert_eq!(
        delta("xmd_mcp_requests_total{method=tools/call,status=200}"),
        1.0
    );
    assert_eq!(delta("xmd_http_requests_total{route=mcp,status=200}"), 4.0);
    assert_eq!(delta("xmd_http_requests_total{route=mcp,status=415}"), 1.0);
    assert_eq!(
        delta("xmd_http_requests_total{route=rejected,status=400}"),
        1.0
    );
    assert_eq!(
        delta("xmd_http_requests_total{route=not_found,status=404}"),
        1.0
    );
    assert_eq!(
        delta("xmd_tool_calls_total{outcome=ok,tool=x_md_get_post}"),
        1.0
    );
    assert_eq!(delta("xmd_upstream_requests_total{status=200}"), 1.0);
    assert_eq!(
        delta("xmd_upstream_request_duration_seconds_bucket{le=inf}"),
        1.0
    );
    assert_eq!(
        delta("xmd_rejected_requests_total{reason=unsupported_media_type}"),
        1.0
    );
    assert_eq!(delta("xmd_rejected_requests_total{reason=malformed}"), 1.0);
    assert_eq!(get(&after, "xmd_worker_queue_depth{}"), 0.0);
    assert!(
        get(&after, "xmd_open_connections{}") >= 1.0,
        "the scrape's own connection is open"
    );
}

#[test]
fn access_log_lines_plain_and_json_never_carry_the_body() {
    for format in ["plain", "json"] {
        let x = Xmd::start(&["--log-format", format]);
        let h = x.host();
        let secret = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"note":"SECRET-BODY"}}}"#;
        let legacy = [
            "Content-Type: application/json",
            "MCP-Protocol-Version: 2025-11-25",
        ];
        assert_eq!(roundtrip(&x, &post(&h, &legacy, secret)).status, 200);
        std::thread::sleep(Duration::from_millis(1200));
        let log = x.log.lock().unwrap().clone();
        let line = log
            .iter()
            .find(|l| l.contains("/mcp") && l.contains("tools/list"))
            .unwrap_or_else(|| panic!("{format}: no access line in {log:?}"));
        assert!(
            !log.iter().any(|l| l.contains("SECRET-BODY")),
            "{format}: body logged"
        );
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["method"], "POST");
            assert_eq!(v["path"], "/mcp");
            assert_eq!(v["status"], 200);
            assert_eq!(v["rpc"], "tools/list");
            assert!(v["bytes"].as_u64().unwrap() > 1000);
            assert!(v["peer"].as_str().unwrap().starts_with("127.0.0.1:"));
        } else {
            let fields: Vec<&str> = line.split(' ').collect();
            assert!(fields[1].starts_with("127.0.0.1:"), "{line}");
            assert_eq!(&fields[2..5], ["POST", "/mcp", "200"], "{line}");
            assert!(line.ends_with(" rpc=tools/list"), "{line}");
        }
    }
}
