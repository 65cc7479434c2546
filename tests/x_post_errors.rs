//! `x_md_get_post` failures: argument refusals (no upstream call) and every
//! upstream failure kind, over a real `HttpUpstream` and the loopback fake,
//! with exact error texts and exact request paths.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::{call, ok, status_body};
use serde_json::{json, Value};
use xmd::x::tools::{PrepareError, Tools};
use xmd::x::upstream::HttpUpstream;

const ID: &str = "1800000000000000001";

fn tools_for(fake: &FakeUpstream) -> Tools {
    Tools::new(Arc::new(HttpUpstream::new(
        &format!("{}/", fake.base_url()),
        Duration::from_secs(5),
    )))
}

#[test]
fn c14_refusals_touch_nothing() {
    let bad = [
        json!({"url": "https://x.com/example_user/status/1800000000000000001", "handle": "example_user", "id": "1800000000000000001"}),
        json!({}),
        json!({"handle": "example_user", "id": 1800000000000000001u64}),
        json!({"url": "https://x.com/a/status/1", "max_posts": 1}),
        json!({"url": "https://x.com/a/status/1", "thread": "all"}),
        json!({"url": "https://x.com/a/status/1", "include_quote": true}),
        json!("https://x.com/a/status/1"),
    ];
    let expected = [
        "ambiguous target: supply either `url`, or `handle` and `id`, not both",
        "supply `url` (e.g. \"https://x.com/example_user/status/1800000000000000001\"), or `handle` and `id` (e.g. \"example_user\" and \"1800000000000000001\")",
        "`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0), e.g. \"1800000000000000001\" (send it quoted: JSON numbers cannot hold post ids exactly)",
        "`max_posts` must be an integer from 2 to 100",
        "`thread` must be one of: full, off, conversation",
        "unknown property `include_quote`; allowed: url, handle, id, thread, replies, max_posts, format, full, userinfo, context, cursor, lang, max_chars",
        "`arguments` must be a JSON object, e.g. {\"handle\": \"example_user\"}",
    ];
    for (args, want) in bad.iter().zip(expected) {
        assert_eq!(
            Tools::prepare("x_md_get_post", Some(args)).unwrap_err(),
            PrepareError::InvalidArguments(want.into())
        );
    }
}

fn error_text(fake: &FakeUpstream, args: Value) -> String {
    let out = call(&tools_for(fake), args);
    assert!(out.is_error, "expected an error, got {}", out.text);
    assert_eq!(out.structured, None);
    out.text
}

#[test]
fn not_found_both_shapes_no_retry() {
    for body in [
        r#"{"code":404,"message":"NOT_FOUND","tweet":null}"#,
        r#"{"code":404,"status":null,"thread":null,"author":null}"#,
    ] {
        let fake = FakeUpstream::start();
        fake.route(
            &format!("/2/status/{ID}"),
            vec![
                Answer::json(404, body),
                Answer::json(200, &status_body(ID, json!({"possibly_sensitive": true}))),
            ],
        );
        let text = error_text(
            &fake,
            json!({"handle": "example_user", "id": ID, "thread": "off"}),
        );
        assert_eq!(text, "Post not found or unavailable; it may be deleted, private or age-restricted. (HTTP 404, code not_found)");
        assert_eq!(fake.targets(), [format!("/2/status/{ID}")]);
    }
}

#[test]
fn not_found_thread_falls_back_to_status_once() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::fixture(404, "status-404-not-found.json"),
    );
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::fixture(404, "status-404-not-found.json"),
    );
    let text = error_text(&fake, json!({"handle": "example_user", "id": ID}));
    assert_eq!(text, "Post not found or unavailable; it may be deleted, private or age-restricted. (HTTP 404, code not_found)");
    assert_eq!(
        fake.targets(),
        [format!("/2/thread/{ID}"), format!("/2/status/{ID}")]
    );
}

#[test]
fn private_post_is_final() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::fixture(401, "status-401-private.json"),
    );
    let text = error_text(&fake, json!({"handle": "example_user", "id": ID}));
    assert_eq!(
        text,
        "Post is from a protected account and cannot be fetched. (HTTP 403, code private_tweet)"
    );
    assert_eq!(fake.targets(), [format!("/2/thread/{ID}")]);
}

#[test]
fn rate_limited_with_seconds_and_date() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::fixture(429, "error-429-rate-limited.json").header("Retry-After", "30"),
    );
    let text = error_text(
        &fake,
        json!({"handle": "example_user", "id": ID, "thread": "off"}),
    );
    assert_eq!(text, "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 30s)");
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::json(429, "{}").header("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
    );
    let text = error_text(&fake, json!({"handle": "example_user", "id": ID}));
    assert_eq!(text, "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 1s)");
    assert_eq!(
        fake.request_count(),
        1,
        "a rate limit is not retried on another route"
    );
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::raw(429, "text/plain", "slow down"),
    );
    let text = error_text(
        &fake,
        json!({"handle": "example_user", "id": ID, "thread": "off"}),
    );
    assert_eq!(text, "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 5s)");
}

#[test]
fn server_errors_and_bad_bodies() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::raw(503, "text/html", "<html>down</html>"),
    );
    assert_eq!(
        error_text(&fake, json!({"handle": "a", "id": ID, "thread": "off"})),
        "FxTwitter API error: HTTP 503. (HTTP 502, code fxtwitter_error)"
    );
    let unexpected = "FxTwitter upstream returned an unexpected response (not the JSON it should send). (HTTP 502, code upstream_invalid_response)";
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::raw(
            200,
            "text/html",
            "<!DOCTYPE html><html><head><title>:(</title></head><body><h1>Owie</h1></body></html>",
        ),
    );
    assert_eq!(
        error_text(&fake, json!({"handle": "a", "id": ID, "thread": "off"})),
        unexpected
    );
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, r#"{"code":200,"status":{"id":"18"#),
    );
    assert_eq!(
        error_text(&fake, json!({"handle": "a", "id": ID, "thread": "off"})),
        unexpected
    );
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, r#"{"code":200,"status":null}"#),
    );
    assert_eq!(
        error_text(&fake, json!({"handle": "a", "id": ID, "thread": "off"})),
        "Post not found. (HTTP 404, code not_found)"
    );
}

#[test]
fn thread_failure_falls_back_to_single_post() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::json(500, r#"{"code":500}"#),
    );
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, &status_body(ID, json!({}))),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "replies": "off"}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["thread_complete"], false);
    assert_eq!(s["warnings"], json!(["The thread could not be loaded (FxTwitter API error: HTTP 500. (HTTP 502, code fxtwitter_error)); showing the post alone."]));
    assert!(
        out.text
            .contains("\n\n> **Note:** The thread could not be loaded"),
        "{}",
        out.text
    );
    assert_eq!(
        fake.targets(),
        [format!("/2/thread/{ID}"), format!("/2/status/{ID}")]
    );
}

#[test]
fn unreachable_and_timeout() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &format!("http://127.0.0.1:{port}"),
        Duration::from_secs(2),
    )));
    let out = tools
        .run(&Tools::prepare("x_md_get_post", Some(&json!({"handle": "a", "id": ID}))).unwrap());
    assert_eq!(
        (out.text.as_str(), out.is_error),
        (
            "Failed to reach FxTwitter API. (HTTP 502, code fxtwitter_network)",
            true
        )
    );

    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, &status_body(ID, json!({}))).delay(Duration::from_millis(1500)),
    );
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &fake.base_url(),
        Duration::from_millis(300),
    )));
    let out = tools.run(
        &Tools::prepare(
            "x_md_get_post",
            Some(&json!({"handle": "a", "id": ID, "thread": "off"})),
        )
        .unwrap(),
    );
    assert_eq!(
        (out.text.as_str(), out.is_error),
        (
            "FxTwitter API did not answer in time. (HTTP 504, code upstream_timeout)",
            true
        )
    );
}
