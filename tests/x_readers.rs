//! Issue 31: what readers ask for next, through the tools over the
//! loopback fake FxTwitter (fixtures written from FxEmbed's source:
//! `packages/atmosphere/src/types/api-schemas.ts`, the twitter providers
//! `userStatuses.ts`, `trends.ts`, `profile.ts`, `processor.ts`, and the
//! route handlers of `src/realms/api/routes/twitter.ts`).
//!
//! - `x_md_get_profile` `feed=media|articles`, `with_replies`, `since`
//!   (the 204 is "no new posts", not an error), the About data with
//!   `full=true`, each with its exact upstream requests, its cursors bound
//!   to the options;
//! - `x_md_get_trends`: the list, an empty list, the upstream's 404;
//! - `x_md_get_post` `lang`: the translation under the original with the
//!   source language named; a missing translation is a note.

mod common;

use common::browse::{err, golden, ok, tools_for, walk};
use common::fake_upstream::{Answer, FakeUpstream};
use common::readers::{serve_readers, PLAIN_ID, SINCE_NONE, SINCE_SOME, TRANSLATED_ID};
use serde_json::{json, Value};
use xmd::x::tools::{PrepareError, Tools};

fn fake() -> FakeUpstream {
    let f = FakeUpstream::start();
    serve_readers(&f);
    f
}

fn refused(tool: &str, args: Value) -> String {
    match Tools::prepare(tool, Some(&args)) {
        Err(PrepareError::InvalidArguments(m)) => m,
        other => panic!("{tool} {args}: not refused: {other:?}"),
    }
}

#[test]
fn media_feed_lists_the_media_tab_and_walks_to_its_end() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media"}),
    );
    golden("profile-media.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["feed"], "media");
    assert_eq!(
        common::browse::ids(&s, "posts"),
        [
            "2087398541751222272",
            "2087310239069110272",
            "2087200205697974272"
        ]
    );
    // The reply with a photo is the account's own post: listed, marked.
    assert!(
        out.text.contains("· Replying to @demo_friend"),
        "{}",
        out.text
    );
    // limit 1 walks the same rows by cursor, the last page empty.
    let blocks = walk(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media", "limit": 1}),
        "posts",
    );
    let all: Vec<String> = blocks.concat();
    assert_eq!(all, common::browse::ids(&s, "posts"));
    assert!(up
        .targets()
        .contains(&"/2/profile/demo_author/media?count=20".to_string()));
}

#[test]
fn articles_feed_lists_the_accounts_articles() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "articles", "full": true}),
    );
    golden("profile-articles-full.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["feed"], "articles");
    assert_eq!(s["posts"][0]["article"]["title"], "Tiny servers, part 2");
    assert_eq!(s["about"]["based_in"], "Germany");
    let targets = up.targets();
    for t in [
        "/2/profile/demo_author",
        "/2/profile/demo_author/about",
        "/2/profile/demo_author/articles?count=20",
    ] {
        assert!(targets.contains(&t.to_string()), "{t}: {targets:?}");
    }
}

#[test]
fn with_replies_adds_the_accounts_replies_marked_and_not_others_posts() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "with_replies": true}),
    );
    golden("profile-replies.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["with_replies"], true);
    // The original and the reply; the parent by @demo_friend that X puts
    // in the timeline is not the account's post.
    assert_eq!(
        common::browse::ids(&s, "posts"),
        ["2087452613208453120", "2087449775174582272"]
    );
    assert!(out.text.contains("## Latest posts and replies"));
    assert!(out.text.contains("· Replying to @demo_friend"));
    assert_eq!(
        up.targets()
            .iter()
            .filter(|t| t.contains("/statuses"))
            .cloned()
            .collect::<Vec<_>>(),
        [
            "/2/profile/demo_author/statuses?count=20&with_replies=true",
            "/2/profile/demo_author/statuses?cursor=DAAHCgABHPhQ2Nw__-8LAAIAAAATMjA4NzQ0MDAwMDAwMDAwMDAwMAgAAwAAAAIAAA&count=20&with_replies=true"
        ]
    );
    // FxTwitter's timelines of media and articles have no replies switch.
    assert_eq!(
        refused(
            "x_md_get_profile",
            json!({"handle": "demo_author", "feed": "media", "with_replies": true})
        ),
        "`with_replies` applies to feed=posts only, not feed=media"
    );
}

#[test]
fn since_keeps_the_newer_posts_and_ends_at_the_first_older_one() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "since": SINCE_SOME.parse::<u64>().unwrap()}),
    );
    golden("profile-since.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["since"], SINCE_SOME);
    assert_eq!(
        common::browse::ids(&s, "posts"),
        ["2087452613208453120", "2087208847298015232"]
    );
    assert_eq!(s.get("next_cursor"), None);
    // One timeline page: its older original ended the walk.
    assert_eq!(
        up.count_prefix("/2/profile/demo_author/statuses"),
        1,
        "{:?}",
        up.targets()
    );
    // The same time as a number, as a string JavaScript reads so, or in
    // milliseconds (sent so: another upstream request), keeps the same
    // posts.
    up.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false&since=1786400000000",
        Answer::fixture(200, "profile-statuses-page1.json"),
    );
    for since in [
        json!("1786400000000"),
        json!(" 0x6a7a4d00 "),
        json!(1786400000.0),
    ] {
        let again = ok(
            &tools,
            "x_md_get_profile",
            json!({"handle": "demo_author", "since": since.clone()}),
        );
        assert_eq!(
            common::browse::ids(again.structured.as_ref().unwrap(), "posts"),
            ["2087452613208453120", "2087208847298015232"],
            "{since}"
        );
    }
}

#[test]
fn since_with_nothing_newer_is_the_upstreams_204_and_a_note_not_an_error() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "since": SINCE_NONE}),
    );
    golden("profile-since-none.md", &out.text);
    assert!(
        out.text
            .contains("No new posts since 2026-08-13T05:46:40Z."),
        "{}",
        out.text
    );
    let s = out.structured.unwrap();
    assert_eq!(s["posts"], json!([]));
    assert_eq!(s.get("next_cursor"), None);
    assert!(up.targets().contains(&format!(
        "/2/profile/demo_author/statuses?count=20&with_replies=false&since={SINCE_NONE}"
    )));
}

#[test]
fn since_refuses_what_fxtwitter_refuses() {
    for bad in [
        json!(-1),
        json!("-1"),
        json!("yesterday"),
        json!("1e400"),
        json!("Infinity"),
        json!("0x"),
        json!(true),
        json!("2026-12-01"),
    ] {
        let m = refused(
            "x_md_get_profile",
            json!({"handle": "demo_author", "since": bad.clone()}),
        );
        assert!(m.starts_with("`since` must be a Unix time"), "{bad}: {m}");
    }
}

#[test]
fn a_cursor_is_bound_to_its_feed_replies_and_since() {
    let up = fake();
    let tools = tools_for(&up);
    let first = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media", "limit": 1}),
    );
    let c = first.structured.unwrap()["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    for other in [
        json!({"handle": "demo_author", "cursor": c}),
        json!({"handle": "demo_author", "feed": "articles", "cursor": c}),
        json!({"handle": "demo_author", "feed": "media", "since": 5, "cursor": c}),
    ] {
        let e = err(&tools, "x_md_get_profile", other.clone());
        assert!(
            e.contains("The cursor is not one this server issued for these arguments"),
            "{other}: {e}"
        );
    }
    let replies = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "with_replies": true, "limit": 1}),
    );
    let c = replies.structured.unwrap()["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let e = err(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "cursor": c}),
    );
    assert!(e.contains("not one this server issued"), "{e}");
    // With its own arguments it continues.
    let next = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "with_replies": true, "limit": 1, "cursor": c}),
    );
    assert_eq!(
        common::browse::ids(next.structured.as_ref().unwrap(), "posts"),
        ["2087449775174582272"]
    );
}

#[test]
fn about_data_comes_with_full_only_and_its_absence_or_failure_is_no_error() {
    let up = fake();
    let tools = tools_for(&up);
    let lean = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media"}),
    );
    assert!(!lean.text.contains("About:"));
    assert_eq!(up.count_prefix("/2/profile/demo_author/about"), 0);
    let full = ok(
        &tools,
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media", "full": true}),
    );
    assert!(
        full.text.contains("About: Based in: Germany (accurate) · Connected via: Germany App Store · Username changes: 2 (last 2025-03-14T10:20:30.000Z)"),
        "{}",
        full.text
    );
    let none = FakeUpstream::start();
    serve_readers(&none);
    none.on(
        "/2/profile/demo_author/about",
        Answer::fixture(200, "profile-about-none.json"),
    );
    let out = ok(
        &tools_for(&none),
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media", "full": true}),
    );
    assert!(!out.text.contains("About:"));
    assert_eq!(out.structured.unwrap().get("about"), None);
    let failing = FakeUpstream::start();
    serve_readers(&failing);
    failing.on(
        "/2/profile/demo_author/about",
        Answer::json(500, r#"{"code":500,"message":"boom"}"#),
    );
    let out = ok(
        &tools_for(&failing),
        "x_md_get_profile",
        json!({"handle": "demo_author", "feed": "media", "full": true}),
    );
    assert!(
        out.text
            .contains("> The account's About data could not be loaded"),
        "{}",
        out.text
    );
}

#[test]
fn trends_list_names_each_trends_query_and_search_link() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(&tools, "x_md_get_trends", json!({}));
    golden("trends.md", &out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["resource"], "trends");
    assert_eq!(
        s["trends"][0],
        json!({"name": "#FixtureDay", "rank": "1", "context": "Technology · Trending", "url": "https://x.com/search?q=%23FixtureDay"})
    );
    assert_eq!(
        s["trends"][1]["grouped_topics"],
        json!([{"name": "#127001"}])
    );
    assert_eq!(s["trends"][1].get("context"), None);
    assert_eq!(up.targets(), ["/2/trends?type=trending&count=50"]);
    // The name is a query of x_md_search_posts.
    let q = s["trends"][0]["name"].as_str().unwrap();
    assert!(Tools::prepare("x_md_search_posts", Some(&json!({"q": q}))).is_ok());
    // Paged by limit: every trend once, one upstream request (cached).
    let mut names = Vec::new();
    let mut args = json!({"limit": 3});
    loop {
        let s = ok(&tools, "x_md_get_trends", args.clone())
            .structured
            .unwrap();
        names.extend(
            s["trends"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match s.get("next_cursor").and_then(Value::as_str) {
            Some(c) => args["cursor"] = json!(c),
            None => break,
        }
    }
    assert_eq!(
        names,
        ["#FixtureDay", "Loopback", "Content-Length", "mio 2.0"]
    );
    assert_eq!(up.request_count(), 1);
    let full = ok(&tools, "x_md_get_trends", json!({"full": true}));
    assert!(
        full.text.contains(
            "- Loopback · rank 2 · related: #127001 [Search](https://x.com/search?q=Loopback)"
        ),
        "{}",
        full.text
    );
}

#[test]
fn no_trends_is_a_clear_empty_result_and_the_upstreams_404_an_error() {
    let up = FakeUpstream::start();
    up.on(
        "/2/trends?type=trending&count=50",
        Answer::fixture(200, "trends-empty.json"),
    );
    let out = ok(&tools_for(&up), "x_md_get_trends", json!({}));
    assert_eq!(
        out.text,
        "# Trending on X\n\nNo trends right now: X lists none.\n"
    );
    assert_eq!(out.structured.unwrap()["trends"], json!([]));
    let down = FakeUpstream::start();
    down.on(
        "/2/trends?type=trending&count=50",
        Answer::fixture(404, "trends-404.json"),
    );
    let e = err(&tools_for(&down), "x_md_get_trends", json!({}));
    assert!(
        e.starts_with("X's trends are temporarily unavailable upstream. Retry shortly."),
        "{e}"
    );
    assert_eq!(
        refused("x_md_get_trends", json!({"limit": 21})),
        "`limit` must be an integer from 1 to 20"
    );
}

#[test]
fn lang_shows_the_translation_under_the_original_with_its_source_language() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": TRANSLATED_ID, "thread": "off", "lang": "EN"}),
    );
    golden("post-translated.md", &out.text);
    assert!(out
        .text
        .contains("フィクスチャサーバーはループバックでのみ応答します。"));
    assert!(out.text.contains("Translation from Japanese (ja) into en, by grok:\n\n> The fixture server only answers on loopback."), "{}", out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["posts"][0]["translation"]["source_lang"], "ja");
    assert_eq!(s["warnings"], json!([]));
    assert_eq!(up.targets(), [format!("/2/status/{TRANSLATED_ID}?lang=en")]);
    // The thread path asks /2/thread with the same `lang`.
    let out = ok(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": TRANSLATED_ID, "replies": "off", "lang": "en"}),
    );
    assert!(out.text.contains("Translation from Japanese (ja)"));
    assert!(up
        .targets()
        .contains(&format!("/2/thread/{TRANSLATED_ID}?lang=en")));
}

#[test]
fn a_missing_translation_is_a_note_and_a_bad_lang_is_refused() {
    let up = fake();
    let tools = tools_for(&up);
    let out = ok(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": PLAIN_ID, "thread": "off", "lang": "en"}),
    );
    let s = out.structured.unwrap();
    assert_eq!(
        s["warnings"],
        json!(["No translation into en: the post is already in en; the original is shown."])
    );
    let out = ok(
        &tools,
        "x_md_get_post",
        json!({"handle": "demo_author", "id": PLAIN_ID, "thread": "off", "lang": "es"}),
    );
    assert!(
        out.text.contains("No translation into es: FxTwitter gave none for this post (its language: en); the original is shown."),
        "{}",
        out.text
    );
    for bad in ["e", "eng", "en_US", "zh-hans", "1e", "en-", ""] {
        let m = refused(
            "x_md_get_post",
            json!({"handle": "demo_author", "id": PLAIN_ID, "lang": bad}),
        );
        assert!(
            m.starts_with("`lang` must be a language code"),
            "{bad}: {m}"
        );
    }
    // No request was made for a refused call.
    assert_eq!(up.request_count(), 2);
}
