//! Paging (upstream.md §2.4) over 5-page fake upstreams with `limit` 7:
//! walking `next_cursor` to the end returns every item exactly once, in
//! order; page mode returns the same blocks; the last page has no
//! `next_cursor`.

mod common;

use common::browse::{ids, ok, tools_for};
use common::fake_upstream::FakeUpstream;
use common::timeline::{profile_rows, serve_followers, serve_profile_timeline, serve_search};
use serde_json::{json, Value};
use xmd::x::tools::Tools;

/// Walks a tool with `limit` 7 by cursor; returns every block's ids.
/// [`walk`] seven rows at a time.
fn walk(tools: &Tools, tool: &str, mut base: Value, key: &str) -> Vec<Vec<String>> {
    base["limit"] = json!(7);
    common::browse::walk(tools, tool, base, key)
}

fn check_blocks(blocks: &[Vec<String>], want: &[String]) {
    let flat: Vec<String> = blocks.concat();
    assert_eq!(flat, want, "every item exactly once, in order");
    for b in &blocks[..blocks.len() - 1] {
        assert_eq!(b.len(), 7, "full blocks before the last");
    }
}

/// Page mode: page N equals block N of the cursor walk.
fn check_pages(tools: &Tools, tool: &str, base: Value, key: &str, blocks: &[Vec<String>]) {
    for (n, b) in blocks.iter().enumerate().take(3) {
        let mut args = base.clone();
        args["limit"] = json!(7);
        args["page"] = json!(n + 1);
        let s = ok(tools, tool, args).structured.unwrap();
        assert_eq!(&ids(&s, key), b, "page {}", n + 1);
        assert_eq!(s["page"], n + 1);
    }
}

#[test]
fn profile_five_pages_limit_7() {
    let fake = FakeUpstream::start();
    serve_profile_timeline(&fake);
    let tools = tools_for(&fake);
    let (_, want) = profile_rows();
    assert_eq!(want.len(), 27);
    let blocks = walk(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author"}),
        "posts",
    );
    check_blocks(&blocks, &want);
    assert_eq!(blocks.len(), 4);
    check_pages(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author"}),
        "posts",
        &blocks,
    );
    // Past the end of the timeline: an empty page, no cursor.
    let s = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "limit": 7, "page": 5}),
    )
    .structured
    .unwrap();
    assert_eq!(s["posts"], json!([]));
    assert!(s.get("next_cursor").is_none());
    // Every timeline request asked for count=20 and with_replies=false.
    assert!(fake
        .targets()
        .iter()
        .filter(|t| t.contains("/statuses"))
        .all(|t| t.contains("count=20") && t.ends_with("&with_replies=false")));
}

#[test]
fn followers_and_following_five_pages_limit_7() {
    for which in ["followers", "following"] {
        let fake = FakeUpstream::start();
        fake.on(
            "/2/profile/demo_author",
            common::fake_upstream::Answer::fixture(200, "profile.json"),
        );
        let want = serve_followers(&fake, which);
        assert_eq!(want.len(), 45);
        let tools = tools_for(&fake);
        let tool = format!("x_md_get_{which}");
        let blocks = walk(&tools, &tool, json!({"handle": "demo_author"}), "users");
        check_blocks(&blocks, &want);
        assert_eq!(blocks.len(), 7);
        check_pages(
            &tools,
            &tool,
            json!({"handle": "demo_author"}),
            "users",
            &blocks,
        );
    }
}

#[test]
fn search_five_pages_limit_7_latest_and_photos() {
    let fake = FakeUpstream::start();
    let (want, _) = serve_search(&fake, "from%3Ademo+cache", "latest");
    let (_, photos) = serve_search(&fake, "from%3Ademo+cache", "media");
    let tools = tools_for(&fake);
    let base = json!({"q": " from:demo cache ", "feed": "latest"});
    let blocks = walk(&tools, "x_md_search_posts", base.clone(), "posts");
    check_blocks(&blocks, &want);
    check_pages(&tools, "x_md_search_posts", base, "posts", &blocks);
    let blocks = walk(
        &tools,
        "x_md_search_posts",
        json!({"q": "from:demo cache", "feed": "photos"}),
        "posts",
    );
    assert_eq!(photos.len(), 15);
    check_blocks(&blocks, &photos);
    // `media` is an alias of photos: same blocks, cursors interchangeable.
    let s = ok(
        &tools,
        "x_md_search_posts",
        json!({"q": "from:demo cache", "feed": "media", "limit": 7}),
    )
    .structured
    .unwrap();
    assert_eq!(s["feed"], "photos");
    assert_eq!(ids(&s, "posts"), blocks[0]);
    let c = s["next_cursor"].as_str().unwrap();
    let s = ok(
        &tools,
        "x_md_search_posts",
        json!({"q": "from:demo cache", "feed": "photos", "limit": 7, "cursor": c}),
    )
    .structured
    .unwrap();
    assert_eq!(ids(&s, "posts"), blocks[1]);
}

#[test]
fn changing_limit_mid_walk_loses_nothing() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/demo_author",
        common::fake_upstream::Answer::fixture(200, "profile.json"),
    );
    let want = serve_followers(&fake, "followers");
    let tools = tools_for(&fake);
    let mut args = json!({"handle": "demo_author"});
    let mut seen = Vec::new();
    for limit in [3, 20, 1, 7, 20, 20, 20] {
        args["limit"] = json!(limit);
        let s = ok(&tools, "x_md_get_followers", args.clone())
            .structured
            .unwrap();
        seen.extend(ids(&s, "users"));
        match s.get("next_cursor") {
            Some(c) => args["cursor"] = c.clone(),
            None => break,
        }
    }
    assert_eq!(seen, want);
}
