//! A link to one of a post's own X pages names the post (issue 15,
//! helper G, round 21). X shows the lists `/quotes`, `/retweets`,
//! `/retweets/with_comments` and `/likes` under a permalink; `https://x.com/<handle>/status/<id>/quotes` is what a user
//! copies from X when they want a post's quotes (and it is this server's
//! own REST route), so `url` takes it for every post tool, like
//! `/photo/<n>`. The oracle is the generator: it knows which handle and id
//! it wrote, and which trailing paths are not a post's page.

mod common;

use common::browse::{run, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::json;
use xmd::x::url::parse_status_url;

/// A post's lists as X spells them, each with a case variant.
fn sub_page() -> impl Strategy<Value = String> {
    let page = prop_oneof![
        Just("quotes"),
        Just("retweets"),
        Just("retweets/with_comments"),
        Just("likes"),
    ];
    (page, any::<bool>()).prop_map(|(p, upper)| {
        if upper {
            p.to_ascii_uppercase()
        } else {
            p.to_string()
        }
    })
}

fn host() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("https://x.com"),
        Just("https://twitter.com"),
        Just("https://mobile.x.com"),
        Just("http://www.twitter.com"),
        Just("https://fxtwitter.com"),
        Just("x.com"),
    ]
}

fn tail() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("/"),
        Just("/en"),
        Just("?s=20"),
        Just("/#top")
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Oracle: the handle and id the link was built from.
    #[test]
    fn a_link_to_a_posts_page_names_the_post(
        host in host(),
        handle in "[A-Za-z0-9_]{1,20}",
        id in any::<u64>(),
        page in sub_page(),
        tail in tail(),
    ) {
        let url = format!("{host}/{handle}/status/{id}/{page}{tail}");
        let r = parse_status_url(&url).map_err(|e| TestCaseError::fail(format!("{url}: {e}")))?;
        prop_assert_eq!(r.handle, handle);
        prop_assert_eq!(r.id, id.to_string());
    }

    /// Oracle: a list of the post followed by more path, or a word that is
    /// no list of a post (`analytics`, …), is not a permalink (the refusal names the path).
    #[test]
    fn any_other_path_after_the_id_is_refused(
        id in any::<u64>(),
        page in sub_page(),
        extra in prop_oneof![Just("photo/1"), Just("quotes"), Just("video/2"), Just("x/y")],
        word in prop_oneof![Just("analytics".to_string()), Just("history".to_string()), "[a-z]{4,10}"],
    ) {
        let after_page = format!("https://x.com/a/status/{id}/{page}/{extra}");
        let e = parse_status_url(&after_page).expect_err(&after_page);
        prop_assert!(e.ends_with("unexpected path after the id"), "{}: {}", after_page, e);
        let lower = word.as_str();
        prop_assume!(!["quotes", "retweets", "likes"].contains(&lower));
        let other = format!("https://x.com/a/status/{id}/{word}");
        let e = parse_status_url(&other).expect_err(&other);
        prop_assert!(e.ends_with("unexpected path after the id"), "{}: {}", other, e);
    }
}

/// End to end: each of the post tools given a link to one of the post's
/// pages asks the upstream about that post (the id without leading zeros;
/// one post per case, so no answer comes from the cache).
#[test]
fn every_post_tool_takes_the_quotes_page_link() {
    let fake = FakeUpstream::start();
    fake.handler(|path| {
        Some(Answer::json(
            200,
            if path.contains("/quotes") || path.contains("/reposts") {
                r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#
            } else {
                r#"{"code":404,"message":"NOT_FOUND"}"#
            },
        ))
    });
    let tools = tools_for(&fake);
    for (tool, url, want) in [
        (
            "x_md_get_quotes",
            "https://x.com/Some_One/status/0042/quotes",
            "/2/status/42/quotes?count=20",
        ),
        (
            "x_md_get_reposts",
            "https://twitter.com/some_one/status/43/retweets/",
            "/2/status/43/reposts?count=20",
        ),
        (
            "x_md_get_quotes",
            "x.com/i/status/44/retweets/with_comments?s=20",
            "/2/status/44/quotes?count=20",
        ),
        (
            "x_md_get_post",
            "https://x.com/some_one/status/45/likes",
            "/2/thread/45",
        ),
    ] {
        let before = fake.targets().len();
        let out = run(&tools, tool, json!({ "url": url }));
        let asked = fake.targets()[before..].to_vec();
        assert_eq!(
            asked.first().map(String::as_str),
            Some(want),
            "{tool} {url}: {}",
            out.text
        );
    }
}
