//! Issue 27 item 1: a walk never stops on a repeated row.
//!
//! An upstream page can repeat rows of the page before (a boundary post,
//! a pinned post) or of itself, send an empty page that still carries a
//! cursor, or send a cursor it sent before. Before, one repeated row ended
//! the walk ("the list ends here", no `next_cursor`): with `limit` 17–20
//! the profile showed 17 of 23 posts. Now a row already shown is skipped,
//! and the list ends only where the upstream ends it (no cursor, or a
//! cursor already read).
//!
//! Generated: page sequences (1–6 pages of 0–8 rows) whose rows are new or
//! repeat one of the last rows before them (across pages and within a
//! page), runs of empty pages with fresh cursors, and a last page whose
//! bottom cursor is absent, its own, or the page before's. Every list tool
//! (search posts, search users, followers, following, quotes, reposts,
//! trends) and the profile timeline in each of its walks (posts, with
//! replies, media, articles, since), at every `limit` from 1 to 20,
//! through the loopback fake upstream. Oracle: the distinct rows in
//! upstream order; following `next_cursor` to the end yields exactly
//! them, no gap, no duplicate. With `since` (issue 31): the distinct rows
//! newer than it, the rows' times falling in upstream order, except that
//! FxTwitter answers 204 (nothing) when its first page holds no newer row
//! (its handler's rule, `src/realms/api/routes/twitter.ts`).

mod common;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};

const POST: &str = "2087208847298015232";

/// One generated upstream row: a new one, or a repeat of one of the last
/// rows before it (`back` rows back, within the marks a cursor carries).
#[derive(Debug, Clone)]
enum Cell {
    New,
    Repeat(usize),
}

/// How the last page ends.
#[derive(Debug, Clone)]
enum End {
    Absent,
    Own,
    Previous,
}

#[derive(Debug, Clone)]
struct Script {
    pages: Vec<Vec<Cell>>,
    end: End,
    /// `since` is the time of row `since_at` (rows before it are newer).
    since_at: u64,
}

fn script() -> impl Strategy<Value = Script> {
    let cell = prop_oneof![4 => Just(Cell::New), 1 => (1usize..12).prop_map(Cell::Repeat)];
    let page = prop_oneof![
        5 => prop::collection::vec(cell, 1..9),
        1 => Just(Vec::new()),
    ];
    (
        prop::collection::vec(page, 1..7),
        prop_oneof![Just(End::Absent), Just(End::Own), Just(End::Previous)],
        0u64..45,
    )
        .prop_map(|(pages, end, since_at)| Script {
            pages,
            end,
            since_at,
        })
}

/// The pages as row numbers, and the oracle: distinct rows in order.
fn rows_of(s: &Script) -> (Vec<Vec<u64>>, Vec<u64>) {
    let mut next = 0u64;
    let mut stream: Vec<u64> = Vec::new();
    let pages: Vec<Vec<u64>> = s
        .pages
        .iter()
        .map(|cells| {
            cells
                .iter()
                .map(|c| {
                    let n = match c {
                        Cell::Repeat(back) if *back <= stream.len() => stream[stream.len() - back],
                        _ => {
                            next += 1;
                            next
                        }
                    };
                    stream.push(n);
                    n
                })
                .collect()
        })
        .collect();
    let mut want = Vec::new();
    for n in stream {
        if !want.contains(&n) {
            want.push(n);
        }
    }
    (pages, want)
}

/// Row `n`'s time: later rows are older, a minute apart.
fn time(n: u64) -> u64 {
    1_786_000_000 - n * 60
}

fn post(n: u64, handle: &str) -> Value {
    let id = 2_000_000_000_000_000_000 - n * 1000;
    json!({"type": "status", "id": id.to_string(), "text": format!("row {n}"),
        "created_at": "Tue Aug 11 16:05:42 +0000 2026", "created_timestamp": time(n),
        "author": {"id": "7", "screen_name": handle, "name": "Demo"},
        "replying_to": null, "reposted_by": null})
}

fn account(n: u64) -> Value {
    json!({"type": "profile", "id": (5_000 + n).to_string(), "screen_name": format!("fan_{n}"), "name": "Fan"})
}

/// Serves the script under `base` (a path with or without a query), the
/// page cursors `c1`, `c2`, …; `extra` follows `count` as the tool sends it.
fn serve(
    fake: &FakeUpstream,
    s: &Script,
    pages: &[Vec<u64>],
    base: &str,
    extra: &str,
    row: &dyn Fn(u64) -> Value,
) {
    let sep = if base.contains('?') { '&' } else { '?' };
    let last = pages.len() - 1;
    for (i, p) in pages.iter().enumerate() {
        let bottom = if i < last {
            json!(format!("c{}", i + 1))
        } else {
            match s.end {
                End::Absent => Value::Null,
                End::Own if i > 0 => json!(format!("c{i}")),
                End::Previous if i > 1 => json!(format!("c{}", i - 1)),
                // The first page's cursor is the empty one: no cursor.
                _ => Value::Null,
            }
        };
        let body = json!({"code": 200, "results": p.iter().map(|&n| row(n)).collect::<Vec<_>>(),
            "cursor": {"top": "top", "bottom": bottom}});
        let target = if i == 0 {
            format!("{base}{sep}count=20{extra}")
        } else {
            format!("{base}{sep}cursor=c{i}&count=20{extra}")
        };
        fake.on(&target, Answer::json(200, &body.to_string()));
    }
}

/// Follows `next_cursor` from `args` to the end; the ids served, in order.
fn follow(tools: &xmd::x::tools::Tools, tool: &str, mut args: Value, key: &str) -> Vec<String> {
    let mut got = Vec::new();
    for _ in 0..200 {
        let out = ok(tools, tool, args.clone());
        let s = out.structured.unwrap();
        got.extend(s[key].as_array().unwrap().iter().map(|r| {
            r.get("id")
                .unwrap_or(&r["name"])
                .as_str()
                .unwrap()
                .to_string()
        }));
        match s.get("next_cursor").and_then(Value::as_str) {
            Some(c) => {
                // The text names the raw cursor too (item 6), and the
                // Continue link passed back whole is taken as its cursor:
                // every other step passes the link.
                let raw = format!("next_cursor: `{c}`");
                assert!(out.text.contains(&raw), "{}", out.text);
                let link = out
                    .text
                    .lines()
                    .find(|l| l.starts_with("[Continue →]("))
                    .unwrap();
                args["cursor"] = if got.len() % 2 == 0 {
                    json!(c)
                } else {
                    json!(link)
                };
            }
            None => return got,
        }
    }
    panic!("{tool}: runaway walk");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn every_list_walk_serves_the_distinct_rows_once_in_order(s in script()) {
        let (pages, want) = rows_of(&s);
        let fake = FakeUpstream::start();
        fake.on("/2/profile/demo_author", Answer::fixture(200, "profile.json"));
        let posts_by = |h: &'static str| move |n: u64| post(n, h);
        serve(&fake, &s, &pages, "/2/search?q=walk&feed=latest", "", &posts_by("someone"));
        serve(&fake, &s, &pages, "/2/profile/demo_author/followers", "", &account);
        serve(&fake, &s, &pages, "/2/profile/demo_author/following", "", &account);
        serve(&fake, &s, &pages, &format!("/2/status/{POST}/reposts"), "", &account);
        serve(&fake, &s, &pages, "/2/profile/demo_author/statuses", "&with_replies=false", &posts_by("demo_author"));
        serve(&fake, &s, &pages, "/2/profile/demo_author/statuses", "&with_replies=true", &posts_by("demo_author"));
        serve(&fake, &s, &pages, "/2/profile/demo_author/media", "", &posts_by("demo_author"));
        serve(&fake, &s, &pages, "/2/profile/demo_author/articles", "", &posts_by("demo_author"));
        // `since`: its first page as FxTwitter answers it (204 when no row
        // of it is newer), the later pages are the timeline's.
        let since = time(s.since_at);
        let newer_first = pages[0].iter().any(|&n| time(n) > since);
        let first = format!("/2/profile/demo_author/statuses?count=20&with_replies=false&since={since}");
        if newer_first {
            let body = json!({"code": 200, "results": pages[0].iter().map(|&n| post(n, "demo_author")).collect::<Vec<_>>(),
                "cursor": {"top": "top", "bottom": if pages.len() > 1 { json!("c1") } else { Value::Null }}});
            fake.on(&first, Answer::json(200, &body.to_string()));
        } else {
            fake.on(&first, Answer::raw(204, "application/json", Vec::new()));
        }
        let since_want: Vec<String> = if newer_first {
            want.iter().filter(|&&n| time(n) > since).map(|&n| post(n, "x")["id"].as_str().unwrap().to_string()).collect()
        } else {
            Vec::new()
        };
        // The trends: one upstream list, the rows in a row (its names are
        // the row ids).
        let trends: Vec<Value> = pages.iter().flatten().map(|&n| json!({"name": format!("trend {n}"), "rank": null, "context": null})).collect();
        fake.on("/2/trends?type=trending&count=50", Answer::json(200, &json!({"code": 200, "timeline_type": "trending", "trends": trends, "cursor": {"top": null, "bottom": null}}).to_string()));
        let trend_names: Vec<String> = want.iter().map(|&n| format!("trend {n}")).collect();
        let quote = |n: u64| {
            let mut p = post(n, "someone");
            p["quote"] = json!({"type": "status", "id": POST, "text": "q"});
            p
        };
        serve(&fake, &s, &pages, &format!("/2/status/{POST}/quotes"), "", &quote);
        // The typeahead: one list, the pages in a row.
        let all: Vec<Value> = pages.iter().flatten().map(|&n| account(n)).collect();
        fake.on("/2/typeahead?q=walk&result_type=users", Answer::json(200, &json!({"code": 200, "users": all}).to_string()));
        let tools = tools_for(&fake);
        let post_ids: Vec<String> = want.iter().map(|&n| post(n, "x")["id"].as_str().unwrap().to_string()).collect();
        let account_ids: Vec<String> = want.iter().map(|&n| (5_000 + n).to_string()).collect();
        for limit in 1..=20u64 {
            let cases = [
                ("x_md_search_posts", json!({"q": "walk", "limit": limit}), "posts", &post_ids),
                ("x_md_search_posts", json!({"q": "walk", "feed": "users", "limit": limit}), "users", &account_ids),
                ("x_md_get_followers", json!({"handle": "demo_author", "limit": limit}), "users", &account_ids),
                ("x_md_get_following", json!({"handle": "demo_author", "limit": limit}), "users", &account_ids),
                ("x_md_get_quotes", json!({"handle": "demo_author", "id": POST, "limit": limit}), "posts", &post_ids),
                ("x_md_get_reposts", json!({"handle": "demo_author", "id": POST, "limit": limit}), "users", &account_ids),
                ("x_md_get_profile", json!({"handle": "demo_author", "limit": limit}), "posts", &post_ids),
                ("x_md_get_profile", json!({"handle": "demo_author", "with_replies": true, "limit": limit}), "posts", &post_ids),
                ("x_md_get_profile", json!({"handle": "demo_author", "feed": "media", "limit": limit}), "posts", &post_ids),
                ("x_md_get_profile", json!({"handle": "demo_author", "feed": "articles", "limit": limit}), "posts", &post_ids),
                ("x_md_get_profile", json!({"handle": "demo_author", "since": since, "limit": limit}), "posts", &since_want),
                ("x_md_get_trends", json!({"limit": limit}), "trends", &trend_names),
            ];
            for (tool, args, key, want) in cases {
                let got = follow(&tools, tool, args.clone(), key);
                prop_assert_eq!(&got, want, "{} {}", tool, args);
            }
        }
    }
}
