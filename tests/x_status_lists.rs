//! `x_md_get_quotes` and `x_md_get_reposts` from the recorded fixtures
//! (upstream.md §6.1): exact Markdown (tests/fixtures/render/*.md) and
//! `structuredContent` validated against each tool's `outputSchema`, the
//! exact upstream requests, paging by cursor and by page to the end, the
//! result budget with its continuation, and the error mapping with exact
//! texts; then the paging contract as a class over generated upstream
//! lists.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::browse::{err, golden, golden_json, ids, ok, run, tools_for, walk, Pages};
use common::fake_upstream::{Answer, FakeUpstream};
use common::status_lists::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::budget::Settings;
use xmd::x::tools::{PrepareError, Tools};

const POST_URL: &str = "https://x.com/Demo_Author/status/2087208847298015232";

fn lists_fake() -> FakeUpstream {
    let fake = FakeUpstream::start();
    serve_status_list(&fake, "quotes");
    serve_status_list(&fake, "reposts");
    fake
}

/// The ids of a fixture page's `results`.
fn fixture_ids(name: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(&common::fake_upstream::fixture(name)).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn all_ids(which: &str) -> Vec<String> {
    [1, 2]
        .iter()
        .flat_map(|n| fixture_ids(&format!("{which}-page{n}.json")))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever handle the request names (X ignores it in a post link), the
    /// result names the post's author only as the rows show it: quotes
    /// carry the quoted post, by @demo_author; reposts show no author, so
    /// the post is named by its id alone. Judged by the fixtures' own
    /// author, never by the request.
    #[test]
    fn the_requested_handle_never_becomes_the_author(
        handle in "[A-Za-z0-9_]{1,20}",
        by_url in any::<bool>(),
    ) {
        let fake = lists_fake();
        let tools = tools_for(&fake);
        let args = if by_url {
            json!({"url": format!("https://x.com/{handle}/status/{LIST_POST}")})
        } else {
            json!({"handle": handle, "id": LIST_POST})
        };
        let out = ok(&tools, "x_md_get_quotes", args.clone());
        let s = out.structured.unwrap();
        prop_assert_eq!(&s["handle"], &json!("demo_author"));
        prop_assert_eq!(&s["url"], &json!(format!("https://x.com/demo_author/status/{LIST_POST}")));
        prop_assert!(out.text.starts_with(&format!(
            "# Quotes of @demo_author's post {LIST_POST}\n\nPost: <https://x.com/demo_author/status/{LIST_POST}>\n"
        )), "{}", out.text);
        let out = ok(&tools, "x_md_get_reposts", args);
        let s = out.structured.unwrap();
        prop_assert_eq!(s.get("handle"), None);
        prop_assert_eq!(&s["url"], &json!(format!("https://x.com/i/status/{LIST_POST}")));
        prop_assert!(out.text.starts_with(&format!(
            "# Reposts of post {LIST_POST}\n\nPost: <https://x.com/i/status/{LIST_POST}>\n"
        )), "{}", out.text);
    }
}

#[test]
fn golden_quotes_and_reposts() {
    let fake = lists_fake();
    let tools = tools_for(&fake);
    let out = ok(&tools, "x_md_get_quotes", json!({"url": POST_URL}));
    golden("quotes.md", &out.text);
    let s = out.structured.unwrap();
    golden_json("quotes.json", &s);
    assert_eq!(ids(&s, "posts"), all_ids("quotes"));
    assert_eq!(s["resource"], "quotes");
    assert_eq!(s["handle"], "demo_author");
    assert_eq!(s["id"], LIST_POST);
    assert!(
        s["posts"][0].get("quote").is_none(),
        "lean rows drop the repeated quoted post"
    );
    assert!(
        s.get("next_cursor").is_none(),
        "the empty page 3 ends the list"
    );
    let out = ok(
        &tools,
        "x_md_get_quotes",
        json!({"handle": "demo_author", "id": LIST_POST, "full": true, "limit": 2}),
    );
    golden("quotes-full-limit2.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(
        s["posts"][0].get("quote"),
        None,
        "full rows leave out the requested post too (issue 14 item 3: one copy, named by `id` and `url`)"
    );
    assert!(s["posts"][0]["raw_text"].is_object(), "full keeps raw_text");
    assert_eq!(s["cache"], "hit");

    let out = ok(
        &tools,
        "x_md_get_reposts",
        json!({"handle": "@demo_author", "id": LIST_POST}),
    );
    golden("reposts.md", &out.text);
    let s = out.structured.unwrap();
    golden_json("reposts.json", &s);
    assert_eq!(ids(&s, "users"), all_ids("reposts"));
    let out = ok(
        &tools,
        "x_md_get_reposts",
        json!({"url": POST_URL, "full": true, "limit": 4}),
    );
    golden("reposts-full-limit4.md", &out.text);

    let q = |c: &str| query_encode(&bottom(c));
    let mut t = fake.targets();
    t.sort();
    let mut want = Vec::new();
    for which in ["quotes", "reposts"] {
        let base = format!("/2/status/{LIST_POST}/{which}");
        want.push(format!("{base}?count=20"));
        want.push(format!(
            "{base}?cursor={}&count=20",
            q(&format!("{which}-page1.json"))
        ));
        want.push(format!(
            "{base}?cursor={}&count=20",
            q(&format!("{which}-page2.json"))
        ));
        // The empty page's own bottom: X answers the empty page again.
        want.push(format!(
            "{base}?cursor={}&count=20",
            q(&format!("{which}-page3-empty.json"))
        ));
    }
    want.sort();
    assert_eq!(
        t, want,
        "each page once; the cursors' + / = percent-encoded"
    );
}

#[test]
fn paging_by_cursor_and_by_page_to_the_end() {
    let fake = lists_fake();
    let tools = tools_for(&fake);
    for (tool, which, key) in [
        ("x_md_get_quotes", "quotes", "posts"),
        ("x_md_get_reposts", "reposts", "users"),
    ] {
        let want = all_ids(which);
        for limit in 1..=6 {
            let blocks = walk(&tools, tool, json!({"url": POST_URL, "limit": limit}), key);
            assert_eq!(
                blocks.concat(),
                want,
                "{tool} limit {limit}: each row once, in order"
            );
            for b in &blocks[..blocks.len() - 1] {
                assert_eq!(b.len() as u64, limit, "{tool}: full blocks before the last");
            }
            for (n, b) in blocks.iter().enumerate() {
                let s = ok(
                    &tools,
                    tool,
                    json!({"url": POST_URL, "limit": limit, "page": n + 1}),
                )
                .structured
                .unwrap();
                assert_eq!(&ids(&s, key), b, "{tool} limit {limit} page {}", n + 1);
            }
        }
        // Past the end: an empty page without a cursor.
        let s = ok(
            &tools,
            tool,
            json!({"url": POST_URL, "limit": 5, "page": 3}),
        )
        .structured
        .unwrap();
        assert_eq!(s[key], json!([]));
        assert!(s.get("next_cursor").is_none());
    }
}

#[test]
fn cursor_is_bound_to_its_tool_and_post() {
    let fake = lists_fake();
    let tools = tools_for(&fake);
    let s = ok(
        &tools,
        "x_md_get_quotes",
        json!({"url": POST_URL, "limit": 2}),
    )
    .structured
    .unwrap();
    let c = s["next_cursor"].as_str().unwrap();
    assert!(c.starts_with(&format!("quotes:{LIST_POST}:@2!")), "{c}");
    let e = err(
        &tools,
        "x_md_get_reposts",
        json!({"url": POST_URL, "cursor": c}),
    );
    assert_eq!(e, "This cursor was issued by x_md_get_quotes and cannot be used with x_md_get_reposts. Pass the `next_cursor` of a previous result of this tool unchanged, or omit `cursor` to start at the first page. (HTTP 400, code invalid_cursor)");
    let e = err(
        &tools,
        "x_md_get_quotes",
        json!({"handle": "demo_author", "id": "2087208847298015233", "cursor": c}),
    );
    assert_eq!(e, "This cursor belongs to post 2087208847298015232, not post 2087208847298015233. Pass the `next_cursor` of a previous result of this tool unchanged, or omit `cursor` to start at the first page. (HTTP 400, code invalid_cursor)");
}

#[test]
fn budget_cut_continues_at_the_first_row_left_out() {
    // 20 reposters with 400-character bios: more than a 2,000-character
    // budget holds.
    let fake = FakeUpstream::start();
    let users: Vec<Value> = (0..20)
        .map(|i| {
            json!({"type": "profile", "id": format!("17000000000000000{i:02}"),
                "screen_name": format!("fan_{i}"), "name": format!("Fan {i}"),
                "description": "bio ".repeat(100), "followers": i})
        })
        .collect();
    let want: Vec<String> = users
        .iter()
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect();
    let c = "HBa+Rk/A==";
    fake.on(
        &format!("/2/status/{LIST_POST}/reposts?count=20"),
        Answer::json(
            200,
            &json!({"code": 200, "results": users, "cursor": {"top": null, "bottom": c}})
                .to_string(),
        ),
    );
    fake.on(
        &format!(
            "/2/status/{LIST_POST}/reposts?cursor={}&count=20",
            query_encode(c)
        ),
        Answer::fixture(200, "reposts-page3-empty.json"),
    );
    // Past the end X answers the empty page again (its bottom is the
    // cursor just read: the end).
    fake.on(
        &format!(
            "/2/status/{LIST_POST}/reposts?cursor={}&count=20",
            query_encode(&bottom("reposts-page3-empty.json"))
        ),
        Answer::fixture(200, "reposts-page3-empty.json"),
    );
    let tools = tools_for(&fake).with_settings(Settings {
        max_chars: 2_000,
        ..Settings::default()
    });
    let mut args = json!({"url": POST_URL, "full": true});
    let mut seen = Vec::new();
    let mut cuts = 0;
    loop {
        let out = ok(&tools, "x_md_get_reposts", args.clone());
        assert!(out.text.chars().count() <= 2_000);
        let s = out.structured.unwrap();
        let shown = ids(&s, "users");
        assert!(!shown.is_empty(), "every result makes progress");
        seen.extend(shown);
        let Some(c) = s.get("next_cursor").and_then(Value::as_str) else {
            assert_eq!(s["truncated"], false);
            break;
        };
        assert_eq!(s["truncated"], true);
        cuts += 1;
        // The note names the exact call that continues.
        let call = json!({"cursor": c, "full": true, "handle": "demo_author", "id": LIST_POST});
        assert!(
            out.text.contains(&format!("x_md_get_reposts {call}")),
            "{}",
            out.text
        );
        args["cursor"] = json!(c);
        assert!(cuts < 20, "runaway walk");
    }
    assert!(cuts >= 2, "{cuts}");
    assert_eq!(seen, want, "each row once, in order");
}

#[test]
fn upstream_errors_map_to_exact_results() {
    let fake = lists_fake();
    fake.on(
        "/2/status/1/quotes?count=20",
        Answer::fixture(400, "status-400-bad-id.json"),
    );
    fake.on(
        "/2/status/1/reposts?count=20",
        Answer::fixture(400, "status-400-bad-id.json"),
    );
    fake.on(
        "/2/status/2086000000000000429/quotes?count=20",
        Answer::fixture(429, "error-429-rate-limited.json").header("Retry-After", "30"),
    );
    let tools = tools_for(&fake);
    let at = |id: &str| json!({"handle": "demo_author", "id": id});
    assert_eq!(
        err(&tools, "x_md_get_quotes", at(NO_TIMELINE_ID)),
        "X quote search is temporarily unavailable upstream. Retry shortly. (HTTP 503, code search_unavailable)"
    );
    assert_eq!(
        err(&tools, "x_md_get_reposts", at(NO_TIMELINE_ID)),
        "Post 2086000000000000404 was not found, or X does not list its reposts. (HTTP 404, code not_found)"
    );
    for tool in ["x_md_get_quotes", "x_md_get_reposts"] {
        assert_eq!(
            err(&tools, tool, at(FAILED_LIST_ID)),
            "FxTwitter API error: HTTP 500. (HTTP 502, code fxtwitter_error)"
        );
        assert_eq!(
            err(&tools, tool, at("1")),
            "FxTwitter refused the request: id: tweet ID must be a numeric snowflake. (HTTP 400, code upstream_bad_request)"
        );
    }
    // A post nobody quoted: an empty list, not an error.
    fake.on(
        "/2/status/5/quotes?count=20",
        Answer::json(
            200,
            r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#,
        ),
    );
    let out = ok(&tools, "x_md_get_quotes", at("5"));
    assert_eq!(out.structured.unwrap()["posts"], json!([]));
    assert!(
        out.text.contains("\nNo quotes on this page.\n"),
        "{}",
        out.text
    );
    // Last: a 429 starts the upstream's cool-down for every later call.
    assert_eq!(
        err(&tools, "x_md_get_quotes", at("2086000000000000429")),
        "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 30s)"
    );
}

#[test]
fn arguments_name_the_post_once() {
    for tool in ["x_md_get_quotes", "x_md_get_reposts"] {
        assert_eq!(
            Tools::prepare(tool, Some(&json!({}))).unwrap_err(),
            PrepareError::InvalidArguments("supply `url` (e.g. \"https://x.com/example_user/status/1800000000000000001\"), or `handle` and `id` (e.g. \"example_user\" and \"1800000000000000001\")".into())
        );
        assert_eq!(
            Tools::prepare(tool, Some(&json!({"url": POST_URL, "id": "1"}))).unwrap_err(),
            PrepareError::InvalidArguments(
                "ambiguous target: supply either `url`, or `handle` and `id`, not both".into()
            )
        );
        assert_eq!(
            Tools::prepare(tool, Some(&json!({"url": POST_URL, "limit": 21}))).unwrap_err(),
            PrepareError::InvalidArguments("`limit` must be an integer from 1 to 20".into())
        );
        assert_eq!(
            Tools::prepare(tool, Some(&json!({"url": POST_URL, "page": 11}))).unwrap_err(),
            PrepareError::InvalidArguments("`page` must be an integer from 1 to 10".into())
        );
        // Every spelling of the post is one call (one cache key).
        let a = Tools::prepare(tool, Some(&json!({"url": POST_URL}))).unwrap();
        let b = Tools::prepare(
            tool,
            Some(&json!({"handle": "@DEMO_author", "id": format!("0{LIST_POST}")})),
        )
        .unwrap();
        assert_eq!(a.arguments(), b.arguments());
        assert_eq!(
            a.arguments(),
            json!({"handle": "demo_author", "id": LIST_POST})
        );
    }
    let fake = FakeUpstream::start();
    let out = run(
        &tools_for(&fake),
        "x_md_get_quotes",
        json!({"url": POST_URL}),
    );
    assert!(out.is_error);
}

/// An X-style cursor for page `n` of a generated list: standard base64
/// with `+`, `/` and `=`.
fn x_cursor(seed: u32, n: usize) -> String {
    format!("HBa+{seed:x}/{n}+Qk/A==")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any list of upstream pages (any sizes, empty pages inside too, the
    /// empty 200 page with both cursors at the end), any `limit`, any
    /// budget: following `next_cursor` returns every row exactly once, in
    /// order, each result within the budget (oracle: the generated list).
    #[test]
    fn any_list_is_read_whole_once_in_order(
        sizes in prop::collection::vec(0usize..25, 1..6),
        text_len in 1usize..400,
        limit in 1u64..=20,
        max_chars in 2_000usize..12_000,
        seed in any::<u32>(),
        quotes in any::<bool>(),
    ) {
        let (tool, which, key) = if quotes {
            ("x_md_get_quotes", "quotes", "posts")
        } else {
            ("x_md_get_reposts", "reposts", "users")
        };
        // An empty page ends a list upstream, so inner pages hold rows.
        let sizes: Vec<usize> = sizes.into_iter().map(|n| n.max(1)).collect();
        let mut pages = HashMap::new();
        let mut want = Vec::new();
        let mut next = 1_900_000_000_000_000_000u64;
        let base = format!("/2/status/{LIST_POST}/{which}");
        let path = |n: usize| {
            if n == 0 {
                format!("{base}?count=20")
            } else {
                format!("{base}?cursor={}&count=20", query_encode(&x_cursor(seed, n)))
            }
        };
        for (n, size) in sizes.iter().enumerate() {
            let rows: Vec<Value> = (0..*size).map(|_| {
                next -= 1;
                let id = next.to_string();
                want.push(id.clone());
                let text = "q é \"x\" ".repeat(text_len / 8 + 1);
                if quotes {
                    json!({"type": "status", "id": id, "text": text,
                        "author": {"id": "7", "screen_name": "fan", "name": "Fan"},
                        "quote": {"type": "status", "id": LIST_POST, "text": "t"}})
                } else {
                    json!({"type": "profile", "id": id, "screen_name": format!("u{id}"),
                        "name": "Fan", "description": text})
                }
            }).collect();
            let body = json!({"code": 200, "results": rows,
                "cursor": {"top": x_cursor(seed, 0), "bottom": x_cursor(seed, n + 1)}});
            pages.insert(path(n), body.to_string());
        }
        // Past the end X answers the empty page again: its bottom is the
        // cursor just read, which ends the walk.
        let end = json!({"code": 200, "results": [],
            "cursor": {"top": x_cursor(seed, 0), "bottom": x_cursor(seed, sizes.len() + 9)}}).to_string();
        pages.insert(path(sizes.len()), end.clone());
        pages.insert(path(sizes.len() + 9), end);
        let tools = Tools::with_cache_bytes(Arc::new(Pages(pages)), 0).with_settings(Settings {
            max_chars,
            ..Settings::default()
        });
        let mut args = json!({"url": POST_URL, "limit": limit, "full": true});
        let mut seen = Vec::new();
        for _ in 0..=want.len() + 1 {
            let call = Tools::prepare(tool, Some(&args)).unwrap();
            let out = tools.run(&call);
            prop_assert!(!out.is_error, "{}", out.text);
            prop_assert!(out.text.chars().count() <= max_chars);
            let s = out.structured.unwrap();
            let got = ids(&s, key);
            prop_assert!(got.len() as u64 <= limit);
            seen.extend(got);
            match s.get("next_cursor").and_then(Value::as_str) {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
        prop_assert_eq!(seen, want);
    }
}
