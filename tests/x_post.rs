//! `x_md_get_post` end to end: `Tools::run` over a real `HttpUpstream`
//! pointed at the loopback fake, for every fixture and failure kind, with
//! exact Markdown, exact upstream request paths, and `structuredContent`
//! checked against the advertised `outputSchema` (JSON Schema 2020-12).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{fixture, Answer, FakeUpstream};
use common::post::{ok, status_body};
use serde_json::{json, Value};
use xmd::x::tools::{PrepareError, Tools};
use xmd::x::upstream::HttpUpstream;

const CONV_ID: &str = "2085826244871471104";
const MQ_ID: &str = "2086794960023072769";
const SELF_FOCAL: &str = "2086014813833539585";
const ID: &str = "1800000000000000001";

fn tools_for(fake: &FakeUpstream) -> Tools {
    Tools::new(Arc::new(HttpUpstream::new(
        &format!("{}/", fake.base_url()),
        Duration::from_secs(5),
    )))
}

fn golden(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/render")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn golden_conversation_reply() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{CONV_ID}"),
        Answer::fixture(200, "thread-reply.json"),
    );
    fake.on(
        &format!("/2/conversation/{CONV_ID}?ranking_mode=likes"),
        Answer::fixture(200, "conversation-reply.json"),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": format!("https://x.com/demo_reader/status/{CONV_ID}")}),
    );
    assert_eq!(out.text, golden("conversation-reply.md"));
    assert_eq!(
        fake.targets(),
        [
            format!("/2/thread/{CONV_ID}"),
            format!("/2/conversation/{CONV_ID}?ranking_mode=likes")
        ]
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 4);
    assert_eq!(s["thread_complete"], true);
    assert_eq!(
        s["url"],
        format!("https://x.com/demo_reader/status/{CONV_ID}")
    );
    assert_eq!(s.get("markdown"), None, "the Markdown travels once");
    let ctx: Vec<&str> = s["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["context"].as_str().unwrap())
        .collect();
    assert_eq!(ctx, ["parent", "post", "reply", "reply"]);
    assert_eq!(
        (
            s["source"].as_str(),
            s["cache"].as_str(),
            s["compact"].as_bool()
        ),
        (Some("fxtwitter"), Some("miss"), Some(true))
    );
    let ua = fake.recorded()[0].header("user-agent").map(str::to_string);
    assert_eq!(
        ua.as_deref(),
        Some(concat!("xmd/", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(
        fake.recorded()[0].header("accept"),
        Some("application/json")
    );
}

#[test]
fn recent_replies_use_recency_ranking() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{CONV_ID}"),
        Answer::fixture(200, "thread-reply.json"),
    );
    fake.on(
        &format!("/2/conversation/{CONV_ID}?ranking_mode=recency"),
        Answer::fixture(200, "conversation-reply.json"),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "demo_reader", "id": CONV_ID, "replies": "recent"}),
    );
    let heads: Vec<&str> = out.text.lines().filter(|l| l.starts_with("## ")).collect();
    // Sample Dev replied later than Demo Friend, so newest first puts it third.
    assert_eq!(heads[2], "## Reply · 3/4 — Sample Dev (@sample_dev)");
    assert_eq!(fake.request_count(), 2);
}

#[test]
fn golden_media_quote() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{MQ_ID}"),
        Answer::fixture(200, "status-media-quote.json"),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": format!("https://x.com/demo_author/status/{MQ_ID}"), "thread": "off"}),
    );
    assert_eq!(out.text, golden("status-media-quote.md"));
    assert_eq!(fake.targets(), [format!("/2/status/{MQ_ID}")]);
    let s = out.structured.unwrap();
    assert_eq!(s["posts"][0]["media"]["all"][2]["duration_ms"], 15240);
    assert_eq!(s["posts"][0]["retweets"], 11);
}

#[test]
fn full_mode_moves_source_into_details() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{MQ_ID}"),
        Answer::fixture(200, "status-media-quote.json"),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "demo_author", "id": MQ_ID, "thread": "off", "full": true}),
    );
    let head = "## Post · 1/1 — Demo Author (@demo_author)\n\nSource: <https://x.com/demo_author/status/2086794960023072769>\n\
                Date: 2026-08-10T12:41:03Z\nStats: 208 likes · 11 reposts · 7 replies · 3 quotes · 34 bookmarks · 24,110 views\n\
                Language: en\n\nBefore and after";
    assert!(out.text.starts_with(head), "{}", out.text);
    assert!(
        out.text.ends_with(
            "> Stats: 61 likes · 3 reposts · 5 replies · 1 quote · 8 bookmarks · 5,210 views\n\
                > Source: <https://x.com/demo_quoted/status/2086531185730670592>"
        ),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["compact"], false);
}

#[test]
fn self_thread_labels_and_truncation() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{SELF_FOCAL}"),
        Answer::fixture(200, "thread-self.json"),
    );
    let tools = tools_for(&fake);
    let out = ok(
        &tools,
        json!({"url": format!("https://x.com/demo_author/status/{SELF_FOCAL}"), "replies": "off"}),
    );
    let heads: Vec<&str> = out.text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        heads,
        [
            "## Parent · 1/4 — Demo Author (@demo_author)",
            "## Post · 2/4 — Demo Author (@demo_author)",
            "## Thread · 3/4 — Demo Author (@demo_author)",
            "## Thread · 4/4 — Demo Author (@demo_author)"
        ]
    );
    assert_eq!(fake.targets(), [format!("/2/thread/{SELF_FOCAL}")]);
    let out = ok(
        &tools,
        json!({"url": format!("https://x.com/demo_author/status/{SELF_FOCAL}"), "replies": "off", "max_posts": 2}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 2);
    assert_eq!(s["warnings"], json!(["Thread truncated to 2 posts."]));
    assert_eq!(s["thread_complete"], false);
    assert!(
        out.text
            .ends_with("> **Note:** Thread truncated to 2 posts.\n> The thread may be incomplete."),
        "{}",
        out.text
    );
}

#[test]
fn plain_status_json_and_obsidian_formats() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/2087208847298015232",
        Answer::fixture(200, "status-plain.json"),
    );
    let tools = tools_for(&fake);
    let out = ok(
        &tools,
        json!({"handle": "demo_author", "id": "2087208847298015232", "thread": "off", "format": "json"}),
    );
    let body = out
        .text
        .strip_prefix("```json\n")
        .and_then(|t| t.strip_suffix("\n```"))
        .expect("fenced");
    let posts: Value = serde_json::from_str(body).unwrap();
    assert_eq!(posts[0]["id"], "2087208847298015232");
    assert_eq!(posts[0]["context"], "post");
    let s = out.structured.unwrap();
    assert_eq!(s["format"], "json");
    assert_eq!(s.get("markdown"), None);
    assert_eq!(s["truncated"], false);
    let out = ok(
        &tools,
        json!({"handle": "demo_author", "id": "2087208847298015232", "thread": "off", "format": "obsidian", "userinfo": "author"}),
    );
    assert_eq!(
        out.text,
        "---\nsource: \"https://x.com/demo_author/status/2087208847298015232\"\nauthor: \"Demo Author\"\nauthor_handle: \"demo_author\"\n\
         published: \"2026-08-11T16:05:42Z\"\ntags: [\"twitter\", \"x\", \"demo_author\"]\n---\n\n\
         ## Post · 1/1 — Demo Author (@demo_author)\n\n### Author\n\n- **Name:** Demo Author\n- **Handle:** @demo_author\n\
         - **Bio:** Writes about build tools, tiny servers and slow coffee ☕ Notes: <https://example.com/demo-author/notes>\n\
         - **Location:** Example City\n- **Website:** example.com/demo-author\n- **Followers:** 4,821\n- **Following:** 312\n\
         - **Posts:** 2,954\n- **Likes:** 15,320\n- **Media:** 187\n\
         - **Joined:** 2023-02-14T09:30:11Z\n- **Verified:** yes (individual, since 2024-05-02T11:20:33.000Z)\n\
         - **Protected:** no\n\
         - **Avatar:** ![avatar](https://pbs.twimg.com/profile_images/1984893237457850368/Xq7LmN2p_200x200.jpg)\n\
         - **Banner:** ![banner](https://pbs.twimg.com/profile_banners/1625427172309102593/1730000000)\n\nSmall release day: cold starts are 30% faster and there is one fewer \
         config file to maintain. #buildtools\n\nDate: 2026-08-11T16:05:42Z"
    );
    assert_eq!(out.structured.unwrap()["compact"], false);
}

#[test]
fn c24_url_forms_hit_one_status_call_each() {
    let forms = [
        "https://x.com/example_user/status/1800000000000000001",
        "https://twitter.com/example_user/status/1800000000000000001?s=20&t=AbCdEf",
        "https://mobile.twitter.com/example_user/status/1800000000000000001/photo/1",
        "https://x.com/i/web/status/1800000000000000001",
        "https://x.com/i/status/1800000000000000001",
        "https://fxtwitter.com/example_user/status/1800000000000000001/en",
        "https://vxtwitter.com/example_user/statuses/1800000000000000001",
        "https://fixupx.com/example_user/status/1800000000000000001#m",
        "x.com/example_user/status/1800000000000000001",
        "https://www.x.com/Example_User/status/1800000000000000001/video/1",
        "https://d.fxtwitter.com/example_user/status/1800000000000000001",
    ];
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, &status_body(ID, json!({}))),
    );
    // Without the cache every form must reach the upstream once.
    let tools = Tools::with_cache_bytes(
        Arc::new(HttpUpstream::new(&fake.base_url(), Duration::from_secs(5))),
        0,
    );
    let mut first: Option<String> = None;
    for (n, u) in forms.iter().enumerate() {
        let out = ok(&tools, json!({"url": u, "thread": "off"}));
        assert_eq!(fake.request_count(), n + 1, "{u}");
        assert_eq!(fake.targets()[n], format!("/2/status/{ID}"));
        assert_eq!(
            out.structured.as_ref().unwrap()["url"],
            format!("https://x.com/example_user/status/{ID}")
        );
        match &first {
            None => first = Some(out.text),
            Some(f) => assert_eq!(&out.text, f, "{u}"),
        }
    }
    for u in [
        "https://x.com/example_user",
        "https://x.com/example_user/status/180000000000000000199",
        "https://attacker.example/x.com/example_user/status/1800000000000000001",
    ] {
        match Tools::prepare("x_md_get_post", Some(&json!({"url": u}))) {
            Err(PrepareError::InvalidArguments(m)) => {
                assert!(m.starts_with("`url` must be an X post permalink such as https://x.com/<handle>/status/<id>"), "{m}")
            }
            other => panic!("{u}: {other:?}"),
        }
    }
    assert_eq!(fake.request_count(), forms.len());
    // With the cache, all forms share one upstream request.
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, &status_body(ID, json!({}))),
    );
    let tools = tools_for(&fake);
    for (n, u) in forms.iter().enumerate() {
        let out = ok(&tools, json!({"url": u, "thread": "off"}));
        let want = if n == 0 { "miss" } else { "hit" };
        assert_eq!(out.structured.unwrap()["cache"], want, "{u}");
    }
    assert_eq!(fake.request_count(), 1);
}

#[test]
fn c25_tombstone_quote() {
    let body = r#"{"code":200,"status":{"type":"status","id":"1800000000000000002","url":"https://x.com/example_user/status/1800000000000000002","text":"Look at this","created_at":"Wed Oct 02 12:00:00 +0000 2024","created_timestamp":1727870400,"likes":0,"reposts":0,"quotes":0,"replies":0,"author":{"type":"profile","id":"100","name":"Example","screen_name":"example_user"},"quote":{"type":"tombstone","provider":"twitter","reason":"deleted","message":"This post was deleted","id":"1700000000000000009"}},"thread":null,"author":null}"#;
    let fake = FakeUpstream::start();
    fake.on("/2/status/1800000000000000002", Answer::json(200, body));
    let out = ok(
        &tools_for(&fake),
        json!({"url": "https://x.com/example_user/status/1800000000000000002", "thread": "off"}),
    );
    assert_eq!(
        out.text,
        "## Post · 1/1 — Example (@example_user)\n\nLook at this\n\n> **Quoted post** — unavailable (deleted): This post was deleted\n>\n\
         > Source: <https://x.com/i/status/1700000000000000009>\n\nDate: 2024-10-02T12:00:00Z\n\
         Source: <https://x.com/example_user/status/1800000000000000002>"
    );
}

#[test]
fn c15_null_counts_validate() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(
            200,
            &status_body(ID, json!({"views": null, "bookmarks": null, "media": {}})),
        ),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "thread": "off", "full": true}),
    );
    assert!(
        out.text
            .contains("\nStats: 0 likes · 0 reposts · 0 replies · 0 quotes\n"),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["posts"][0]["views"], Value::Null);
}

fn chain_fake(loop_back: bool, fail_root: bool) -> FakeUpstream {
    let (p1, p2, p3) = (
        "1800000000000000010",
        "1800000000000000011",
        "1800000000000000012",
    );
    let reply =
        |parent: &str| json!({"replying_to": {"screen_name": "example_user", "status": parent}});
    let fake = FakeUpstream::start();
    let focal: Value = serde_json::from_str(&status_body(p3, reply(p2))).unwrap();
    fake.on(&format!("/2/thread/{p3}"), Answer::json(200, &json!({"code": 200, "status": focal["status"], "thread": [focal["status"]], "author": null}).to_string()));
    fake.on(
        &format!("/2/status/{p2}"),
        Answer::json(200, &status_body(p2, reply(p1))),
    );
    let root = if loop_back {
        status_body(p1, reply(p3))
    } else {
        status_body(p1, json!({}))
    };
    fake.on(
        &format!("/2/status/{p1}"),
        if fail_root {
            Answer::json(500, "{}")
        } else {
            Answer::json(200, &root)
        },
    );
    fake
}

#[test]
fn c28_parent_walk_orders_root_to_target() {
    let fake = chain_fake(false, false);
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": "1800000000000000012", "replies": "off"}),
    );
    let heads: Vec<&str> = out.text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        heads,
        [
            "## Parent · 1/3 — Example (@example_user)",
            "## Parent · 2/3 — Example (@example_user)",
            "## Post · 3/3 — Example (@example_user)"
        ]
    );
    assert!(out
        .text
        .contains("post 1800000000000000010\n\nDate: 2024-10-02T12:00:00Z\nSource"));
    assert_eq!(out.structured.unwrap()["thread_complete"], true);
    assert_eq!(
        fake.targets(),
        [
            "/2/thread/1800000000000000012",
            "/2/status/1800000000000000011",
            "/2/status/1800000000000000010"
        ]
    );
}

#[test]
fn c28_loop_failure_and_bound_keep_the_call_alive() {
    let fake = chain_fake(true, false);
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": "1800000000000000012", "replies": "off"}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 3);
    assert_eq!(s["thread_complete"], false);
    assert_eq!(
        s["warnings"],
        json!(["The reply chain loops back to post 1800000000000000012; stopped there."])
    );
    assert_eq!(fake.request_count(), 3);

    let fake = chain_fake(false, true);
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": "1800000000000000012", "replies": "off"}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 2);
    assert_eq!(s["thread_complete"], false);
    assert!(out.text.ends_with("> **Note:** Parent post 1800000000000000010 could not be loaded: FxTwitter API error: HTTP 500. (HTTP 502, code fxtwitter_error)\n> The thread may be incomplete."), "{}", out.text);
    assert_eq!(fake.request_count(), 3, "no retry of the failing parent");

    let fake = chain_fake(false, false);
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": "1800000000000000012", "replies": "off", "max_posts": 2}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 2);
    assert_eq!(
        s["warnings"],
        json!(["Stopped walking up the reply chain at 2 posts (max_posts)."])
    );
    assert_eq!(fake.request_count(), 2);
}

#[test]
fn c28_failing_replies_page_never_fails_the_call() {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{CONV_ID}"),
        Answer::fixture(200, "thread-reply.json"),
    );
    fake.on(&format!("/2/conversation/{CONV_ID}?ranking_mode=likes"), Answer::json(404, r#"{"status":null,"thread":null,"replies":null,"author":null,"cursor":null,"code":404}"#));
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "demo_reader", "id": CONV_ID}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["post_count"], 2);
    assert_eq!(s["thread_complete"], false);
    assert!(
        out.text
            .contains("> **Note:** Replies could not be loaded: Post not found"),
        "{}",
        out.text
    );
    assert_eq!(fake.request_count(), 2);
}

#[test]
fn c29_articles_never_render_empty() {
    let raw = json!({"text": "", "raw_text": {"text": "https://t.co/ZyXwVuTs98", "display_text_range": [0, 23], "facets": [{"type": "url", "indices": [0, 23], "original": "https://t.co/ZyXwVuTs98", "replacement": "https://x.com/i/article/1800000000000000021", "display": "x.com/i/article/1800…"}]}});
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/1800000000000000020",
        Answer::json(200, &status_body("1800000000000000020", raw.clone())),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": "https://x.com/example_user/status/1800000000000000020", "thread": "off"}),
    );
    assert_eq!(
        out.text,
        "## Post · 1/1 — Example (@example_user)\n\n<https://x.com/i/article/1800000000000000021>\n\n\
         _The article body is not available upstream; open the link above to read it._\n\n\
         Date: 2024-10-02T12:00:00Z\nSource: <https://x.com/example_user/status/1800000000000000020>"
    );
    // The text shown, once: `raw_text` (its second copy) is dropped.
    let post = &out.structured.unwrap()["posts"][0];
    assert_eq!(post["text"], "https://x.com/i/article/1800000000000000021");
    assert_eq!(post.get("raw_text"), None);
    let mut with_article = raw;
    with_article["article"] = json!({"id": "1800000000000000021", "title": "Notes on *parsers* [draft]", "preview_text": "A short preview", "created_at": "2024-10-02T12:00:00.000Z"});
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/1800000000000000020",
        Answer::json(200, &status_body("1800000000000000020", with_article)),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": "https://x.com/example_user/status/1800000000000000020", "thread": "off"}),
    );
    assert_eq!(
        out.text,
        "## Post · 1/1 — Example (@example_user)\n\n### Notes on \\*parsers\\* \\[draft\\]\n\n\
         Published: 2024-10-02T12:00:00.000Z\n\nA short preview\n\n\
         _Only the article preview is available upstream; open the post link for the full article._\n\n\
         <https://x.com/i/article/1800000000000000021>\n\nDate: 2024-10-02T12:00:00Z\n\
         Source: <https://x.com/example_user/status/1800000000000000020>"
    );
}

#[test]
fn user_text_cannot_inject_structure() {
    let fake = FakeUpstream::start();
    let evil = json!({"text": "# Fake heading\n<img src=x onerror=alert(1)>\n---\n1. list\n    code", "author": {"name": "Evil *Name* <b>", "screen_name": "example_user"}});
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::json(200, &status_body(ID, evil)),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "thread": "off", "format": "obsidian"}),
    );
    assert_eq!(
        out.text,
        "---\nsource: \"https://x.com/example_user/status/1800000000000000001\"\nauthor: \"Evil *Name* \\x3Cb>\"\n\
         author_handle: \"example_user\"\npublished: \"2024-10-02T12:00:00Z\"\ntags: [\"twitter\", \"x\", \"example_user\"]\n---\n\n\
         ## Post · 1/1 — Evil \\*Name\\* \\<b> (@example_user)\n\n\\# Fake heading\n\\<img src=x onerror=alert(1)>\n\\---\n1\\. list\ncode\n\n\
         Date: 2024-10-02T12:00:00Z"
    );
}

#[test]
fn fixture_dir_is_complete() {
    for f in [
        "conversation-reply.json",
        "thread-reply.json",
        "thread-self.json",
        "status-plain.json",
        "status-media-quote.json",
    ] {
        let v: Value = serde_json::from_str(&fixture(f)).unwrap();
        assert_eq!(v["code"], 200, "{f}");
    }
}
