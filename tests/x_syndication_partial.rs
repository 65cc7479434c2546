//! The syndication fallback says when a post's text is cut (issue 27
//! item 3): X's syndication endpoint sends a long post (`note_tweet`
//! present, react-tweet `types/tweet.ts`) as its first ~270 characters.
//! FxTwitter fails (500), the loopback fake syndication endpoint answers
//! tests/fixtures/syndication/tweet-plain.json made long; the result says
//! the text is cut in the Markdown, in `warnings` and in
//! `posts[0].text_partial`, and names how to get the whole post. Without
//! `note_tweet` none of it appears.

mod common;
mod util;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::ok;
use common::syndication::{self as syn, PLAIN_ID};
use serde_json::{json, Value};
use util::{roundtrip, Xmd};
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

/// The same through the real binary: `xmd serve` with FxTwitter failing
/// and the loopback syndication endpoint serving the long post, read over
/// MCP (`tools/call`).
#[test]
fn the_binary_says_the_text_is_cut() {
    let fx = FakeUpstream::start();
    fx.handler(|_| {
        Some(Answer::json(
            500,
            r#"{"code":500,"message":"API_FAIL","tweet":null}"#,
        ))
    });
    let mut body: Value = serde_json::from_str(&syn::fixture("tweet-plain.json")).unwrap();
    body["note_tweet"] = json!({"id": "VGltZWxpbmU6MTkwMTIzNDU2Nzg5MDEyMzQ1Ng=="});
    let s = FakeUpstream::start();
    s.on(&syn::target(PLAIN_ID), Answer::json(200, &body.to_string()));
    let x = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        &s.base_url(),
    ]);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"handle":"ada_example","id":"{PLAIN_ID}","thread":"off"}}}}}}"#
    );
    let r = roundtrip(
        &x,
        &util::post(
            &x.host(),
            &[
                "Content-Type: application/json",
                "Accept: application/json",
                "MCP-Protocol-Version: 2025-11-25",
            ],
            &call,
        ),
    );
    let result = &r.json()["result"];
    let st = &result["structuredContent"];
    assert_eq!(st["source"], "syndication");
    assert_eq!(st["posts"][0]["text_partial"], true);
    assert_eq!(st["warnings"][1], PARTIAL_TEXT_NOTE);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("**[{PARTIAL_TEXT_NOTE}]**")),
        "{text}"
    );
}
