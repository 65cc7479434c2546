//! The read-only X routes over plain HTTP, end to end: the real binary on
//! a loopback fake FxTwitter, compared byte for byte with the tools run
//! in-process (`Tools::prepare` + `Tools::run`) over the same upstream;
//! content negotiation, RFC 9457 problems, ETag/304, HEAD, continuation
//! links, and the openapi.json round trip.

mod common;
mod util;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::browse::{serve_demo_timeline, tools_for, EMPTY_LIST, FOLLOW_NEXT};
use common::fake_upstream::{Answer, FakeUpstream};
use common::status_lists::{serve_status_list, FAILED_LIST_ID};
use serde_json::{json, Value};
use util::*;
use xmd::x::tools::Tools;

const CONV_ID: &str = "2085826244871471104";
const MQ_ID: &str = "2086794960023072769";
const SELF_FOCAL: &str = "2086014813833539585";
const PLAIN_ID: &str = "2087208847298015232";
const PRIVATE_ID: &str = "2086600000000000001";
const LIMITED_ID: &str = "2086000000000000429";
const MISSING_ID: &str = "2086000000000000404";
const SEARCH_NEXT: &str = "DAADDAABCgABHPeTsMXAEAAKAAIc95OwxcAP_wAIAAIAAAACCAADAAAAAAgABAAAAAAKAAUc95OwxcAQBwoABhz3k7DFwA_4AAA";
const FORGED: &str = "DAAHCgABHPg3Rk_A_-8LAAIAAAATMjA4NzIwODg0NzI5ODAxNTIzMggAAwAAAAIAAA";

/// One fake serving every recorded fixture.
fn fake() -> FakeUpstream {
    let f = FakeUpstream::start();
    f.on(
        &format!("/2/thread/{CONV_ID}"),
        Answer::fixture(200, "thread-reply.json"),
    );
    for mode in ["likes", "recency"] {
        f.on(
            &format!("/2/conversation/{CONV_ID}?ranking_mode={mode}"),
            Answer::fixture(200, "conversation-reply.json"),
        );
    }
    f.on(
        &format!("/2/status/{MQ_ID}"),
        Answer::fixture(200, "status-media-quote.json"),
    );
    f.on(
        &format!("/2/thread/{SELF_FOCAL}"),
        Answer::fixture(200, "thread-self.json"),
    );
    f.on(
        &format!("/2/status/{PLAIN_ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    for ep in ["status", "thread"] {
        f.on(
            &format!("/2/{ep}/{PRIVATE_ID}"),
            Answer::fixture(401, "status-401-private.json"),
        );
        f.on(
            &format!("/2/{ep}/{LIMITED_ID}"),
            Answer::fixture(429, "error-429-rate-limited.json").header("Retry-After", "30"),
        );
        f.on(
            &format!("/2/{ep}/{MISSING_ID}"),
            Answer::fixture(404, "status-404-not-found.json"),
        );
    }
    serve_demo_timeline(&f);
    common::readers::serve_readers(&f);
    serve_status_list(&f, "quotes");
    serve_status_list(&f, "reposts");
    // The cursor the profile forges after the 2nd post (upstream.md §2.9).
    f.on(
        &format!("/2/profile/demo_author/statuses?cursor={FORGED}&count=20&with_replies=false"),
        Answer::fixture(200, "profile-statuses-page2.json"),
    );
    for which in ["followers", "following"] {
        f.on(
            &format!("/2/profile/demo_author/{which}?count=20"),
            Answer::fixture(200, "followers-page1.json"),
        );
        f.on(
            &format!("/2/profile/demo_author/{which}?cursor={FOLLOW_NEXT}&count=20"),
            Answer::json(200, EMPTY_LIST),
        );
    }
    for feed in ["latest", "top"] {
        f.on(
            &format!("/2/search?q=fixture+cache&feed={feed}&count=20"),
            Answer::fixture(200, "search-latest.json"),
        );
        f.on(
            &format!("/2/search?q=fixture+cache&feed={feed}&cursor={SEARCH_NEXT}&count=20"),
            Answer::json(200, EMPTY_LIST),
        );
    }
    f.on(
        "/2/search?q=dashboard&feed=media&count=20",
        Answer::fixture(200, "search-media.json"),
    );
    f.on(
        "/2/typeahead?q=demo&result_type=users",
        Answer::fixture(200, "search-users-typeahead.json"),
    );
    f.on(
        "/2/search?q=outage&feed=latest&count=20",
        Answer::fixture(404, "search-404-outage.json"),
    );
    f
}

/// The server, its cursors signed with the secret of `tools_for`, so
/// its answers are the in-process tools' byte for byte.
fn start(up: &FakeUpstream) -> Xmd {
    let secret = std::str::from_utf8(common::browse::TEST_CURSOR_SECRET).unwrap();
    // Many routes from one address in a row: the upstream budget (a lone
    // client's share, tests/fairness.rs) is not what these tests check.
    Xmd::start(&[
        "--upstream",
        &up.base_url(),
        "--cursor-secret",
        secret,
        "--upstream-budget",
        "0",
    ])
}

/// A tool's Markdown as this server writes it: its links to the HTTP
/// routes absolute under the server's public URL (issue 14).
fn abs(x: &Xmd, markdown: &str) -> String {
    markdown.replace("](/", &format!("](http://{}/", x.addr))
}

/// `METHOD target` with extra header lines on a fresh connection.
fn request(x: &Xmd, method: &str, target: &str, headers: &[&str]) -> Reply {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n", x.host());
    for h in headers {
        raw.push_str(h);
        raw.push_str("\r\n");
    }
    raw.push_str("\r\n");
    roundtrip(x, raw.as_bytes())
}

fn get(x: &Xmd, target: &str) -> Reply {
    request(x, "GET", target, &[])
}

/// The tool's output in-process over the same upstream (its own cache).
fn tool(tools: &Tools, name: &str, args: Value) -> xmd::x::tools::ToolOutput {
    let call = Tools::prepare(name, Some(&args)).unwrap_or_else(|e| panic!("{e:?}"));
    tools.run(&call)
}

/// Every fixture case: (route target, tool, arguments).
fn cases() -> Vec<(String, &'static str, Value)> {
    let post = "x_md_get_post";
    vec![
        (format!("/demo_reader/status/{CONV_ID}"), post, json!({"handle": "demo_reader", "id": CONV_ID})),
        (format!("/demo_reader/status/{CONV_ID}?replies=recent&full=true"), post, json!({"handle": "demo_reader", "id": CONV_ID, "replies": "recent", "full": true})),
        (format!("/demo_author/status/{MQ_ID}?thread=off"), post, json!({"handle": "demo_author", "id": MQ_ID, "thread": "off"})),
        (format!("/demo_author/status/{SELF_FOCAL}?replies=off&max_posts=2"), post, json!({"handle": "demo_author", "id": SELF_FOCAL, "replies": "off", "max_posts": 2})),
        (format!("/demo_author/status/{PLAIN_ID}?thread=off&format=obsidian&userinfo=author"), post, json!({"handle": "demo_author", "id": PLAIN_ID, "thread": "off", "format": "obsidian", "userinfo": "author"})),
        (format!("/demo_author/status/{SELF_FOCAL}?context=thread&full=1"), post, json!({"handle": "demo_author", "id": SELF_FOCAL, "context": "thread", "full": true})),
        (format!("/i/status/{MQ_ID}?thread=off"), post, json!({"url": format!("https://x.com/i/status/{MQ_ID}"), "thread": "off"})),
        (format!("/api/convert?url=https%3A%2F%2Ffxtwitter.com%2Fdemo_reader%2Fstatus%2F{CONV_ID}%2Fen&replies=off"), post, json!({"url": format!("https://fxtwitter.com/demo_reader/status/{CONV_ID}/en"), "replies": "off"})),
        ("/demo_author".into(), "x_md_get_profile", json!({"handle": "demo_author"})),
        ("/demo_author?limit=2&full=true".into(), "x_md_get_profile", json!({"handle": "demo_author", "limit": 2, "full": true})),
        ("/demo_author/followers?limit=3".into(), "x_md_get_followers", json!({"handle": "demo_author", "limit": 3})),
        ("/demo_author/followers?limit=4&full=true".into(), "x_md_get_followers", json!({"handle": "demo_author", "limit": 4, "full": true})),
        ("/demo_author/following".into(), "x_md_get_following", json!({"handle": "demo_author"})),
        ("/search?q=fixture+cache&limit=2".into(), "x_md_search_posts", json!({"q": "fixture cache", "limit": 2})),
        ("/search?q=fixture%20cache&feed=top&full=true".into(), "x_md_search_posts", json!({"q": "fixture cache", "feed": "top", "full": true})),
        ("/search?q=dashboard&feed=videos".into(), "x_md_search_posts", json!({"q": "dashboard", "feed": "videos"})),
        ("/search?q=demo&feed=users&full=true".into(), "x_md_search_posts", json!({"q": "demo", "feed": "users", "full": true})),
        (format!("/demo_author/status/{PLAIN_ID}/quotes"), "x_md_get_quotes", json!({"handle": "demo_author", "id": PLAIN_ID})),
        (format!("/Demo_Author/status/{PLAIN_ID}/quotes?limit=2&full=true"), "x_md_get_quotes", json!({"url": format!("https://x.com/demo_author/status/{PLAIN_ID}"), "limit": 2, "full": true})),
        (format!("/demo_author/status/{PLAIN_ID}/retweets"), "x_md_get_reposts", json!({"handle": "demo_author", "id": PLAIN_ID})),
        (format!("/demo_author/status/{PLAIN_ID}/retweets?limit=4&full=1&page=2"), "x_md_get_reposts", json!({"handle": "demo_author", "id": PLAIN_ID, "limit": 4, "full": true, "page": 2})),
        // Issue 31: X's own paths of a profile's tabs and of its trends.
        ("/demo_author/media".into(), "x_md_get_profile", json!({"handle": "demo_author", "feed": "media"})),
        ("/demo_author/media?limit=1&full=true".into(), "x_md_get_profile", json!({"handle": "demo_author", "feed": "media", "limit": 1, "full": true})),
        ("/demo_author/articles".into(), "x_md_get_profile", json!({"handle": "demo_author", "feed": "articles"})),
        ("/demo_author?with_replies=true&limit=1".into(), "x_md_get_profile", json!({"handle": "demo_author", "with_replies": true, "limit": 1})),
        (format!("/demo_author?since={}", common::readers::SINCE_SOME), "x_md_get_profile", json!({"handle": "demo_author", "since": common::readers::SINCE_SOME})),
        (format!("/demo_author?since={}", common::readers::SINCE_NONE), "x_md_get_profile", json!({"handle": "demo_author", "since": common::readers::SINCE_NONE})),
        ("/explore/tabs/trending".into(), "x_md_get_trends", json!({})),
        ("/explore/tabs/trending?limit=2&full=true".into(), "x_md_get_trends", json!({"limit": 2, "full": true})),
        (format!("/demo_author/status/{}?thread=off&lang=en", common::readers::TRANSLATED_ID), post, json!({"handle": "demo_author", "id": common::readers::TRANSLATED_ID, "thread": "off", "lang": "en"})),
    ]
}

#[test]
fn every_fixture_route_answers_the_tools_markdown_byte_for_byte() {
    let up = fake();
    let x = start(&up);
    let tools = tools_for(&up);
    for (target, name, args) in cases() {
        let want = tool(&tools, name, args.clone());
        assert!(!want.is_error, "{name} {args}: {}", want.text);
        let r = get(&x, &target);
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("text/markdown; charset=utf-8"),
            "{target}"
        );
        assert_eq!(r.text(), abs(&x, &want.text), "{target}");
        assert_eq!(r.header("vary").as_deref(), Some("Accept, Origin"));
    }
}

#[test]
fn json_when_asked_by_format_or_accept() {
    let up = fake();
    let x = start(&up);
    let tools = tools_for(&up);
    let want = tool(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "limit": 2}),
    )
    .structured
    .unwrap();
    let r = request(
        &x,
        "GET",
        "/demo_author?limit=2",
        &["Accept: application/json"],
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(r.json(), want, "first run: both miss");
    // format=json wins over Accept; Accept: */* and a tie stay Markdown.
    let r = request(
        &x,
        "GET",
        "/demo_author?limit=2&format=json",
        &["Accept: text/markdown"],
    );
    let mut hit = want.clone();
    hit["cache"] = json!("hit");
    assert_eq!(r.json(), hit);
    for accept in ["*/*", "application/json, text/markdown", "text/html"] {
        let r = request(
            &x,
            "GET",
            "/demo_author?limit=2",
            &[&format!("Accept: {accept}")],
        );
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("text/markdown; charset=utf-8"),
            "{accept}"
        );
        // The tool's Markdown, with links absolute under this server.
        let md = tool(
            &tools,
            "x_md_get_profile",
            json!({"handle": "demo_author", "limit": 2}),
        )
        .text
        .replace(
            "](/demo_author?",
            &format!("](http://{}/demo_author?", x.addr),
        );
        assert_eq!(r.text(), md);
    }
    let r = request(
        &x,
        "GET",
        "/demo_author?limit=2&format=markdown",
        &["Accept: application/json"],
    );
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("text/markdown; charset=utf-8")
    );
    // The post tool's own format=json: JSON representation of its result.
    let want = tool(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": PLAIN_ID, "thread": "off", "format": "json"}),
    );
    let r = get(
        &x,
        &format!("/demo_author/status/{PLAIN_ID}?thread=off&format=json"),
    );
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(r.json(), want.structured.unwrap());
    // Query refusals.
    let r = get(&x, "/demo_author?format=obsidian");
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["detail"],
        "`format` must be one of: markdown, json"
    );
}

/// The tools' error text is `<detail> (HTTP <status>, code <code>[, retry
/// after <n>s])`: the problem must carry exactly those parts.
fn assert_problem_matches_tool(r: &Reply, tool_text: &str) {
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(r.header("cache-control").as_deref(), Some("no-store"));
    let p = r.json();
    assert_eq!(p["type"], "about:blank");
    assert_eq!(p["status"], r.status);
    let mut text = format!(
        "{} (HTTP {}, code {}",
        p["detail"].as_str().unwrap(),
        p["status"],
        p["code"].as_str().unwrap()
    );
    if let Some(n) = p.get("retry_after") {
        text.push_str(&format!(", retry after {n}s"));
        assert_eq!(r.header("retry-after"), Some(n.to_string()));
    }
    text.push(')');
    assert_eq!(text, tool_text);
}

#[test]
fn failures_are_problem_details_with_the_tools_status_code_and_message() {
    let up = fake();
    let x = start(&up);
    let tools = tools_for(&up);
    let cases: [(String, &str, Value, u16, &str); 7] = [
        (
            format!("/demo_author/status/{PRIVATE_ID}"),
            "x_md_get_post",
            json!({"handle": "demo_author", "id": PRIVATE_ID}),
            403,
            "private_tweet",
        ),
        (
            format!("/demo_author/status/{MISSING_ID}?thread=off"),
            "x_md_get_post",
            json!({"handle": "demo_author", "id": MISSING_ID, "thread": "off"}),
            404,
            "not_found",
        ),
        (
            "/nobody_here".into(),
            "x_md_get_profile",
            json!({"handle": "nobody_here"}),
            404,
            "not_found",
        ),
        (
            "/search?q=outage".into(),
            "x_md_search_posts",
            json!({"q": "outage"}),
            503,
            "search_unavailable",
        ),
        (
            format!("/demo_author/status/{MISSING_ID}/quotes"),
            "x_md_get_quotes",
            json!({"handle": "demo_author", "id": MISSING_ID}),
            503,
            "search_unavailable",
        ),
        (
            format!("/demo_author/status/{MISSING_ID}/retweets"),
            "x_md_get_reposts",
            json!({"handle": "demo_author", "id": MISSING_ID}),
            404,
            "not_found",
        ),
        (
            format!("/demo_author/status/{FAILED_LIST_ID}/retweets"),
            "x_md_get_reposts",
            json!({"handle": "demo_author", "id": FAILED_LIST_ID}),
            502,
            "fxtwitter_error",
        ),
    ];
    for (target, name, args, status, code) in cases {
        let want = tool(&tools, name, args);
        assert!(want.is_error);
        let r = get(&x, &target);
        assert_eq!(
            (r.status, r.json()["code"].as_str()),
            (status, Some(code)),
            "{target}"
        );
        assert_problem_matches_tool(&r, &want.text);
        if status == 503 {
            assert!(r.header("retry-after").is_some(), "{target}");
        }
    }
    // Cursor issued by another tool: the tool's invalid_cursor.
    let r = get(&x, "/demo_author/following?limit=3");
    let body = r.text();
    let cursor = body
        .split("cursor=")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let r = get(&x, &format!("/demo_author/followers?cursor={cursor}"));
    assert_eq!(
        (r.status, r.json()["code"].as_str()),
        (400, Some("invalid_cursor"))
    );
    // Invalid arguments never reach the upstream.
    let before = up.request_count();
    let bad: [(&str, &str, &str); 7] = [
        ("/demo_author?limit=50", "invalid_arguments", "`limit` must be an integer from 1 to 20"),
        ("/demo_author?full=yes", "invalid_arguments", "`full` must be a boolean (true or false)"),
        ("/search", "invalid_arguments", "missing required property `q`"),
        ("/search?q=+++", "invalid_arguments", "`q` must be a search query of 1 to 500 characters with at least one non-space character"),
        ("/demo_author?page=2&page=3", "invalid_query", "query parameter `page` is given more than once"),
        ("/demo_author?query=rust", "invalid_query", "unknown query parameter `query`; this route takes: feed, with_replies, since, page, limit, cursor, full, format, max_chars"),
        ("/api/convert?url=https%3A%2F%2Fexample.com%2Fa", "invalid_arguments", "`url` must be an X post permalink such as https://x.com/<handle>/status/<id> (twitter.com, mobile., www., fxtwitter.com, vxtwitter.com, fixupx.com, /i/status/<id> and /i/web/status/<id> also work; the id is 1 to 20 digits, at most 18446744073709551615, not 0); host `example.com` is not an X host"),
    ];
    for (target, code, detail) in bad {
        let r = get(&x, target);
        assert_eq!(r.status, 400, "{target}");
        let p = r.json();
        assert_eq!(
            (p["code"].as_str(), p["detail"].as_str()),
            (Some(code), Some(detail)),
            "{target}"
        );
        assert_eq!(p["title"], "Bad Request");
    }
    assert_eq!(up.request_count(), before);
    // Last: a 429 puts the upstream into its cool-down for everything after.
    let want = tool(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": LIMITED_ID}),
    );
    let r = get(&x, &format!("/demo_author/status/{LIMITED_ID}"));
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["code"], "upstream_rate_limited");
    assert_problem_matches_tool(&r, &want.text);
    assert_eq!(r.header("retry-after").as_deref(), Some("30"));
    assert_eq!(r.json()["retry_after"], 30);
}

#[test]
fn etag_304_cache_control_and_head() {
    let up = fake();
    let x = start(&up);
    let target = format!("/demo_author/status/{MQ_ID}?thread=off");
    let first = get(&x, &target);
    assert_eq!(
        first.header("cache-control").as_deref(),
        Some("public, max-age=300")
    );
    let tag = first.header("etag").unwrap();
    assert!(
        tag.starts_with('"') && tag.ends_with('"') && tag.len() == 34,
        "{tag}"
    );
    let again = request(
        &x,
        "GET",
        &target,
        &[&format!("If-None-Match: \"nope\", {tag}")],
    );
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(tag.clone()));
    let cc = again.header("cache-control").unwrap();
    let age: u64 = cc
        .strip_prefix("public, max-age=")
        .unwrap()
        .parse()
        .unwrap();
    assert!((295..=300).contains(&age), "a hit counts down: {cc}");
    let other = request(&x, "GET", &target, &["If-None-Match: \"other\""]);
    assert_eq!(
        (other.status, other.body.clone()),
        (200, first.body.clone())
    );
    let json = request(&x, "GET", &target, &["Accept: application/json"]);
    assert_ne!(
        json.header("etag"),
        Some(tag.clone()),
        "each representation has its own tag"
    );
    // The JSON names the cache status (`miss`, then `hit`): its tag is
    // weak, over the data without that member, so the same data keeps one
    // tag and revalidating with the first fetch's tag is a 304.
    let fresh = format!("/demo_author/status/{PLAIN_ID}?thread=off&format=json");
    let miss = request(&x, "HEAD", &fresh, &[]);
    let weak = miss.header("etag").unwrap();
    assert!(weak.starts_with("W/\"") && weak.len() == 36, "{weak}");
    let hit = get(&x, &fresh);
    assert_eq!(hit.json()["cache"], "hit");
    assert_eq!(hit.header("etag"), Some(weak.clone()));
    let revalidated = request(&x, "GET", &fresh, &[&format!("If-None-Match: {weak}")]);
    assert_eq!(revalidated.status, 304);
    assert_eq!(revalidated.header("etag"), Some(weak));
    // Every cacheable answer varies by Origin, a request without one too.
    let varies = |r: &Reply| -> Vec<String> {
        r.head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(k, _)| k.eq_ignore_ascii_case("vary"))
            .map(|(_, v)| v.trim().to_string())
            .collect()
    };
    assert_eq!(varies(&first), ["Accept, Origin"]);
    let from_a_page = request(&x, "GET", &target, &["Origin: http://localhost:3000"]);
    assert_eq!(varies(&from_a_page), ["Accept, Origin"]);
    // HEAD: same status and headers (Content-Length included), no body.
    let head = request(&x, "HEAD", &target, &[]);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    for h in ["content-type", "content-length", "etag", "vary"] {
        assert_eq!(head.header(h), first.header(h), "{h}");
    }
    let head = request(
        &x,
        "HEAD",
        &format!("/demo_author/status/{PRIVATE_ID}"),
        &[],
    );
    assert_eq!(head.status, 403);
    assert_eq!(
        head.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    // Timelines live 60 s; a result with a failed part is not cacheable.
    let r = get(&x, "/demo_author?limit=2");
    assert_eq!(
        r.header("cache-control").as_deref(),
        Some("public, max-age=60")
    );
    // A post's quotes are a search (60 s), its reposts a list (300 s).
    let r = get(&x, &format!("/demo_author/status/{PLAIN_ID}/quotes"));
    assert_eq!(
        r.header("cache-control").as_deref(),
        Some("public, max-age=60")
    );
    let r = get(&x, &format!("/demo_author/status/{PLAIN_ID}/retweets"));
    assert_eq!(
        r.header("cache-control").as_deref(),
        Some("public, max-age=300")
    );
    // Other methods and preflight.
    let r = request(&x, "POST", "/demo_author", &["Content-Length: 0"]);
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD, OPTIONS"));
    assert_eq!(r.json()["code"], "method_not_allowed");
    let r = request(&x, "OPTIONS", "/search", &[]);
    assert_eq!(r.status, 204);
}

#[test]
fn continuation_links_resolve_to_the_tools_next_pages() {
    let up = fake();
    let x = start(&up);
    let tools = tools_for(&up);
    let quotes = format!("/demo_author/status/{PLAIN_ID}/quotes?limit=2");
    let retweets = format!("/demo_author/status/{PLAIN_ID}/retweets?limit=2");
    let starts: [(&str, &str, Value); 5] = [
        (
            "/demo_author?limit=2",
            "x_md_get_profile",
            json!({"handle": "demo_author", "limit": 2}),
        ),
        (
            "/demo_author/followers?limit=3",
            "x_md_get_followers",
            json!({"handle": "demo_author", "limit": 3}),
        ),
        (
            "/search?q=fixture+cache&limit=2",
            "x_md_search_posts",
            json!({"q": "fixture cache", "limit": 2}),
        ),
        (
            &quotes,
            "x_md_get_quotes",
            json!({"handle": "demo_author", "id": PLAIN_ID, "limit": 2}),
        ),
        (
            &retweets,
            "x_md_get_reposts",
            json!({"handle": "demo_author", "id": PLAIN_ID, "limit": 2}),
        ),
    ];
    for (target, name, args) in starts {
        let out = tool(&tools, name, args.clone());
        let s = out.structured.unwrap();
        let page = get(&x, target).text();
        assert_eq!(page, abs(&x, &out.text));
        let origin = format!("http://{}", x.addr);
        // The Continue line, then the raw cursor's line (issue 27 item 6).
        let line = page
            .lines()
            .find(|l| l.starts_with("[Continue →]("))
            .unwrap();
        assert_eq!(
            page.lines().last().unwrap(),
            format!(
                "next_cursor: `{}` (pass it as `cursor`, with the same other arguments, to continue)",
                s["next_cursor"].as_str().unwrap()
            )
        );
        let cont = line
            .strip_prefix("[Continue →](")
            .unwrap()
            .split(')')
            .next()
            .unwrap()
            .strip_prefix(&origin)
            .unwrap();
        let next = line
            .split("[Next page (2) →](")
            .nth(1)
            .unwrap()
            .trim_end_matches(')')
            .strip_prefix(&origin)
            .unwrap();
        // Continue → the tool called with next_cursor.
        let mut with_cursor = args.clone();
        with_cursor["cursor"] = s["next_cursor"].clone();
        let want = tool(&tools, name, with_cursor);
        let r = get(&x, cont);
        assert_eq!(r.status, 200, "{cont}: {}", r.text());
        assert_eq!(r.text(), abs(&x, &want.text), "{cont}");
        // Next page → the tool called with page=2.
        let mut paged = args.clone();
        paged["page"] = json!(2);
        let want = tool(&tools, name, paged);
        let r = get(&x, next);
        assert_eq!(r.status, 200, "{next}");
        assert_eq!(r.text(), abs(&x, &want.text), "{next}");
    }
}

#[test]
fn reserved_names_and_unknown_paths_keep_their_answers() {
    let up = fake();
    let x = start(&up);
    assert_eq!(get(&x, "/healthz").text(), "{\"status\":\"ok\"}");
    assert!(get(&x, "/metrics")
        .text()
        .contains("xmd_http_requests_total"));
    assert_eq!(get(&x, "/openapi.json").json()["openapi"], "3.1.0");
    for path in [
        "/metrics/followers",
        "/HEALTHZ",
        "/mcp/following",
        "/search/followers",
        "/api",
        "/i",
        "/i/followers",
        "/Search/status/1",
        "/demo_author/",
        "/demo_author/likes",
        "/no-such-route",
        "/demo_author/status/12ab",
        "/demo_author/status/12ab/quotes",
        "/demo_author/status/1/likes",
        "/demo_author/status/1/reposts",
        "/search/status/1/quotes",
    ] {
        let r = get(&x, path);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.json()["error"], "not_found", "{path}");
    }
    assert_eq!(
        up.request_count(),
        0,
        "no reserved name reached the upstream"
    );
}

#[test]
fn runs_go_to_the_workers_not_the_event_loop() {
    let up = FakeUpstream::start();
    up.on(
        "/2/profile/slow_one",
        Answer::fixture(200, "profile.json").delay(Duration::from_millis(1500)),
    );
    let x = start(&up);
    let host = x.host();
    let slow = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(&host).unwrap();
        use std::io::Write;
        s.write_all(format!("GET /slow_one HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
            .unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        read_reply(&mut s, false).status
    });
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    assert_eq!(get(&x, "/healthz").status, 200);
    assert!(
        t.elapsed() < Duration::from_millis(700),
        "{:?}",
        t.elapsed()
    );
    assert!(up.request_count() >= 1);
    let _ = slow.join().unwrap();
}

/// Path and required query parameters filled from the documented examples.
fn example_target(spec: &Value, path: &str, item: &Value, op: &Value) -> String {
    let mut out = path.to_string();
    let mut query = Vec::new();
    let params = item["parameters"]
        .as_array()
        .into_iter()
        .chain(op["parameters"].as_array())
        .flatten();
    for p in params {
        let p = match p["$ref"].as_str() {
            Some(r) => &spec["components"]["parameters"][r.rsplit('/').next().unwrap()],
            None => p,
        };
        let ex = p["example"].as_str().map(str::to_string);
        match p["in"].as_str() {
            Some("path") => {
                out = out.replace(
                    &format!("{{{}}}", p["name"].as_str().unwrap()),
                    &ex.unwrap(),
                )
            }
            Some("query") if p["required"] == true => query.push(format!(
                "{}={}",
                p["name"].as_str().unwrap(),
                xmd::x::cursor::form_encode(&ex.unwrap())
            )),
            _ => {}
        }
    }
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query.join("&"));
    }
    out
}

#[test]
fn openapi_round_trip_every_documented_path_answers_and_every_route_is_documented() {
    let up = fake();
    let x = start(&up);
    let spec = get(&x, "/openapi.json").json();
    let paths = spec["paths"].as_object().unwrap();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let m = match method.as_str() {
                "get" => "GET",
                "options" => "OPTIONS",
                _ => continue,
            };
            let target = example_target(&spec, path, item, op);
            let r = request(&x, m, &target, &["Accept: application/json"]);
            assert_ne!(r.status, 404, "{m} {target}: {}", r.text());
            assert!(
                op["responses"].get(r.status.to_string()).is_some(),
                "{m} {target}: status {} is not documented",
                r.status
            );
            if m == "GET" && path != "/mcp" {
                assert_eq!(r.status, 200, "{m} {target}: {}", r.text());
            }
        }
    }
    let config = xmd::config::Config::new("127.0.0.1:0".parse().unwrap());
    let upstream = Arc::new(xmd::x::upstream::HttpUpstream::new(
        &up.base_url(),
        Duration::from_secs(1),
    ));
    let app = xmd::app::App::new(&config, upstream);
    let table: BTreeSet<String> = app.route_table().into_iter().collect();
    let documented: BTreeSet<String> = paths.keys().cloned().collect();
    assert_eq!(table, documented, "route table vs openapi.json paths");
    assert_eq!(table.len(), 26);
}

/// `tests/fixtures/oas-3.1-schema.json` is the OpenAPI Initiative's JSON
/// Schema for OpenAPI 3.1 documents (`$id`
/// https://spec.openapis.org/oas/3.1/schema/2022-10-07, Apache-2.0), the
/// one openapi-spec-validator applies; `.ci/run` additionally runs that
/// validator (with its semantic checks) through docs_check.py.
#[test]
fn openapi_document_validates_against_the_oas_3_1_schema() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json")).unwrap();
    let doc: Value = serde_json::from_str(
        &text
            .replace("{{PUBLIC_URL}}", "http://127.0.0.1:8080")
            .replace("{{VERSION}}", "0.0.0"),
    )
    .unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/oas-3.1-schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("the OAS 3.1 schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The validator is real: a broken document fails.
    let mut broken = doc.clone();
    broken["paths"]["/search"]["get"]["responses"] = json!("none");
    assert!(!v.is_valid(&broken));
    let mut broken = doc;
    broken["info"].as_object_mut().unwrap().remove("title");
    assert!(!v.is_valid(&broken));
}
