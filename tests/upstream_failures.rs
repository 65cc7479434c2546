//! An upstream outage is visible to operators (issue 17): the access-log
//! line of a failed tool call names its error code and cause (dns, refused,
//! timeout, the upstream status), `/metrics` counts failures by code and by
//! cause, and start-up warns when the upstream host does not resolve,
//! without delaying start-up. Only loopback and the reserved `.invalid`
//! name (RFC 6761: never resolves) are used. The causes are tested with
//! either upstream client: the event loops (`--upstream-io loop`, the
//! default) and the workers (`threads`, the fallback).

mod common;
mod util;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use util::*;

const POST_ID: &str = "2087208847298015232";

fn call(x: &Xmd) -> serde_json::Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author","thread":"off"}}}}}}"#
    );
    let r = roundtrip(
        x,
        &post(
            &x.host(),
            &[
                "Content-Type: application/json",
                "Accept: application/json",
                "MCP-Protocol-Version: 2025-11-25",
            ],
            &body,
        ),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn get(x: &Xmd, path: &str) -> Reply {
    let raw = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        x.host()
    );
    roundtrip(x, raw.as_bytes())
}

/// The first log line containing `needle`, waiting up to `wait`.
fn log_line(x: &Xmd, needle: &str, wait: Duration) -> String {
    let until = Instant::now() + wait;
    loop {
        if let Some(l) = x.log.lock().unwrap().iter().find(|l| l.contains(needle)) {
            return l.clone();
        }
        assert!(
            Instant::now() < until,
            "no log line with {needle:?}: {:#?}",
            x.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn metric(x: &Xmd, series: &str) -> Option<u64> {
    let text = get(x, "/metrics").text();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

fn code_of(v: &serde_json::Value) -> String {
    assert_eq!(v["result"]["isError"], true, "{v}");
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    let tail = text.rsplit_once("code ").unwrap().1;
    tail.split([')', ',']).next().unwrap().to_string()
}

#[test]
fn an_unresolvable_upstream_warns_at_start_up_and_names_dns_in_the_log() {
    unresolvable_upstream("loop");
}

#[test]
fn with_the_workers_an_unresolvable_upstream_names_dns_in_the_log() {
    unresolvable_upstream("threads");
}

/// The DNS cause with the upstream requests made by `io` (`--upstream-io`).
fn unresolvable_upstream(io: &str) {
    let started = Instant::now();
    let x = Xmd::start(&[
        "--upstream",
        "http://upstream.invalid",
        "--cache-bytes",
        "0",
        "--upstream-io",
        io,
    ]);
    // Start-up is not held by the check: the server answers at once.
    assert_eq!(get(&x, "/healthz").status, 200);
    assert!(started.elapsed() < Duration::from_secs(5));
    let warning = log_line(&x, "xmd: warning:", Duration::from_secs(10));
    assert!(
        warning.starts_with(
            "xmd: warning: upstream host 'upstream.invalid' (http://upstream.invalid) does not resolve ("
        ),
        "{warning}"
    );
    let v = call(&x);
    assert_eq!(code_of(&v), "fxtwitter_network");
    let line = log_line(&x, " POST /mcp ", Duration::from_secs(5));
    assert!(
        line.contains(" tool=x_md_get_post ")
            && line.ends_with(" error=fxtwitter_network cause=dns"),
        "{line}"
    );
    assert_eq!(
        metric(&x, "xmd_tool_errors_total{code=\"fxtwitter_network\"}"),
        Some(1)
    );
    assert_eq!(
        metric(&x, "xmd_upstream_failures_total{cause=\"dns\"}"),
        Some(1)
    );
}

/// The fallback's host is an upstream too: start-up warns when it does not
/// resolve, and not when the fallback is off.
#[test]
fn an_unresolvable_syndication_host_warns_at_start_up() {
    let fx = FakeUpstream::start();
    let x = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        "https://syndication.invalid",
    ]);
    let warning = log_line(&x, "xmd: warning:", Duration::from_secs(10));
    assert!(
        warning.starts_with(
            "xmd: warning: syndication host 'syndication.invalid' (https://syndication.invalid) does not resolve ("
        ) && warning.ends_with("); the post fallback (--syndication-url) will fail until it does"),
        "{warning}"
    );
    // Off (the harness's default `--syndication-url ""`) and a resolving
    // upstream: nothing to warn about.
    let quiet = Xmd::start(&["--upstream", &fx.base_url()]);
    assert_eq!(get(&quiet, "/healthz").status, 200);
    std::thread::sleep(Duration::from_millis(300));
    let lines = quiet.log.lock().unwrap().clone();
    assert!(!lines.iter().any(|l| l.contains("warning")), "{lines:#?}");
}

#[test]
fn refused_timeout_and_status_causes() {
    refused_timeout_and_status("loop");
}

#[test]
fn with_the_workers_refused_timeout_and_status_causes() {
    refused_timeout_and_status("threads");
}

/// The refused, timeout and status causes with the upstream requests made
/// by `io` (`--upstream-io`).
fn refused_timeout_and_status(io: &str) {
    // Refused: a loopback port nobody listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let x = Xmd::start(&[
        "--upstream",
        &format!("http://127.0.0.1:{port}"),
        "--cache-bytes",
        "0",
        "--log-format",
        "json",
        "--upstream-io",
        io,
    ]);
    assert_eq!(code_of(&call(&x)), "fxtwitter_network");
    let line = log_line(&x, "\"path\":\"/mcp\"", Duration::from_secs(5));
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"], "fxtwitter_network cause=refused", "{line}");
    // The X routes log the same way.
    assert_eq!(
        get(&x, &format!("/demo_author/status/{POST_ID}?thread=off")).status,
        502
    );
    let x_line = log_line(
        &x,
        "\"path\":\"/demo_author/status/",
        Duration::from_secs(5),
    );
    let v: serde_json::Value = serde_json::from_str(&x_line).unwrap();
    assert_eq!(v["error"], "fxtwitter_network cause=refused", "{x_line}");
    assert_eq!(
        metric(&x, "xmd_upstream_failures_total{cause=\"refused\"}"),
        Some(2)
    );
    // No DNS lookup for an IP literal, so no start-up warning.
    assert!(!x.log.lock().unwrap().iter().any(|l| l.contains("warning")));
    drop(x);

    // Timeout: the upstream answers after the --upstream-timeout.
    let slow = FakeUpstream::start();
    slow.handler(|_| Some(Answer::fixture(200, "status-plain.json").delay(Duration::from_secs(3))));
    let x = Xmd::start(&[
        "--upstream",
        &slow.base_url(),
        "--upstream-timeout",
        "1",
        "--cache-bytes",
        "0",
        "--upstream-io",
        io,
    ]);
    assert_eq!(code_of(&call(&x)), "upstream_timeout");
    let line = log_line(&x, " POST /mcp ", Duration::from_secs(5));
    assert!(
        line.ends_with(" error=upstream_timeout cause=timeout"),
        "{line}"
    );
    assert_eq!(
        metric(&x, "xmd_upstream_failures_total{cause=\"timeout\"}"),
        Some(1)
    );
    drop(x);

    // An upstream 5xx: the code the agent saw, and the status that caused it.
    let failing = FakeUpstream::start();
    failing.handler(|_| {
        Some(Answer::json(
            503,
            r#"{"code":503,"message":"Service Unavailable"}"#,
        ))
    });
    let x = Xmd::start(&[
        "--upstream",
        &failing.base_url(),
        "--cache-bytes",
        "0",
        "--upstream-io",
        io,
    ]);
    let code = code_of(&call(&x));
    let line = log_line(&x, " POST /mcp ", Duration::from_secs(5));
    assert!(
        line.ends_with(&format!(" error={code} cause=upstream_status_503")),
        "{line}"
    );
    assert_eq!(
        metric(&x, &format!("xmd_tool_errors_total{{code=\"{code}\"}}")),
        Some(1)
    );
    assert_eq!(
        metric(&x, "xmd_upstream_failures_total{cause=\"status\"}"),
        Some(1)
    );
}

/// An upstream that answers 200 with a body that is not its JSON (a
/// captive portal's or a CDN's HTML page): the log names the status and
/// that the body was wrong, on MCP and on the X routes alike, and
/// `xmd_upstream_failures_total{cause="invalid_body"}` counts each.
#[test]
fn a_200_that_is_not_fxtwitter_json_names_its_status_in_the_log() {
    not_fxtwitter_json("loop");
}

#[test]
fn with_the_workers_a_200_that_is_not_fxtwitter_json_names_its_status() {
    not_fxtwitter_json("threads");
}

/// The invalid-body cause with the upstream requests made by `io`.
fn not_fxtwitter_json(io: &str) {
    let html = FakeUpstream::start();
    html.handler(|_| {
        Some(Answer::raw(
            200,
            "text/html",
            "<html><body>Please wait…</body></html>",
        ))
    });
    let x = Xmd::start(&[
        "--upstream",
        &html.base_url(),
        "--cache-bytes",
        "0",
        "--upstream-io",
        io,
    ]);
    assert_eq!(code_of(&call(&x)), "upstream_invalid_response");
    let line = log_line(&x, " POST /mcp ", Duration::from_secs(5));
    assert!(
        line.ends_with(" error=upstream_invalid_response cause=upstream_status_200_invalid_body"),
        "{line}"
    );
    let r = get(&x, "/demo_author");
    assert_eq!(r.status, 502, "{}", r.text());
    let line = log_line(&x, " GET /demo_author ", Duration::from_secs(5));
    assert!(
        line.ends_with(" error=upstream_invalid_response cause=upstream_status_200_invalid_body"),
        "{line}"
    );
    assert_eq!(
        metric(&x, "xmd_upstream_failures_total{cause=\"invalid_body\"}"),
        Some(2)
    );
    assert_eq!(
        metric(
            &x,
            "xmd_tool_errors_total{code=\"upstream_invalid_response\"}"
        ),
        Some(2)
    );
}

/// A call refused by the upstream budget after an earlier request of the
/// same call failed (a thread 404 before the post lookup) names no cause:
/// the refusal sent nothing, so the 404 did not cause it.
#[test]
fn an_upstream_budget_refusal_names_no_older_cause() {
    let missing = FakeUpstream::start();
    missing.handler(|_| Some(Answer::json(404, r#"{"code":404,"message":"NOT_FOUND"}"#)));
    let x = Xmd::start(&[
        "--upstream",
        &missing.base_url(),
        "--cache-bytes",
        "0",
        "--rate-limit",
        "0",
        "--upstream-budget",
        "1",
    ]);
    // The budget holds 3 requests; each call makes 2 (thread, then post).
    let mut lines = Vec::new();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author"}}}}}}"#
    );
    for _ in 0..2 {
        let raw = post(
            &x.host(),
            &[
                "Content-Type: application/json",
                "Accept: application/json",
                "MCP-Protocol-Version: 2025-11-25",
            ],
            &body,
        );
        assert_eq!(roundtrip(&x, &raw).status, 200);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while lines.len() < 2 && Instant::now() < until {
        lines = x
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(" POST /mcp "))
            .cloned()
            .collect();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(missing.request_count(), 3, "{:?}", missing.targets());
    assert!(
        lines[0].ends_with(" error=not_found cause=upstream_status_404"),
        "{lines:?}"
    );
    assert!(lines[1].ends_with(" error=upstream_budget"), "{lines:?}");
}
