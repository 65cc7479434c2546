//! Issue 27 item 4: handles as X serves them, 1–20 of `[A-Za-z0-9_]` in
//! any case (accounts made before 2009 keep handles of 16–20), through
//! the profile, a post URL, search and the REST routes; a post URL names
//! its post by the id whatever its handle segment holds.
//!
//! Oracle: the rule itself (1–20 of `[A-Za-z0-9_]`, compared lower-cased)
//! and the tools' own canonical arguments; generated handles of every
//! length and case, and handle segments outside the rule.

mod common;
mod util;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};
use util::*;
use xmd::app::xroutes::match_path;
use xmd::x::tools::Tools;

const ID: &str = "2087208847298015232";

fn user(handle: &str) -> Value {
    json!({"screen_name": handle, "id": "77", "name": "Old Account",
        "followers": 1, "following": 1, "statuses": 1, "protected": false})
}

fn post(n: u64, handle: &str) -> Value {
    json!({"type": "status", "id": (ID.parse::<u64>().unwrap() - n).to_string(),
        "text": format!("post {n}"), "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "author": {"id": "77", "screen_name": handle, "name": "Old Account"},
        "replying_to": null, "reposted_by": null})
}

/// Serves `handle`'s profile, a one-page timeline and a one-page search
/// (`q` = the handle) whose rows it wrote.
fn serve(fake: &FakeUpstream, handle: &str) {
    let lower = handle.to_ascii_lowercase();
    fake.on(
        &format!("/2/profile/{lower}"),
        Answer::json(200, &json!({"code": 200, "user": user(handle)}).to_string()),
    );
    let page = json!({"code": 200, "results": [post(0, handle), post(1, handle)], "cursor": {"bottom": null}}).to_string();
    fake.on(
        &format!("/2/profile/{lower}/statuses?count=20&with_replies=false"),
        Answer::json(200, &page),
    );
    fake.on(
        &format!("/2/search?q={handle}&feed=latest&count=20"),
        Answer::json(200, &page),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_handle_of_1_to_20_characters_is_served(handle in "[A-Za-z0-9_]{1,20}") {
        let lower = handle.to_ascii_lowercase();
        prop_assume!(!["api", "healthz", "i", "mcp", "metrics", "search"].contains(&lower.as_str()));
        let fake = FakeUpstream::start();
        serve(&fake, &handle);
        let tools = tools_for(&fake);
        // The profile, with or without `@`.
        for h in [handle.clone(), format!("@{handle}")] {
            let out = ok(&tools, "x_md_get_profile", json!({"handle": h}));
            let s = out.structured.unwrap();
            prop_assert_eq!(&s["handle"], &json!(lower));
            prop_assert_eq!(s["posts"].as_array().unwrap().len(), 2);
        }
        // A post URL and handle + id: the handle kept, lower-cased.
        for args in [
            json!({"url": format!("https://x.com/{handle}/status/{ID}")}),
            json!({"handle": handle, "id": ID}),
        ] {
            let call = Tools::prepare("x_md_get_post", Some(&args));
            prop_assert!(call.is_ok(), "{:?}", call.err());
            prop_assert_eq!(call.unwrap().arguments()["handle"].clone(), json!(lower));
        }
        // Search: the rows the handle wrote are kept, linked to it.
        let out = ok(&tools, "x_md_search_posts", json!({"q": handle}));
        let s = out.structured.unwrap();
        prop_assert_eq!(s["posts"].as_array().unwrap().len(), 2);
        prop_assert!(out.text.contains(&format!("https://x.com/{handle}/status/")), "{}", out.text);
        // The REST routes.
        for path in [format!("/{handle}"), format!("/{handle}/status/{ID}"), format!("/{handle}/followers")] {
            let got = match_path(&path).and_then(|r| r.handle).map(str::to_string);
            prop_assert_eq!(got, Some(handle.clone()), "{}", path);
        }
    }

    /// A handle segment outside the rule (too long, a backslash, `%`,
    /// non-ASCII, punctuation): the URL names the post by its id, in the
    /// handle-less form.
    #[test]
    fn a_post_url_is_read_for_its_id_whatever_its_handle_segment(
        seg in prop_oneof![
            "[A-Za-z0-9_]{21,40}",
            "[A-Za-z0-9_]{0,8}[\\\\%.~!$&'()*+,;=:é🦊-][A-Za-z0-9_]{0,8}",
        ],
    ) {
        let url = format!("https://x.com/{seg}/status/{ID}");
        let call = Tools::prepare("x_md_get_post", Some(&json!({"url": url})));
        prop_assert!(call.is_ok(), "{}: {:?}", url, call.err());
        let args = call.unwrap().arguments();
        prop_assert_eq!(args["id"].clone(), json!(ID));
        prop_assert_eq!(args.get("handle").cloned().unwrap_or(json!("i")), json!("i"));
    }

    /// 21 characters and more are refused as a handle.
    #[test]
    fn a_handle_of_21_or_more_is_refused(handle in "[A-Za-z0-9_]{21,30}") {
        let args = json!({"handle": handle.clone()});
        prop_assert!(Tools::prepare("x_md_get_profile", Some(&args)).is_err());
        let path = format!("/{handle}");
        prop_assert!(match_path(&path).is_none());
    }
}

/// End to end over HTTP: `/<20-character handle>` answers the profile.
#[test]
fn the_rest_route_of_a_20_character_handle() {
    let handle = "Old_Account_From2008";
    assert_eq!(handle.len(), 20);
    let fake = FakeUpstream::start();
    serve(&fake, handle);
    let x = Xmd::start(&["--upstream", &fake.base_url()]);
    let raw = format!(
        "GET /{handle} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
        x.host()
    );
    let r = roundtrip(&x, raw.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["handle"], json!(handle.to_ascii_lowercase()), "{v}");
    assert_eq!(v["posts"].as_array().unwrap().len(), 2);
}
