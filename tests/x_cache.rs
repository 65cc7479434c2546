//! Cache, request coalescing and upstream etiquette end to end: a repeated
//! call is a `cache: "hit"` with no upstream request; concurrent identical
//! calls make one upstream request; a 429 cools its base and calls during
//! the cool-down fail fast with the seconds left; several bases are used in
//! turn, each cooling on its own.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::browse::{err, ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::json;
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

fn profile_fake(delay_ms: u64) -> FakeUpstream {
    let fake = FakeUpstream::start();
    let d = Duration::from_millis(delay_ms);
    fake.on(
        "/2/profile/demo_author",
        Answer::fixture(200, "profile.json").delay(d),
    );
    fake.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false",
        Answer::fixture(200, "profile-statuses-page1.json").delay(d),
    );
    fake
}

#[test]
fn repeated_call_is_a_hit_without_upstream_request() {
    let fake = profile_fake(0);
    let tools = tools_for(&fake);
    let args = json!({"handle": "demo_author", "limit": 2});
    let first = ok(&tools, "x_md_get_profile", args.clone());
    assert_eq!(first.structured.as_ref().unwrap()["cache"], "miss");
    let n = fake.request_count();
    assert_eq!(n, 2);
    let second = ok(&tools, "x_md_get_profile", args);
    let s = second.structured.unwrap();
    assert_eq!(s["cache"], "hit");
    assert_eq!(fake.request_count(), n, "no upstream request");
    let mut a = first.structured.unwrap();
    a["cache"] = json!("hit");
    assert_eq!(a, s, "same result apart from `cache`");
    // get_post goes through the same cache.
    fake.on(
        "/2/status/2087208847298015232",
        Answer::fixture(200, "status-plain.json"),
    );
    let args = json!({"handle": "demo_author", "id": "2087208847298015232", "thread": "off"});
    assert_eq!(
        ok(&tools, "x_md_get_post", args.clone())
            .structured
            .unwrap()["cache"],
        "miss"
    );
    assert_eq!(
        ok(&tools, "x_md_get_post", args).structured.unwrap()["cache"],
        "hit"
    );
    assert_eq!(fake.request_count(), n + 1);
    // With the cache disabled every call reaches the upstream.
    let off = Tools::with_cache_bytes(
        Arc::new(HttpUpstream::new(&fake.base_url(), Duration::from_secs(5))),
        0,
    );
    let s = ok(
        &off,
        "x_md_get_profile",
        json!({"handle": "demo_author", "limit": 2}),
    )
    .structured
    .unwrap();
    assert_eq!(s["cache"], "bypass");
    assert_eq!(fake.request_count(), n + 3);
}

#[test]
fn concurrent_identical_calls_coalesce() {
    let fake = profile_fake(300);
    let tools = tools_for(&fake);
    let outs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    ok(
                        &tools,
                        "x_md_get_profile",
                        json!({"handle": "demo_author", "limit": 2}),
                    )
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        fake.request_count(),
        2,
        "one request per upstream path: {:?}",
        fake.targets()
    );
    let misses = outs
        .iter()
        .filter(|o| o.structured.as_ref().unwrap()["cache"] == "miss")
        .count();
    // The profile and the first timeline page are two keys fetched at
    // once: two different callers may each lead one of them, so one or two
    // results report a miss; every other result waited and reports a hit.
    assert!((1..=2).contains(&misses), "{misses} misses");
    assert!(outs.iter().all(|o| o.text == outs[0].text));
}

#[test]
fn profile_costs_one_round_trip() {
    let fake = profile_fake(400);
    let tools = tools_for(&fake);
    let t = std::time::Instant::now();
    ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "limit": 2}),
    );
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(750),
        "profile and timeline in parallel: {took:?}"
    );
}

#[test]
fn rate_limit_cools_the_base() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/a",
        Answer::json(429, "{}").header("Retry-After", "30"),
    );
    fake.on(
        "/2/profile/a/statuses?count=20&with_replies=false",
        Answer::json(429, "{}").header("Retry-After", "30"),
    );
    let tools = tools_for(&fake);
    let t = err(&tools, "x_md_get_profile", json!({"handle": "a"}));
    assert_eq!(t, "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 30s)");
    let n = fake.request_count();
    assert!(n <= 2);
    let t = err(&tools, "x_md_get_followers", json!({"handle": "b"}));
    assert!(
        t == "FxTwitter asked xmd to slow down; no request is sent until its cool-down ends. (HTTP 503, code upstream_rate_limited, retry after 30s)"
            || t.ends_with("retry after 29s)"),
        "{t}"
    );
    let t = err(
        &tools,
        "x_md_get_post",
        json!({"handle": "b", "id": "1", "thread": "off"}),
    );
    assert!(t.contains("code upstream_rate_limited, retry after"), "{t}");
    assert_eq!(fake.request_count(), n, "nothing sent during the cool-down");
}

#[test]
fn several_bases_take_turns_and_cool_alone() {
    let a = FakeUpstream::start();
    let b = FakeUpstream::start();
    a.on(
        "/2/status/1",
        Answer::json(429, "{}").header("Retry-After", "60"),
    );
    let body = r#"{"code":200,"status":{"type":"status","id":"1","url":"https://x.com/u/status/1","text":"hello","author":{"screen_name":"u","name":"U"}},"thread":null,"author":null}"#;
    b.on("/2/status/1", Answer::json(200, body));
    b.on(
        "/2/status/2",
        Answer::json(200, &body.replace("\"1\"", "\"2\"").replace("/1\"", "/2\"")),
    );
    let up = HttpUpstream::from_list(
        &format!("{},{}", a.base_url(), b.base_url()),
        Duration::from_secs(5),
    )
    .unwrap();
    let tools = Tools::with_cache_bytes(Arc::new(up), 0);
    let out = ok(
        &tools,
        "x_md_get_post",
        json!({"handle": "u", "id": "1", "thread": "off"}),
    );
    assert!(out.text.contains("hello"));
    assert_eq!(
        (a.request_count(), b.request_count()),
        (1, 1),
        "a answered 429, b served it"
    );
    for id in ["2", "1", "2"] {
        ok(
            &tools,
            "x_md_get_post",
            json!({"handle": "u", "id": id, "thread": "off"}),
        );
    }
    assert_eq!(
        (a.request_count(), b.request_count()),
        (1, 4),
        "a is skipped while it cools"
    );
}
