//! The syndication fallback says when a post's text is cut (issue 27
//! item 3): X's syndication endpoint sends a long post (`note_tweet`
//! present, react-tweet `types/tweet.ts`) as its first ~270 characters.
//! FxTwitter fails (500), the loopback fake syndication endpoint answers
//! tests/fixtures/syndication/tweet-plain.json made long; the result says
//! the text is cut in the Markdown, in `warnings` and in
//! `posts[0].text_partial`, and names how to get the whole post. Without
//! `note_tweet` none of it appears.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::ok;
use common::syndication::{self as syn, PLAIN_ID};
use serde_json::{json, Value};
use xmd::x::render::post::PARTIAL_TEXT_NOTE;
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

fn fallback_post(note_tweet: Option<Value>) -> (String, Value) {
    let fx = FakeUpstream::start();
    fx.handler(|_| {
        Some(Answer::json(
            500,
            r#"{"code":500,"message":"API_FAIL","tweet":null}"#,
        ))
    });
    let mut body: Value = serde_json::from_str(&syn::fixture("tweet-plain.json")).unwrap();
    if let Some(n) = note_tweet {
        body["note_tweet"] = n;
    }
    let s = FakeUpstream::start();
    s.on(&syn::target(PLAIN_ID), Answer::json(200, &body.to_string()));
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &fx.base_url(),
        Duration::from_secs(5),
    )))
    .with_fallback(Arc::new(HttpUpstream::new(
        &s.base_url(),
        Duration::from_secs(5),
    )));
    let out = ok(
        &tools,
        json!({"handle": "ada_example", "id": PLAIN_ID, "thread": "off"}),
    );
    (out.text, out.structured.unwrap())
}

#[test]
fn a_cut_long_post_says_so_and_how_to_get_it_whole() {
    let (md, s) = fallback_post(Some(
        json!({"id": "VGltZWxpbmU6MTkwMTIzNDU2Nzg5MDEyMzQ1Ng=="}),
    ));
    let text = "Shipping 0.9 tonight & the docs are <finally> done: https://example.com/notes/0.9 #release";
    assert!(
        md.contains(&format!("#release\n\n**[{PARTIAL_TEXT_NOTE}]**\n\n")),
        "{md}"
    );
    assert!(PARTIAL_TEXT_NOTE.contains("call again when FxTwitter answers, or open the post link"));
    assert_eq!(s["source"], "syndication");
    assert_eq!(s["posts"][0]["text"], text);
    assert_eq!(s["posts"][0]["text_partial"], true);
    assert_eq!(s["warnings"][1], PARTIAL_TEXT_NOTE);
    assert_eq!(s["warnings"].as_array().unwrap().len(), 2);
}

#[test]
fn a_whole_post_says_nothing_of_a_cut() {
    for absent in [None, Some(Value::Null)] {
        let (md, s) = fallback_post(absent);
        assert!(!md.contains("Text cut at the source"), "{md}");
        assert!(s["posts"][0].get("text_partial").is_none());
        assert_eq!(s["warnings"].as_array().unwrap().len(), 1);
    }
}
