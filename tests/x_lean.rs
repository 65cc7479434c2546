//! Issue 14 item 3 as a class: `structuredContent` holds data, not
//! copies, for every tool of the registry (the list tools about one post
//! included). Every post text and every bio the upstream sends is a
//! generated marker, sent twice (`text` and `raw_text`, `description` and
//! `raw_description`) as FxTwitter does; quote rows also carry the
//! requested post, as X's quote search does. Oracle: the number of times
//! each marker occurs in the serialized `structuredContent`:
//! - without `full`, every marker at most once;
//! - with `full` (which asks for `raw_text`), a post's text at most
//!   twice, and the requested post of `x_md_get_quotes` not at all (the
//!   result names it once, by `id` and `url`).

mod common;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::registry::Tool;

const HANDLE: &str = "demo_author";
const POST: u64 = 1_900_000_000_000_000_000;
const ROWS: u64 = 3;

/// The markers of one upstream: per row a post text and a bio, plus the
/// requested post's text and its author's bio.
#[derive(Debug, Clone)]
struct Markers {
    texts: Vec<String>,
    bios: Vec<String>,
    requested: String,
    requested_bio: String,
}

fn user(i: u64, bio: &str) -> Value {
    json!({"type": "profile", "id": (5000 + i).to_string(), "screen_name": format!("u{i}"),
           "name": format!("User {i}"), "description": bio,
           "raw_description": {"text": bio, "facets": []},
           "followers": 1, "following": 1, "statuses": 1, "protected": false})
}

fn status(id: u64, text: &str, author: Value, quote: Option<&Value>) -> Value {
    let handle = author["screen_name"].as_str().unwrap().to_string();
    json!({"type": "status", "id": id.to_string(),
           "url": format!("https://x.com/{handle}/status/{id}"),
           "text": text, "raw_text": {"text": text, "facets": []},
           "created_at": "Tue Aug 11 16:05:42 +0000 2026", "created_timestamp": 1786464342,
           "likes": 1, "reposts": 0, "replies": 0, "author": author, "quote": quote})
}

fn upstream(m: &Markers) -> FakeUpstream {
    let up = FakeUpstream::start();
    let mut me = user(0, &m.requested_bio);
    me["screen_name"] = json!(HANDLE);
    let requested = status(POST, &m.requested, me.clone(), None);
    let users: Vec<Value> = (0..ROWS)
        .map(|i| user(i + 1, &m.bios[i as usize]))
        .collect();
    // Rows quoting the requested post, by the listed users.
    let quoting: Vec<Value> = (0..ROWS)
        .map(|i| {
            status(
                POST + 1 + i,
                &m.texts[i as usize],
                users[i as usize].clone(),
                Some(&requested),
            )
        })
        .collect();
    // The timeline's posts: the account's own, with their texts.
    let own: Vec<Value> = (0..ROWS)
        .map(|i| status(POST + 1 + i, &m.texts[i as usize], me.clone(), None))
        .collect();
    let page = |rows: &[Value]| {
        json!({"code": 200, "results": rows, "cursor": {"top": null, "bottom": null}}).to_string()
    };
    up.on(
        &format!("/2/status/{POST}"),
        Answer::json(200, &json!({"code": 200, "status": requested}).to_string()),
    );
    up.on(
        &format!("/2/profile/{HANDLE}"),
        Answer::json(200, &json!({"code": 200, "user": me}).to_string()),
    );
    up.on(
        &format!("/2/profile/{HANDLE}/statuses?count=20&with_replies=false"),
        Answer::json(200, &page(&own)),
    );
    for which in ["followers", "following"] {
        up.on(
            &format!("/2/profile/{HANDLE}/{which}?count=20"),
            Answer::json(200, &page(&users)),
        );
    }
    up.on(
        "/2/search?q=marker&feed=latest&count=20",
        Answer::json(200, &page(&quoting)),
    );
    up.on(
        "/2/typeahead?q=marker&result_type=users",
        Answer::json(200, &json!({"code": 200, "users": users}).to_string()),
    );
    up.on(
        &format!("/2/status/{POST}/quotes?count=20"),
        Answer::json(200, &page(&quoting)),
    );
    up.on(
        &format!("/2/status/{POST}/reposts?count=20"),
        Answer::json(200, &page(&users)),
    );
    // The trends carry the texts as names (a name is its own search query,
    // never copied as one).
    let trends: Vec<Value> = m
        .texts
        .iter()
        .map(|t| json!({"name": t, "rank": null, "context": null}))
        .collect();
    up.on(
        "/2/trends?type=trending&count=50",
        Answer::json(200, &json!({"code": 200, "timeline_type": "trending", "trends": trends, "cursor": {"top": null, "bottom": null}}).to_string()),
    );
    up
}

/// The calls of every tool (the search twice: posts and users).
fn calls(tool: Tool) -> Vec<Value> {
    let post = json!({"handle": HANDLE, "id": POST.to_string()});
    match tool {
        Tool::GetPost => vec![json!({"handle": HANDLE, "id": POST.to_string(), "thread": "off"})],
        Tool::GetProfile | Tool::GetFollowers | Tool::GetFollowing => {
            vec![json!({"handle": HANDLE})]
        }
        Tool::SearchPosts => vec![
            json!({"q": "marker"}),
            json!({"q": "marker", "feed": "users"}),
        ],
        Tool::GetQuotes | Tool::GetReposts => vec![post],
        // Its rows are names (no text, no bio): each written once, with X's
        // search link.
        Tool::GetTrends => vec![json!({})],
    }
}

fn marker() -> impl Strategy<Value = String> {
    // Letters, digits and a few non-ASCII characters; long enough never to
    // occur by chance in anything else the result says.
    "[a-zA-Z0-9éß🦊]{24,40}"
}

fn markers() -> impl Strategy<Value = Markers> {
    (
        proptest::collection::vec(marker(), ROWS as usize),
        proptest::collection::vec(marker(), ROWS as usize),
        marker(),
        marker(),
    )
        .prop_map(|(texts, bios, requested, requested_bio)| Markers {
            texts,
            bios,
            requested,
            requested_bio,
        })
}

fn check(m: &Markers) {
    let up = upstream(m);
    let tools = tools_for(&up);
    for tool in Tool::ALL {
        for base in calls(tool) {
            for full in [false, true] {
                let mut args = base.clone();
                args["full"] = json!(full);
                let name = tool.spec().name;
                let out = ok(&tools, name, args.clone());
                let sc = out.structured.unwrap().to_string();
                let count = |s: &str| sc.matches(s).count();
                let what = format!("{name} {args}: {sc}");
                if tool == Tool::GetTrends {
                    // A trend's name, and X's search link for it (the name
                    // form-encoded inside a link, as a post's id is inside
                    // its `url`); never a third time.
                    for s in &m.texts {
                        assert!(
                            (1..=2).contains(&count(s)),
                            "{s} {} times in {what}",
                            count(s)
                        );
                    }
                    continue;
                }
                if !full {
                    for s in m.texts.iter().chain(&m.bios) {
                        assert!(count(s) <= 1, "{s} {} times in {what}", count(s));
                    }
                    // A search row carries the post it quotes (its own data:
                    // rows may quote different posts), once per row.
                    let most = if tool == Tool::SearchPosts {
                        ROWS as usize
                    } else {
                        1
                    };
                    for s in [&m.requested, &m.requested_bio] {
                        assert!(count(s) <= most, "{s} {} times in {what}", count(s));
                    }
                } else {
                    for s in &m.texts {
                        assert!(count(s) <= 2, "{s} {} times in {what}", count(s));
                    }
                    if tool == Tool::GetQuotes {
                        assert_eq!(count(&m.requested), 0, "{what}");
                        assert_eq!(count(&m.requested_bio), 0, "{what}");
                    }
                }
                // Each row's text is there (the oracle above is not met by
                // leaving data out).
                if matches!(tool, Tool::GetQuotes | Tool::GetProfile)
                    || (tool == Tool::SearchPosts && base.get("feed").is_none())
                {
                    for s in &m.texts {
                        assert!(count(s) >= 1, "{s} missing in {what}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn structured_content_holds_each_text_once_in_every_tool(m in markers()) {
        check(&m);
    }
}
