//! Issue 14, continuations of every tool: each result cut by the budget
//! (at several budgets) names a cursor that the same tool accepts, raw
//! and percent-encoded, and an absolute `[Continue →]` link under the
//! public URL that the HTTP route answers with the same result; the chain
//! reads every row once, in order; a cut result offers no "Next page"
//! link (it would skip the rows left out). Oracle: the upstream's own
//! list of ids.

mod common;
mod util;

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const PUBLIC: &str = "https://tools.example.org/xmd";
const FIRST_ID: u64 = 1_900_000_000_000_000_000;

fn user(i: u64) -> Value {
    json!({"id": (5000 + i).to_string(), "screen_name": format!("u{i}"), "name": format!("User {i}"),
           "description": format!("{i} {}", "bio words ".repeat(80)), "followers": 1, "following": 1, "statuses": 1})
}

fn status(i: u64, chars: usize, parent: Option<u64>) -> Value {
    let text: String = format!("{i:03} ")
        .chars()
        .chain("thread text ".chars().cycle())
        .take(chars)
        .collect();
    json!({
        "type": "status", "id": (FIRST_ID + i).to_string(),
        "url": format!("https://x.com/demo_author/status/{}", FIRST_ID + i),
        "text": text, "created_at": "Tue Aug 11 16:05:42 +0000 2026", "created_timestamp": 1786464342 + i,
        "likes": 1, "reposts": 0, "replies": 0,
        "author": {"id": "1625427172309102593", "screen_name": "demo_author", "name": "Demo Author"},
        "replying_to": parent.map(|p| json!({"screen_name": "demo_author", "status": (FIRST_ID + p).to_string()})),
    })
}

fn upstream() -> FakeUpstream {
    let up = FakeUpstream::start();
    let users: Vec<Value> = (0..12).map(user).collect();
    up.on(
        "/2/typeahead?q=people&result_type=users",
        Answer::json(200, &json!({"code": 200, "users": users}).to_string()),
    );
    for which in ["followers", "following"] {
        let base = format!("/2/profile/demo_author/{which}");
        up.on(
            &format!("{base}?count=20"),
            Answer::json(
                200,
                &json!({"code": 200, "results": users, "cursor": {"bottom": "c1"}}).to_string(),
            ),
        );
        up.on(
            &format!("{base}?cursor=c1&count=20"),
            Answer::json(200, r#"{"code":200,"results":[],"cursor":{"bottom":null}}"#),
        );
    }
    let posts: Vec<Value> = (0..12).map(|i| status(i, 800, None)).collect();
    // A post's quotes and reposts (issue 15): the same rows, two upstream
    // pages each, the second the empty end.
    for (which, rows) in [("quotes", &posts), ("reposts", &users)] {
        let base = format!("/2/status/{FIRST_ID}/{which}");
        up.on(
            &format!("{base}?count=20"),
            Answer::json(
                200,
                &json!({"code": 200, "results": rows, "cursor": {"top": "t+0=", "bottom": "c+1/="}})
                    .to_string(),
            ),
        );
        // The empty page carries a new cursor (read past); X answers the
        // empty page again for it, and that cursor does not advance.
        for c in ["c%2B1%2F%3D", "c%2B2%2F%3D"] {
            up.on(
                &format!("{base}?cursor={c}&count=20"),
                Answer::json(
                    200,
                    r#"{"code":200,"results":[],"cursor":{"top":"t+0=","bottom":"c+2/="}}"#,
                ),
            );
        }
    }
    up.on(
        "/2/search?q=long&feed=latest&count=20",
        Answer::json(
            200,
            &json!({"code": 200, "results": posts, "cursor": {"bottom": null}}).to_string(),
        ),
    );
    let thread: Vec<Value> = (0..8).map(|i| status(i, 800, i.checked_sub(1))).collect();
    up.on(
        &format!("/2/thread/{FIRST_ID}"),
        Answer::json(
            200,
            &json!({"code": 200, "status": thread[0], "thread": thread}).to_string(),
        ),
    );
    up
}

fn call(x: &Xmd, tool: &str, args: &Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}});
    let r = roundtrip(
        x,
        &post(
            &x.host(),
            &[
                "Content-Type: application/json",
                "Accept: application/json, text/event-stream",
                "MCP-Protocol-Version: 2025-11-25",
            ],
            &body.to_string(),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

fn get(x: &Xmd, target: &str, accept: &str) -> Reply {
    let raw = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: {accept}\r\n\r\n",
        x.host()
    );
    roundtrip(x, raw.as_bytes())
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap()
}

fn row_ids(sc: &Value) -> Vec<String> {
    ["posts", "users"]
        .iter()
        .filter_map(|k| sc.get(*k).and_then(Value::as_array))
        .flatten()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

/// The `[Continue →]` link of a text, as a path on this server.
fn continue_path(t: &str) -> String {
    let at = t
        .find("[Continue →](")
        .unwrap_or_else(|| panic!("no Continue link: {t}"))
        + "[Continue →](".len();
    let link = &t[at..at + t[at..].find(')').unwrap()];
    link.strip_prefix(PUBLIC)
        .unwrap_or_else(|| panic!("not under the public URL: {link}"))
        .to_string()
}

fn percent_encoded(c: &str) -> String {
    c.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// Follows a tool's continuation chain from `args`; every cut result is
/// checked as the module says. Returns the ids read, in order.
fn chain(x: &Xmd, tool: &str, args: &Value, max_chars: usize, json_link: bool) -> Vec<String> {
    let mut args = args.clone();
    args["max_chars"] = json!(max_chars);
    let mut seen = Vec::new();
    for _ in 0..40 {
        let r = call(x, tool, &args);
        assert_eq!(r["isError"], false, "{tool} {args}: {}", text(&r));
        let t = text(&r);
        assert!(
            t.chars().count() <= max_chars,
            "{tool} {}",
            t.chars().count()
        );
        let sc = &r["structuredContent"];
        seen.extend(row_ids(sc));
        let Some(c) = sc.get("next_cursor").and_then(Value::as_str) else {
            return seen;
        };
        if t.contains("Result budget of") {
            assert!(
                !t.contains("Next page"),
                "a cut result offers Next page: {t}"
            );
        }
        let mut next = args.clone();
        next["cursor"] = json!(c);
        next.as_object_mut().unwrap().remove("page");
        let after = call(x, tool, &next);
        let mut encoded = next.clone();
        encoded["cursor"] = json!(percent_encoded(c));
        assert_eq!(call(x, tool, &encoded), after, "{tool}: encoded cursor");
        // The link resolves on the HTTP route to the same continuation.
        let path = continue_path(t);
        // (A post link names its format, which decides the representation.)
        if json_link || tool != "x_md_get_post" {
            let rest = get(x, &path, "application/json");
            assert_eq!(rest.status, 200, "{path}: {}", rest.text());
            assert_eq!(
                row_ids(&rest.json()),
                row_ids(&after["structuredContent"]),
                "{path}"
            );
        }
        if !json_link {
            // The Markdown too, but for the lines echoing the call (the
            // route spells out the arguments it was given, e.g. `feed`).
            let strip = |t: &str| {
                t.lines()
                    .filter(|l| !l.contains("Continue"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let md = get(x, &path, "text/markdown").text();
            assert_eq!(strip(&md), strip(text(&after)), "{path}");
        }
        args = next;
    }
    panic!("{tool}: no end of the chain");
}

#[test]
fn every_tool_continues_by_cursor_and_by_link() {
    let up = upstream();
    let x = Xmd::start(&[
        "--upstream",
        &up.base_url(),
        "--public-url",
        "https://tools.example.org/xmd/",
        "--rate-limit",
        "0",
    ]);
    let users: Vec<String> = (0..12).map(|i| (5000 + i).to_string()).collect();
    let posts: Vec<String> = (0..12).map(|i| (FIRST_ID + i).to_string()).collect();
    for max_chars in [2_000, 3_100, 4_700, 9_000] {
        let cases = [
            (
                "x_md_search_posts",
                json!({"q": "people", "feed": "users", "full": true}),
                &users,
                false,
            ),
            (
                "x_md_get_followers",
                json!({"handle": "demo_author", "full": true}),
                &users,
                false,
            ),
            (
                "x_md_get_following",
                json!({"handle": "demo_author", "full": true}),
                &users,
                false,
            ),
            (
                "x_md_search_posts",
                json!({"q": "long", "full": true}),
                &posts,
                false,
            ),
            (
                "x_md_get_quotes",
                json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "full": true}),
                &posts,
                false,
            ),
            (
                "x_md_get_reposts",
                json!({"url": format!("https://x.com/demo_author/status/{FIRST_ID}"), "full": true}),
                &users,
                false,
            ),
        ];
        for (tool, args, want, json_link) in cases {
            assert_eq!(
                &chain(&x, tool, &args, max_chars, json_link),
                want,
                "{tool} {args} at {max_chars}"
            );
        }
        let thread: Vec<String> = posts[..8].to_vec();
        for format in ["markdown", "obsidian", "json"] {
            let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off", "format": format});
            assert_eq!(
                chain(&x, "x_md_get_post", &args, max_chars, format == "json"),
                thread,
                "{format} at {max_chars}"
            );
        }
    }
}

/// The one cursor `feed=users` takes is its own budget continuation; any
/// other is refused before an upstream request, with the feed's message.
#[test]
fn feed_users_refuses_other_cursors() {
    let up = upstream();
    let x = Xmd::start(&["--upstream", &up.base_url()]);
    let r = call(
        &x,
        "x_md_search_posts",
        &json!({"q": "long", "max_chars": 2000}),
    );
    let latest = r["structuredContent"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let before = up.request_count();
    for c in ["x", latest.as_str()] {
        let r = call(
            &x,
            "x_md_search_posts",
            &json!({"q": "long", "feed": "users", "cursor": c}),
        );
        assert_eq!(r["isError"], true);
        assert_eq!(
            text(&r),
            "this cursor is not a feed=users cursor; pass a feed=users result's `next_cursor` unchanged, or omit `cursor`. (HTTP 400, code invalid_cursor)"
        );
    }
    assert_eq!(up.request_count(), before);
}

/// A list row longer than the whole budget (a bio of 10,000 characters
/// among short ones) is cut inside and marked, and the result still ends
/// with its note and continuation (they were cut off with the row), so
/// the chain goes on to every row once; at every budget and position.
#[test]
fn a_row_over_the_budget_is_cut_inside_and_the_list_continues() {
    for (pos, max_chars) in [(0, 2_000), (1, 2_000), (2, 3_300), (0, 9_000)] {
        let up = FakeUpstream::start();
        let users: Vec<Value> = (0..3)
            .map(|i| {
                let mut u = user(i);
                if i == pos {
                    u["description"] = json!(format!("long {}", "b\u{2028}io ".repeat(2_000)));
                }
                u
            })
            .collect();
        up.on(
            "/2/typeahead?q=people&result_type=users",
            Answer::json(200, &json!({"code": 200, "users": users}).to_string()),
        );
        up.on(
            "/2/profile/demo_author/followers?count=20",
            Answer::json(
                200,
                &json!({"code": 200, "results": users, "cursor": {"bottom": null}}).to_string(),
            ),
        );
        // A post's reposts (the same accounts) and quotes (a post whose
        // text alone is over the budget among short ones).
        up.on(
            &format!("/2/status/{FIRST_ID}/reposts?count=20"),
            Answer::json(
                200,
                &json!({"code": 200, "results": users, "cursor": {"bottom": null}}).to_string(),
            ),
        );
        let posts: Vec<Value> = (0..3)
            .map(|i| {
                let mut p = status(i, 40, None);
                if i == pos {
                    p["text"] = json!(format!("long {}", "p\u{2028}ost ".repeat(2_000)));
                }
                p
            })
            .collect();
        up.on(
            &format!("/2/status/{FIRST_ID}/quotes?count=20"),
            Answer::json(
                200,
                &json!({"code": 200, "results": posts, "cursor": {"bottom": null}}).to_string(),
            ),
        );
        let x = Xmd::start(&[
            "--upstream",
            &up.base_url(),
            "--public-url",
            "https://tools.example.org/xmd/",
            "--rate-limit",
            "0",
        ]);
        let users_want: Vec<String> = (0..3).map(|i| (5000 + i).to_string()).collect();
        let posts_want: Vec<String> = (0..3).map(|i| (FIRST_ID + i).to_string()).collect();
        let post_args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "full": true});
        for (tool, args, want) in [
            (
                "x_md_get_followers",
                json!({"handle": "demo_author", "full": true}),
                &users_want,
            ),
            (
                "x_md_search_posts",
                json!({"q": "people", "feed": "users", "full": true}),
                &users_want,
            ),
            ("x_md_get_reposts", post_args.clone(), &users_want),
            ("x_md_get_quotes", post_args.clone(), &posts_want),
        ] {
            assert_eq!(
                &chain(&x, tool, &args, max_chars, false),
                want,
                "{tool} {pos} {max_chars}"
            );
            // The result that holds the long row: cut inside, marked.
            let mut a = args.clone();
            a["max_chars"] = json!(max_chars);
            let mut r = call(&x, tool, &a);
            while !row_ids(&r["structuredContent"]).contains(&want[pos as usize]) {
                a["cursor"] = r["structuredContent"]["next_cursor"].clone();
                r = call(&x, tool, &a);
            }
            let t = text(&r);
            assert!(t.chars().count() <= max_chars);
            assert!(t.contains(" …\n\n**[Cut: this row alone exceeds the result budget; the rest of it is not shown.]**"), "{t}");
            assert_eq!(r["structuredContent"]["truncated"], true);
            if pos < 2 {
                assert!(
                    t.contains("(that row cut: it alone exceeds the budget)"),
                    "{t}"
                );
                assert!(
                    t.contains("[Continue →](https://tools.example.org/xmd/"),
                    "{t}"
                );
            }
        }
    }
}

/// The deadline on a list walk (not only threads): pages that answer in
/// 700 ms each, `--call-timeout 1`, page 3 asked: the third upstream page
/// is never requested and the call is isError with code deadline, over
/// MCP and over the HTTP route (504); for followers and for a post's
/// quotes and reposts (the lists added after issue 14).
#[test]
fn a_list_walk_stops_at_the_deadline() {
    let id = FIRST_ID.to_string();
    let cases = [
        (
            "/2/profile/demo_author/followers".to_string(),
            "x_md_get_followers",
            json!({"handle": "demo_author", "page": 3}),
            "/demo_author/followers?page=3".to_string(),
            false,
        ),
        (
            format!("/2/status/{id}/quotes"),
            "x_md_get_quotes",
            json!({"handle": "demo_author", "id": id, "page": 3}),
            format!("/demo_author/status/{id}/quotes?page=3"),
            true,
        ),
        (
            format!("/2/status/{id}/reposts"),
            "x_md_get_reposts",
            json!({"url": format!("https://x.com/i/status/{id}"), "page": 3}),
            format!("/i/status/{id}/retweets?page=3"),
            false,
        ),
    ];
    for (base, tool, args, route, posts) in cases {
        let up = FakeUpstream::start();
        let page = |from: u64, bottom: &str| {
            let rows: Vec<Value> = (from..from + 20)
                .map(|i| if posts { status(i, 40, None) } else { user(i) })
                .collect();
            Answer::json(
                200,
                &json!({"code": 200, "results": rows, "cursor": {"bottom": bottom}}).to_string(),
            )
            .delay(std::time::Duration::from_millis(700))
        };
        up.on(&format!("{base}?count=20"), page(0, "c1"));
        up.on(&format!("{base}?cursor=c1&count=20"), page(20, "c2"));
        up.on(&format!("{base}?cursor=c2&count=20"), page(40, "c3"));
        let x = Xmd::start(&["--upstream", &up.base_url(), "--call-timeout", "1"]);
        let want = "The call reached its deadline of 1 s (--call-timeout) before the upstream answered; retry, or ask for less (for a post thread=off or a smaller max_posts; for a list an earlier page).";
        let r = call(&x, tool, &args);
        assert_eq!(r["isError"], true, "{tool}");
        assert_eq!(
            text(&r),
            format!("{want} (HTTP 504, code deadline)"),
            "{tool}"
        );
        std::thread::sleep(std::time::Duration::from_millis(800));
        assert_eq!(up.count_prefix(&format!("{base}?cursor=c2")), 0, "{tool}");
        // The route, on a fresh server (nothing cached): 504, code deadline.
        let x = Xmd::start(&["--upstream", &up.base_url(), "--call-timeout", "1"]);
        let r = get(&x, &route, "application/json");
        assert_eq!(r.status, 504, "{route}: {}", r.text());
        assert_eq!(r.json()["code"], "deadline", "{route}");
        assert_eq!(r.json()["detail"], want, "{route}");
    }
}

/// Item 8 for the profile timeline: an upstream that answers the same
/// posts for the next page never shows a post twice, across consecutive
/// results or in page mode; the repeated cursor ends the walk (the
/// upstream's end), without a note.
#[test]
fn a_repeating_profile_timeline_ends_at_its_repeated_cursor() {
    let up = FakeUpstream::start();
    up.on(
        "/2/profile/demo_author",
        Answer::json(
            200,
            r#"{"code":200,"user":{"screen_name":"demo_author","name":"Demo"}}"#,
        ),
    );
    let posts: Vec<Value> = (0..3).rev().map(|i| status(i, 40, None)).collect();
    let page = Answer::json(
        200,
        &json!({"code": 200, "results": posts, "cursor": {"bottom": "c1"}}).to_string(),
    );
    up.handler(move |t| {
        t.starts_with("/2/profile/demo_author/statuses")
            .then(|| page.clone())
    });
    let x = Xmd::start(&["--upstream", &up.base_url(), "--rate-limit", "0"]);
    let want: Vec<String> = (0..3).rev().map(|i| (FIRST_ID + i).to_string()).collect();
    // Across consecutive results.
    let r = call(
        &x,
        "x_md_get_profile",
        &json!({"handle": "demo_author", "limit": 3}),
    );
    assert_eq!(row_ids(&r["structuredContent"]), want);
    let c = r["structuredContent"]["next_cursor"].clone();
    assert!(c.is_string(), "{r}");
    let r = call(
        &x,
        "x_md_get_profile",
        &json!({"handle": "demo_author", "limit": 3, "cursor": c}),
    );
    assert_eq!(row_ids(&r["structuredContent"]), Vec::<String>::new());
    assert_eq!(r["structuredContent"].get("warnings"), None);
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
    // Within one result.
    let r = call(&x, "x_md_get_profile", &json!({"handle": "demo_author"}));
    assert_eq!(row_ids(&r["structuredContent"]), want);
    assert_eq!(r["structuredContent"].get("warnings"), None);
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
    // Page mode: page 2 would be page 1 again.
    let r = call(
        &x,
        "x_md_get_profile",
        &json!({"handle": "demo_author", "limit": 3, "page": 2}),
    );
    assert_eq!(row_ids(&r["structuredContent"]), Vec::<String>::new());
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
}

/// `max_chars` given as an integer-valued number (`3000.0`, an integer to
/// JSON Schema, so accepted) lowers the budget like `3000` (it was
/// accepted and ignored), and the continuation link carries `3000`.
#[test]
fn max_chars_as_a_whole_float_lowers_the_budget() {
    let up = upstream();
    let x = Xmd::start(&["--upstream", &up.base_url(), "--rate-limit", "0"]);
    for (tool, args) in [
        (
            "x_md_get_followers",
            json!({"handle": "demo_author", "full": true}),
        ),
        (
            "x_md_search_posts",
            json!({"q": "people", "feed": "users", "full": true}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"}),
        ),
    ] {
        for (int, float) in [(3000, 3000.0), (2000, 2e3)] {
            let mut a = args.clone();
            a["max_chars"] = json!(float);
            let by_float = call(&x, tool, &a);
            a["max_chars"] = json!(int);
            let by_int = call(&x, tool, &a);
            assert_eq!(text(&by_float), text(&by_int), "{tool}");
            assert!(text(&by_float).chars().count() <= int);
            assert!(
                text(&by_float).contains(&format!("max_chars={int}&")),
                "{tool}"
            );
        }
    }
}

/// A profile whose bio alone is longer than the budget: the bio is cut
/// (a quarter of the budget), the posts are still shown. Before, the last
/// guard cut the whole text inside the bio: no post and no continuation
/// in the text, while `structuredContent` claimed the posts were shown.
#[test]
fn a_bio_over_the_budget_is_cut_and_the_posts_still_shown() {
    let up = FakeUpstream::start();
    let bio = format!("{}end", "b\u{2028}io <x> ".repeat(1_250));
    up.on(
        "/2/profile/demo_author",
        Answer::json(
            200,
            &json!({"code": 200, "user": {"screen_name": "demo_author", "name": "Demo", "description": bio}}).to_string(),
        ),
    );
    let posts: Vec<Value> = (0..3).rev().map(|i| status(i, 40, None)).collect();
    up.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false",
        Answer::json(
            200,
            &json!({"code": 200, "results": posts, "cursor": {"bottom": null}}).to_string(),
        ),
    );
    let x = Xmd::start(&["--upstream", &up.base_url(), "--rate-limit", "0"]);
    for max_chars in [2_000, 5_000, 9_000] {
        let r = call(
            &x,
            "x_md_get_profile",
            &json!({"handle": "demo_author", "max_chars": max_chars}),
        );
        let t = text(&r);
        assert!(t.chars().count() <= max_chars, "{}", t.chars().count());
        // A quarter of the budget in characters and in estimated tokens
        // (the documented rule: ASCII a third of a token, U+2028 two).
        let cap = max_chars / 4;
        let (mut units, mut thirds, mut shown) = (0, 0, 0);
        for c in bio.chars() {
            units += c.len_utf16();
            thirds += if c.is_ascii() {
                1
            } else {
                3 * (c.len_utf8() - 1)
            };
            if units > cap || thirds > 3 * (cap / 2) {
                break;
            }
            shown += 1;
        }
        assert!(shown < cap, "the token estimate binds first here");
        assert!(
            t.contains(&format!(
                " … (bio cut: {shown} of its {} characters are shown; it alone exceeds the result budget)",
                bio.chars().count()
            )),
            "{t}"
        );
        for i in 0..3 {
            assert!(t.contains(&format!("/status/{}", FIRST_ID + i)), "{t}");
        }
        assert_eq!(r["structuredContent"]["truncated"], false);
        assert_eq!(r["structuredContent"]["profile"]["description"], json!(bio));
    }
}
