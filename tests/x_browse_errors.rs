//! Error mapping of the browse tools: one `isError` result per upstream
//! failure kind, naming HTTP status, code and (when known) the seconds to
//! wait, with no `structuredContent`; cursor refusals without an upstream
//! request; handed cases C14 (tool level), C15 a/b, C16 and C26 b/c/d.

mod common;

use common::browse::{err, ok, run, tools_for, EMPTY_LIST};
use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::json;
use xmd::x::tools::{PrepareError, Tools, TOOL_NAMES};

const LIST_404: &str = r#"{"code":404,"results":[],"cursor":{"top":null,"bottom":null}}"#;

fn user_body(handle: &str, protected: bool) -> String {
    json!({"code": 200, "message": "OK", "user": {"type": "profile", "id": "4200", "name": "N", "screen_name": handle,
        "description": "", "followers": 1, "following": 1, "statuses": 1, "likes": 0, "protected": protected,
        "joined": "Wed Oct 02 12:00:00 +0000 2024", "verification": {"verified": false, "type": null}}})
    .to_string()
}

#[test]
fn c26b_suspended_profile() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/banned_user",
        Answer::json(
            404,
            r#"{"code":404,"message":"User is suspended","reason":"suspended","id":"4242"}"#,
        ),
    );
    fake.on(
        "/2/profile/banned_user/statuses?count=20&with_replies=false",
        Answer::json(404, LIST_404),
    );
    let t = err(
        &tools_for(&fake),
        "x_md_get_profile",
        json!({"handle": "banned_user"}),
    );
    assert_eq!(
        t,
        "Account @banned_user is suspended. (HTTP 404, code suspended)"
    );
}

#[test]
fn c26c_and_c15a_unknown_profile() {
    let fake = FakeUpstream::start();
    for h in ["nobody_here", "gone_user"] {
        fake.on(
            &format!("/2/profile/{h}"),
            Answer::json(404, r#"{"code":404,"message":"User not found"}"#),
        );
        fake.on(
            &format!("/2/profile/{h}/statuses?count=20&with_replies=false"),
            Answer::json(404, LIST_404),
        );
        let t = err(&tools_for(&fake), "x_md_get_profile", json!({"handle": h}));
        assert_eq!(
            t,
            format!("Account @{h} was not found. (HTTP 404, code not_found)")
        );
        assert!(!t.contains("suspended"));
    }
    // 200 without `user` is not found too.
    fake.on(
        "/2/profile/odd",
        Answer::json(200, r#"{"code":200,"message":"OK"}"#),
    );
    fake.on(
        "/2/profile/odd/statuses?count=20&with_replies=false",
        Answer::json(200, EMPTY_LIST),
    );
    let t = err(
        &tools_for(&fake),
        "x_md_get_profile",
        json!({"handle": "odd"}),
    );
    assert_eq!(t, "Account @odd was not found. (HTTP 404, code not_found)");
}

#[test]
fn c26d_protected_followers_and_profile() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/locked_user",
        Answer::json(200, &user_body("locked_user", true)),
    );
    fake.on(
        "/2/profile/locked_user/followers?count=20",
        Answer::json(200, EMPTY_LIST),
    );
    fake.on(
        "/2/profile/locked_user/statuses?count=20&with_replies=false",
        Answer::json(404, LIST_404),
    );
    let tools = tools_for(&fake);
    let out = ok(
        &tools,
        "x_md_get_followers",
        json!({"handle": "locked_user"}),
    );
    assert_eq!(
        out.text,
        "# @locked_user followers\n\nNo accounts on this page.\n\n> @locked_user is a protected account; its followers are not public.\n"
    );
    let s = out.structured.unwrap();
    assert_eq!(s["users"], json!([]));
    assert_eq!(
        s["warnings"],
        json!(["@locked_user is a protected account; its followers are not public."])
    );
    let t = err(&tools, "x_md_get_profile", json!({"handle": "locked_user"}));
    assert_eq!(t, "Account @locked_user is protected; its posts and connections are not public. (HTTP 403, code protected_account)");
}

#[test]
fn c15b_long_bio_validates() {
    let name = "🦊".repeat(50);
    let body = json!({"code":200,"message":"OK","user":{"type":"profile","id":"4200","name": name,"screen_name":"long_bio",
        "description":"Reading list: https://t.co/AAAAAAAAAA more","raw_description":{"text":"Reading list: https://t.co/AAAAAAAAAA more",
        "facets":[{"type":"url","indices":[14,37],"original":"https://t.co/AAAAAAAAAA","replacement":"https://example.org/a/very/long/path/one/two/three/four"}]},
        "followers":5,"following":7,"statuses":9,"likes":0,"protected":false,"joined":"Wed Oct 02 12:00:00 +0000 2024","verification":{"verified":false,"type":null}}});
    let fake = FakeUpstream::start();
    fake.on("/2/profile/long_bio", Answer::json(200, &body.to_string()));
    fake.on(
        "/2/profile/long_bio/statuses?count=20&with_replies=false",
        Answer::json(200, EMPTY_LIST),
    );
    let out = ok(
        &tools_for(&fake),
        "x_md_get_profile",
        json!({"handle": "long_bio", "full": true}),
    );
    assert_eq!(
        out.text,
        format!("# [{name} (@long_bio)](https://x.com/long_bio)\n\nReading list: <https://example.org/a/very/long/path/one/two/three/four> more\n\n\
                 Followers: 5 · Following: 7 · Posts: 9 · Likes: 0\nJoined: 2024-10-02T12:00:00Z\n\n## Latest posts\nNo original posts on this page.\n")
    );
}

/// Without `full` the profile's `structuredContent` leaves the bio's
/// facets out (`raw_description`), and its Markdown still links the bio
/// with them: the lean account is written first, then the facets are put
/// back for the text.
#[test]
fn a_lean_profile_still_links_its_bio() {
    let body = json!({"code":200,"message":"OK","user":{"type":"profile","id":"4201","name":"Lean","screen_name":"lean_bio",
        "description":"Reading list: https://t.co/AAAAAAAAAA more","raw_description":{"text":"Reading list: https://t.co/AAAAAAAAAA more",
        "facets":[{"type":"url","indices":[14,37],"original":"https://t.co/AAAAAAAAAA","replacement":"https://example.org/list"}]},
        "followers":5,"following":7,"statuses":9,"protected":false}});
    let fake = FakeUpstream::start();
    fake.on("/2/profile/lean_bio", Answer::json(200, &body.to_string()));
    fake.on(
        "/2/profile/lean_bio/statuses?count=20&with_replies=false",
        Answer::json(200, EMPTY_LIST),
    );
    for full in [false, true] {
        let out = ok(
            &tools_for(&fake),
            "x_md_get_profile",
            json!({"handle": "lean_bio", "full": full}),
        );
        let counts = if full {
            "Followers: 5 · Following: 7 · Posts: 9\n\n"
        } else {
            ""
        };
        assert_eq!(
            out.text,
            format!("# [Lean (@lean_bio)](https://x.com/lean_bio)\n\nReading list: <https://example.org/list> more\n\n\
                     {counts}## Latest posts\nNo original posts on this page.\n")
        );
        let profile = &out.structured.as_ref().unwrap()["profile"];
        assert_eq!(profile["raw_description"].is_object(), full, "full {full}");
        assert_eq!(
            profile["description"],
            json!("Reading list: https://t.co/AAAAAAAAAA more")
        );
    }
}

#[test]
fn timeline_failure_fails_the_whole_profile() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/demo_author",
        Answer::fixture(200, "profile.json"),
    );
    fake.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false",
        Answer::json(
            500,
            r#"{"code":500,"results":[],"cursor":{"top":null,"bottom":null}}"#,
        ),
    );
    let t = err(
        &tools_for(&fake),
        "x_md_get_profile",
        json!({"handle": "demo_author"}),
    );
    assert_eq!(
        t,
        "FxTwitter API error: HTTP 500. (HTTP 502, code fxtwitter_error)"
    );
    assert_eq!(
        fake.request_count(),
        2,
        "profile and first page in parallel, nothing more"
    );
}

#[test]
fn search_outage_and_refusals() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/search?q=fixture+cache&feed=latest&count=20",
        Answer::fixture(404, "search-404-outage.json"),
    );
    fake.on(
        "/2/search?q=blocked&feed=top&count=20",
        Answer::json(
            400,
            r#"{"code":400,"message":"Search query is blocked by X content controls"}"#,
        ),
    );
    fake.on(
        "/2/typeahead?q=demo&result_type=users",
        Answer::json(
            404,
            r#"{"code":404,"query":"demo","num_results":0,"users":[],"topics":[],"events":[]}"#,
        ),
    );
    let tools = tools_for(&fake);
    let t = err(&tools, "x_md_search_posts", json!({"q": "fixture cache"}));
    assert_eq!(t, "X search is temporarily unavailable upstream. Retry shortly. (HTTP 503, code search_unavailable)");
    let t = err(&tools, "x_md_search_posts", json!({"q": "fixture cache"}));
    assert!(
        t.contains("search_unavailable"),
        "an outage is never cached"
    );
    assert_eq!(fake.request_count(), 2);
    let t = err(
        &tools,
        "x_md_search_posts",
        json!({"q": "blocked", "feed": "top"}),
    );
    assert_eq!(t, "FxTwitter refused the request: Search query is blocked by X content controls. (HTTP 400, code upstream_bad_request)");
    let t = err(
        &tools,
        "x_md_search_posts",
        json!({"q": "demo", "feed": "users"}),
    );
    assert_eq!(t, "X user search is temporarily unavailable upstream. Retry shortly. (HTTP 503, code search_unavailable)");
}

#[test]
fn list_failures() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/ghost/followers?count=20",
        Answer::json(404, LIST_404),
    );
    fake.on(
        "/2/profile/html/following?count=20",
        Answer::raw(200, "text/html", "<html>oops</html>"),
    );
    fake.on(
        "/2/profile/slow/following?count=20",
        Answer::json(429, "{}").header("Retry-After", "30"),
    );
    let tools = tools_for(&fake);
    assert_eq!(
        err(&tools, "x_md_get_followers", json!({"handle": "ghost"})),
        "Account @ghost was not found, is suspended, or its list is unavailable. (HTTP 404, code not_found)"
    );
    assert_eq!(
        err(&tools, "x_md_get_following", json!({"handle": "html"})),
        "FxTwitter upstream returned an unexpected response (not the JSON it should send). (HTTP 502, code upstream_invalid_response)"
    );
    assert_eq!(
        err(&tools, "x_md_get_following", json!({"handle": "slow"})),
        "FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after 30s)"
    );
}

#[test]
fn foreign_and_forged_cursors_touch_nothing() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/demo_author/followers?count=20",
        Answer::fixture(200, "followers-page1.json"),
    );
    let tools = tools_for(&fake);
    let s = ok(
        &tools,
        "x_md_get_followers",
        json!({"handle": "demo_author", "limit": 2}),
    )
    .structured
    .unwrap();
    let c = s["next_cursor"].as_str().unwrap().to_string();
    let before = fake.request_count();
    let cases = [
        ("x_md_get_following", json!({"handle": "demo_author", "cursor": c}), "This cursor was issued by x_md_get_followers and cannot be used with x_md_get_following."),
        ("x_md_get_profile", json!({"handle": "demo_author", "cursor": c}), "This cursor was issued by x_md_get_followers and cannot be used with x_md_get_profile."),
        ("x_md_search_posts", json!({"q": "a", "cursor": c}), "This cursor was issued by x_md_get_followers and cannot be used with x_md_search_posts."),
        ("x_md_get_followers", json!({"handle": "other", "cursor": c}), "This cursor belongs to @demo_author, not @other."),
        ("x_md_get_followers", json!({"handle": "demo_author", "cursor": c.replace("@2", "@9")}), "The cursor is not one this server issued for these arguments (altered, truncated, made up,"),
        ("x_md_get_followers", json!({"handle": "demo_author", "cursor": "@3"}), "The cursor is not one this server issued"),
        ("x_md_get_profile", json!({"handle": "demo_author", "cursor": "DAAHCgABHPg3Rk_A_-8LAAIAAAATMjA4NjM1ODIwNjk3MTM5MjAwMAgAAwAAAAIAAA"}), "The cursor is not one this server issued"),
        ("x_md_search_posts", json!({"q": "demo", "feed": "users", "cursor": "x"}), "this cursor is not a feed=users cursor;"),
    ];
    for (tool, args, want) in cases {
        let t = err(&tools, tool, args.clone());
        assert!(t.starts_with(want), "{tool} {args}: {t}");
        assert!(t.ends_with("(HTTP 400, code invalid_cursor)"), "{t}");
    }
    assert_eq!(
        fake.request_count(),
        before,
        "no upstream request for a refused cursor"
    );
}

#[test]
fn c14_argument_refusals_at_tool_level() {
    let fake = FakeUpstream::start();
    let cases = [
        (
            "x_md_get_profile",
            json!({"handle": "has spaces here"}),
            "`handle` must be an X handle",
        ),
        (
            "x_md_get_profile",
            json!({}),
            "missing required property `handle`",
        ),
        (
            "x_md_search_posts",
            json!({"query": "rust", "limit": 500}),
            "unknown property `query` (did you mean `q`?)",
        ),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "unknown_flag": true}),
            "unknown property `unknown_flag`",
        ),
        (
            "x_md_get_profile",
            json!("handle=example_user"),
            "`arguments` must be a JSON object",
        ),
        (
            "x_md_get_followers",
            json!({"handle": "a", "limit": 21}),
            "`limit` must be an integer from 1 to 20",
        ),
        (
            "x_md_get_following",
            json!({"handle": "a", "page": 11}),
            "`page` must be an integer from 1 to 10",
        ),
        (
            "x_md_search_posts",
            json!({"q": "a".repeat(501)}),
            "`q` must be a search query of 1 to 500",
        ),
    ];
    for (tool, args, want) in cases {
        match Tools::prepare(tool, Some(&args)) {
            Err(PrepareError::InvalidArguments(m)) => assert!(m.contains(want), "{tool}: {m}"),
            other => panic!("{tool} {args}: {other:?}"),
        }
    }
    assert_eq!(
        Tools::prepare("x_md_delete_post", Some(&json!({}))).unwrap_err(),
        PrepareError::UnknownTool
    );
    assert_eq!(fake.request_count(), 0);
    // 500 characters (code points) are fine.
    assert!(Tools::prepare("x_md_search_posts", Some(&json!({"q": "🦀".repeat(500)}))).is_ok());
    let _ = run;
}

#[test]
fn c16_tool_names_fit_every_client() {
    let defs = Tools::definitions();
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOL_NAMES);
    for n in &names {
        assert!(
            !n.is_empty() && n.len() <= 64 - "mcp__".len() - 2 - 39,
            "{n}"
        );
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{n}"
        );
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8);
}
