//! The syndication fallback of `x_md_get_post`: a real `HttpUpstream` to
//! the loopback fake FxTwitter, another to the loopback fake syndication
//! endpoint (`common/syndication.rs`, which only answers the token node
//! computed), exact texts and exact requests. The binary-level checks
//! (REST route, `/metrics`, `--syndication-url ''`) are at the end.

mod common;
mod util;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::{call, ok};
use common::syndication::{
    self as syn, GIF_CARD_ID, GONE_ID, PHOTOS_ID, PLAIN_ID, POLL_ID, QUOTE_ID,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use util::{roundtrip, Xmd};
use xmd::x::tools::{ToolOutput, Tools};
use xmd::x::upstream::{FetchError, HttpUpstream, Upstream, UpstreamResponse};

const NOTE: &str = "so this post comes from the fallback, X's syndication endpoint. It cannot include the thread, the replies, or the repost, quote, bookmark and view counts.";

fn tools(fx: &str, syndication: &FakeUpstream) -> Tools {
    Tools::new(Arc::new(HttpUpstream::new(fx, Duration::from_secs(5)))).with_fallback(Arc::new(
        HttpUpstream::new(&syndication.base_url(), Duration::from_secs(5)),
    ))
}

/// `http://127.0.0.1:<port>` where nothing listens.
fn dead_url() -> String {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    url
}

/// A fake FxTwitter answering every target with `answer`.
fn fx_always(answer: Answer) -> FakeUpstream {
    let fx = FakeUpstream::start();
    fx.handler(move |_| Some(answer.clone()));
    fx
}

fn fx_500() -> FakeUpstream {
    fx_always(Answer::json(
        500,
        r#"{"code":500,"message":"API_FAIL","tweet":null}"#,
    ))
}

fn post_args(id: &str) -> Value {
    json!({"handle": "someone", "id": id, "thread": "off"})
}

fn err(out: &ToolOutput) -> &str {
    assert!(out.is_error, "expected an error, got {}", out.text);
    assert_eq!(out.structured, None);
    &out.text
}

/// The one request the fake syndication endpoint saw carries `id` and the
/// token node computed, as query parameters.
fn assert_one_request_with_id_and_token(s: &FakeUpstream, id: &str) {
    let seen = s.recorded();
    assert_eq!(seen.len(), 1, "{:?}", s.targets());
    let r = &seen[0];
    assert_eq!(r.method, "GET");
    assert_eq!(r.target, syn::target(id));
    let (path, query) = r.target.split_once('?').unwrap();
    assert_eq!(path, "/tweet-result");
    let params: Vec<(&str, &str)> = query
        .split('&')
        .map(|p| p.split_once('=').unwrap())
        .collect();
    let token = syn::TOKENS.iter().find(|(i, _)| *i == id).unwrap().1;
    assert!(params.contains(&("id", id)), "{params:?}");
    assert!(params.contains(&("token", token)), "{params:?}");
    assert_eq!(r.header("accept"), Some("application/json"));
}

const PLAIN_MARKDOWN: &str = "## Post · 1/1 — Ada Example (@ada_example)\n\n\
Shipping 0.9 tonight & the docs are \\<finally> done: <https://example.com/notes/0.9> #release\n\n\
Date: 2026-07-14T09:05:31Z\n\
Source: <https://x.com/ada_example/status/1901234567890123456>\n\n\
> **Note:** FxTwitter failed (code fxtwitter_error), so this post comes from the fallback, X's \
syndication endpoint. It cannot include the thread, the replies, or the repost, quote, bookmark \
and view counts.";

#[test]
fn fxtwitter_500_falls_back_with_the_note_and_one_request() {
    let fx = fx_500();
    let s = syn::start();
    let out = ok(&tools(&fx.base_url(), &s), post_args(PLAIN_ID));
    assert_eq!(out.text, PLAIN_MARKDOWN);
    let st = out.structured.unwrap();
    assert_eq!(st["source"], "syndication");
    assert_eq!(
        st["url"],
        format!("https://x.com/ada_example/status/{PLAIN_ID}")
    );
    assert_eq!(st["cache"], "miss");
    assert_eq!(st["thread_complete"], true);
    assert_eq!(
        st["warnings"],
        json!([format!("FxTwitter failed (code fxtwitter_error), {NOTE}")])
    );
    assert_eq!(
        st["posts"][0],
        json!({
            "type": "status", "id": PLAIN_ID, "context": "post",
            "url": format!("https://x.com/ada_example/status/{PLAIN_ID}"),
            "text": "Shipping 0.9 tonight & the docs are <finally> done: https://example.com/notes/0.9 #release",
            "author": {
                "id": "1500000000000000001", "name": "Ada Example", "screen_name": "ada_example",
                "url": "https://x.com/ada_example",
                "avatar_url": "https://pbs.twimg.com/profile_images/1500000000000000101/aB3dE5fG_normal.jpg",
                "verification": {"verified": true, "type": "individual"}
            },
            "likes": 128, "replies": 9, "lang": "en", "possibly_sensitive": false,
            "created_at": "Tue Jul 14 09:05:31 +0000 2026", "created_timestamp": 1784019931u64
        })
    );
    assert_eq!(fx.targets(), [format!("/2/status/{PLAIN_ID}")]);
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
}

/// `format=json` carries the fallback's note after the JSON too: the
/// posts' JSON alone would not say that the thread, the replies and some
/// counts are missing. Also in a thread request (the focal post alone).
#[test]
fn format_json_carries_the_fallback_note() {
    let fx = fx_500();
    let s = syn::start();
    let t = tools(&fx.base_url(), &s);
    for args in [
        json!({"handle": "someone", "id": PLAIN_ID, "thread": "off", "format": "json"}),
        json!({"handle": "someone", "id": PHOTOS_ID, "format": "json"}),
    ] {
        let out = ok(&t, args.clone());
        let st = out.structured.as_ref().unwrap();
        assert_eq!(st["source"], "syndication", "{args}");
        let (json_block, note) = out.text.rsplit_once("\n```\n\n").unwrap();
        assert!(json_block.starts_with("```json\n"), "{}", out.text);
        assert_eq!(
            note,
            format!("> **Note:** FxTwitter failed (code fxtwitter_error), {NOTE}"),
            "{args}"
        );
        let posts: Value = serde_json::from_str(&json_block["```json\n".len()..]).unwrap();
        assert_eq!(posts, st["posts"], "{args}");
    }
}

#[test]
fn unreachable_fxtwitter_falls_back() {
    let s = syn::start();
    let out = ok(&tools(&dead_url(), &s), post_args(PLAIN_ID));
    assert!(
        out.text.ends_with(&format!(
            "> **Note:** FxTwitter failed (code fxtwitter_network), {NOTE}"
        )),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["source"], "syndication");
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
}

#[test]
fn html_timeouts_and_rate_limits_fall_back_too() {
    let html = fx_always(Answer::raw(
        200,
        "text/html",
        "<!DOCTYPE html><html><body>Owie</body></html>",
    ));
    let s = syn::start();
    let out = ok(&tools(&html.base_url(), &s), post_args(PLAIN_ID));
    assert!(
        out.text.contains("(code upstream_invalid_response)"),
        "{}",
        out.text
    );
    assert_one_request_with_id_and_token(&s, PLAIN_ID);

    // A slow FxTwitter: its own timeout (1 s here), then the fallback.
    let slow = fx_always(Answer::json(200, "{}").delay(Duration::from_secs(3)));
    let s = syn::start();
    let t = Tools::new(Arc::new(HttpUpstream::new(
        &slow.base_url(),
        Duration::from_secs(1),
    )))
    .with_fallback(Arc::new(HttpUpstream::new(
        &s.base_url(),
        Duration::from_secs(5),
    )));
    let out = ok(&t, post_args(PLAIN_ID));
    assert!(out.text.contains("(code upstream_timeout)"), "{}", out.text);
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
}

/// A `200` that is not a JSON object (an HTML error page, a cut-off body)
/// is an outage, from either provider: it is not kept in the response
/// cache, so once the provider recovers the next read asks it again and
/// gets the real post (and no degraded result is replayed).
#[test]
fn a_broken_200_is_not_cached_by_either_provider() {
    let html = || Answer::raw(200, "text/html", "<!DOCTYPE html><html>Owie</html>");
    let cut = || Answer::json(200, r#"{"code":200,"status":{"id":"#);
    for broken in [html(), cut()] {
        let fx = FakeUpstream::start();
        let status = format!("/2/status/{PLAIN_ID}");
        let good = common::fake_upstream::fixture("status-plain.json");
        fx.route(&status, vec![broken.clone(), Answer::json(200, &good)]);
        let s = syn::start();
        let t = tools(&fx.base_url(), &s);
        let first = ok(&t, post_args(PLAIN_ID));
        assert_eq!(first.structured.as_ref().unwrap()["source"], "syndication");
        let second = ok(&t, post_args(PLAIN_ID));
        assert_eq!(second.structured.as_ref().unwrap()["source"], "fxtwitter");
        assert_eq!(fx.count_prefix(&status), 2, "{:?}", fx.targets());
        assert_one_request_with_id_and_token(&s, PLAIN_ID);

        // The fallback's own broken 200 is not kept either.
        let fx = fx_500();
        let s = syn::start();
        s.route(
            &syn::target(PLAIN_ID),
            vec![
                broken.clone(),
                Answer::json(200, &syn::fixture("tweet-plain.json")),
            ],
        );
        let t = tools(&fx.base_url(), &s);
        let down = call(&t, post_args(PLAIN_ID));
        assert!(down.is_error, "{}", down.text);
        let up = ok(&t, post_args(PLAIN_ID));
        assert_eq!(up.structured.as_ref().unwrap()["source"], "syndication");
        assert_eq!(syn::requests(&s), 2);
    }
}

/// A 429 falls back; during FxTwitter's cool-down the next read sends
/// nothing to FxTwitter and finds the syndication answer in the cache.
#[test]
fn rate_limited_fxtwitter_falls_back_and_the_cache_serves_the_repeat() {
    let fx = fx_always(
        Answer::json(429, r#"{"code":429,"message":"Too many requests"}"#)
            .header("Retry-After", "60"),
    );
    let s = syn::start();
    let t = tools(&fx.base_url(), &s);
    let first = ok(&t, post_args(PLAIN_ID));
    assert!(
        first.text.contains("(code upstream_rate_limited)"),
        "{}",
        first.text
    );
    assert_eq!(first.structured.as_ref().unwrap()["cache"], "miss");
    let second = ok(&t, post_args(PLAIN_ID));
    assert_eq!(second.text, first.text);
    assert_eq!(fx.request_count(), 1, "{:?}", fx.targets());
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
}

#[test]
fn fxtwitter_404_401_and_400_never_fall_back() {
    let s = syn::start();
    let cases = [
        (
            Answer::json(404, r#"{"code":404,"message":"NOT_FOUND","tweet":null}"#),
            "Post not found or unavailable; it may be deleted, private or age-restricted. (HTTP 404, code not_found)",
        ),
        (
            Answer::json(401, r#"{"code":401,"message":"PRIVATE_TWEET","tweet":null}"#),
            "Post is from a protected account and cannot be fetched. (HTTP 403, code private_tweet)",
        ),
        (
            Answer::json(400, r#"{"code":400,"message":"id: tweet ID must be a numeric snowflake"}"#),
            "FxTwitter API error: id: tweet ID must be a numeric snowflake. (HTTP 502, code fxtwitter_error)",
        ),
    ];
    for (answer, want) in cases {
        let fx = fx_always(answer);
        for thread in ["off", "full"] {
            let args = json!({"handle": "someone", "id": PLAIN_ID, "thread": thread});
            let out = call(&tools(&fx.base_url(), &s), args);
            assert_eq!(err(&out), want, "thread={thread}");
        }
    }
    assert_eq!(syn::requests(&s), 0, "{:?}", s.targets());
}

#[test]
fn both_providers_down_names_both() {
    let s = FakeUpstream::start();
    s.handler(|_| Some(Answer::raw(503, "text/html", "<html>Over capacity</html>")));
    let fx = fx_500();
    let out = call(&tools(&fx.base_url(), &s), post_args(PLAIN_ID));
    assert_eq!(
        err(&out),
        "FxTwitter API error: HTTP 500. The fallback, X's syndication endpoint, failed too: it \
         answered HTTP 503. (HTTP 502, code fxtwitter_error)"
    );
    assert_eq!(s.targets(), [syn::target(PLAIN_ID)]);

    let dead = dead_url();
    let t = Tools::new(Arc::new(HttpUpstream::new(&dead, Duration::from_secs(5))))
        .with_fallback(Arc::new(HttpUpstream::new(&dead, Duration::from_secs(5))));
    assert_eq!(
        err(&call(&t, post_args(PLAIN_ID))),
        "Failed to reach FxTwitter API. The fallback, X's syndication endpoint, failed too: it \
         could not be reached. (HTTP 502, code fxtwitter_network)"
    );
    // The syndication endpoint's own 429 cools it on its own: the second
    // read sends it nothing.
    let limited = FakeUpstream::start();
    limited.handler(|_| Some(Answer::raw(429, "text/plain", "").header("Retry-After", "30")));
    let t = tools(&fx.base_url(), &limited);
    assert_eq!(
        err(&call(&t, post_args(PLAIN_ID))),
        "FxTwitter API error: HTTP 500. The fallback, X's syndication endpoint, failed too: it \
         is rate limiting xmd. (HTTP 502, code fxtwitter_error)"
    );
    let again = call(&t, post_args(PLAIN_ID));
    assert!(
        err(&again).contains("failed too: it asked xmd to slow down (retry after "),
        "{}",
        again.text
    );
    assert_eq!(limited.request_count(), 1);
}

/// A `200` from the syndication endpoint that holds no post (an error
/// object, or another post than the one asked for) is the endpoint
/// failing, so the error names both providers; only `{}`, a tombstone or a
/// `404` say the post is not there.
#[test]
fn a_200_without_the_post_is_a_failure_of_the_fallback_not_a_not_found() {
    let fx = fx_500();
    for (body, how) in [
        (
            r#"{"code":500,"message":"Internal Server Error"}"#.to_string(),
            "it sent an unexpected response (not a post object)".to_string(),
        ),
        (
            r#"{"errors":[{"code":88,"message":"Rate limit exceeded"}]}"#.to_string(),
            "it sent an unexpected response (not a post object)".to_string(),
        ),
        (
            syn::fixture("tweet-photos.json"),
            format!("it sent another post ({PHOTOS_ID}) than the one asked for"),
        ),
    ] {
        let s = FakeUpstream::start();
        s.on(&syn::target(PLAIN_ID), Answer::json(200, &body));
        let out = call(&tools(&fx.base_url(), &s), post_args(PLAIN_ID));
        assert_eq!(
            err(&out),
            format!(
                "FxTwitter API error: HTTP 500. The fallback, X's syndication endpoint, failed \
                 too: {how}. (HTTP 502, code fxtwitter_error)"
            ),
            "{body}"
        );
        assert_eq!(s.targets(), [syn::target(PLAIN_ID)]);
    }
    let s = FakeUpstream::start();
    s.on(&syn::target(PLAIN_ID), Answer::json(200, "{}"));
    let out = call(&tools(&fx.base_url(), &s), post_args(PLAIN_ID));
    assert!(
        err(&out).starts_with("Post not found or unavailable at X's syndication endpoint;"),
        "{}",
        out.text
    );
}

#[test]
fn unknown_or_deleted_at_the_fallback_is_not_found() {
    let s = syn::start();
    let fx = fx_500();
    let t = tools(&fx.base_url(), &s);
    assert_eq!(
        err(&call(&t, post_args(GONE_ID))),
        "Post unavailable at X's syndication endpoint: This Post was deleted by the Post author. \
         Learn more (asked because FxTwitter failed with code fxtwitter_error). (HTTP 404, code not_found)"
    );
    let unknown = "1905000000000000000";
    assert_eq!(
        err(&call(&t, post_args(unknown))),
        "Post not found or unavailable at X's syndication endpoint; it may be deleted, private or \
         age-restricted (asked because FxTwitter failed with code fxtwitter_error). (HTTP 404, code not_found)"
    );
    assert_eq!(syn::requests(&s), 2);
}

#[test]
fn photos_alt_text_and_quoted_video_map_into_the_fxtwitter_shape() {
    let s = syn::start();
    let fx = fx_500();
    let t = tools(&fx.base_url(), &s);
    let out = ok(&t, post_args(PHOTOS_ID));
    assert_eq!(
        out.text,
        format!(
            "## Post · 1/1 — Bruno Sample (@bruno_sample)\n\n\
             Replying to @ada_example · <https://x.com/ada_example/status/1897654321098765432>\n\n\
             Before and after, same coffee, two mugs.\n\n\
             > ![A white mug of black coffee on a wooden desk](https://pbs.twimg.com/media/GxAaBbCcDdEe1.jpg)\n\
             > ![image](https://pbs.twimg.com/media/GxFfGgHhIiJj2.jpg)\n\n\
             Date: 2026-07-15T18:22:07Z\n\
             Source: <https://x.com/bruno_sample/status/1902345678901234567>\n\n\
             > **Note:** FxTwitter failed (code fxtwitter_error), {NOTE}"
        )
    );
    let post = &out.structured.as_ref().unwrap()["posts"][0];
    assert_eq!(
        post["media"]["all"][0],
        json!({"type": "photo", "url": "https://pbs.twimg.com/media/GxAaBbCcDdEe1.jpg",
               "width": 2048, "height": 1536,
               "altText": "A white mug of black coffee on a wooden desk",
               "alt": "A white mug of black coffee on a wooden desk"})
    );
    assert_eq!(post["media"]["photos"].as_array().unwrap().len(), 2);
    assert_eq!(post["media"]["all"][1].get("alt"), None);
    assert_eq!(
        post["replying_to"],
        json!({"screen_name": "ada_example", "status": "1897654321098765432"})
    );
    assert_eq!(
        post["author"]["verification"],
        json!({"verified": true, "type": "business"})
    );

    let out = ok(&t, post_args(QUOTE_ID));
    let q = &out.structured.as_ref().unwrap()["posts"][0]["quote"];
    assert_eq!(q["id"], "1897654321098765432");
    assert_eq!(q["text"], "Twelve seconds of the build light.");
    assert_eq!(
        (&q["likes"], &q["reposts"], &q["retweets"], &q["replies"]),
        (&json!(95), &json!(12), &json!(12), &json!(3))
    );
    let v = &q["media"]["videos"][0];
    assert_eq!(v["type"], "video");
    assert_eq!(v["duration_ms"], 12040);
    assert_eq!(
        v["url"],
        "https://video.twimg.com/ext_tw_video/1897654300000000001/pu/vid/avc1/1280x720/Qr9St0Uv1Wx2.mp4?tag=12"
    );
    assert_eq!(v["variants"].as_array().unwrap().len(), 3);
    assert!(out.text.contains(
        "> **Quoted post** — **Ada Example** (@ada_example)\n>\n> Twelve seconds of the build light.\n>\n> > [video](https://video.twimg.com/ext_tw_video/1897654300000000001/pu/vid/avc1/1280x720/Qr9St0Uv1Wx2.mp4?tag=12)\n"
    ), "{}", out.text);
    assert_eq!(syn::requests(&s), 2);
}

/// Nothing the author attached is lost at the fallback either (issue 16):
/// a GIF's alt text and MP4, a link card (its t.co link expanded), a poll,
/// and "Replying to" from `parent` alone; user text stays inert.
#[test]
fn gif_alt_text_card_poll_and_parent_map_and_render() {
    let s = syn::start();
    let fx = fx_500();
    let t = tools(&fx.base_url(), &s);
    let out = ok(&t, post_args(GIF_CARD_ID));
    assert_eq!(
        out.text,
        format!(
            "## Post · 1/1 — Dara \\*Sample\\* (@dara_sample)\n\n\
             The ridge loop, as promised. Route notes and the map: <https://example.org/trails/ridge>\n\n\
             > [GIF](https://video.twimg.com/tweet_video/Gf4Hi5Jk6LmN.mp4)\n\
             > ![A hiker waving from the \\[summit\\] cairn, looped](https://pbs.twimg.com/tweet_video_thumb/Gf4Hi5Jk6LmN.jpg)\n\n\
             > **Link card:** Ridge loop \\| Trail notes\n\
             > 12 km, 900 m of climbing; water at the second hut.\n\
             > <https://example.org/trails/ridge> (example.org)\n\n\
             Date: 2026-07-17T11:20:45Z\n\
             Source: <https://x.com/dara_sample/status/1905678901234567890>\n\n\
             > **Note:** FxTwitter failed (code fxtwitter_error), {NOTE}"
        )
    );
    let post = &out.structured.as_ref().unwrap()["posts"][0];
    assert_eq!(
        post["card"],
        json!({"title": "Ridge loop | Trail notes",
               "description": "12 km, 900 m of climbing; water at the second hut.",
               "url": "https://example.org/trails/ridge", "domain": "example.org"})
    );
    assert_eq!(
        post["media"]["all"][0]["alt"],
        "A hiker waving from the [summit] cairn, looped"
    );
    let out = ok(&t, post_args(POLL_ID));
    assert_eq!(
        out.text,
        format!(
            "## Post · 1/1 — Emil Example (@emil_example)\n\n\
             Replying to @dara_sample · <https://x.com/dara_sample/status/1905678901234567890>\n\n\
             Which loop next? Vote, I'll go \\_\\_first\\_\\_.\n\n\
             > **Poll** · 20 votes · Final results\n\
             > - Ridge \\[north\\] — 60% (12 votes)\n\
             > - Lake — 35% (7 votes)\n\
             > - Both — 5% (1 vote)\n\n\
             Date: 2026-07-18T20:00:00Z\n\
             Source: <https://x.com/emil_example/status/1906789012345678901>\n\n\
             > **Note:** FxTwitter failed (code fxtwitter_error), {NOTE}"
        )
    );
    let post = &out.structured.as_ref().unwrap()["posts"][0];
    assert_eq!(
        post["replying_to"],
        json!({"screen_name": "dara_sample", "status": "1905678901234567890"})
    );
    assert_eq!(post["poll"]["total_votes"], 20);
    assert_eq!(syn::requests(&s), 2);
}

/// A thread request whose thread and post fail at FxTwitter gets the
/// focal post alone from the fallback; no replies are asked for.
#[test]
fn the_focal_post_of_a_thread_falls_back() {
    let fx = fx_always(Answer::raw(502, "text/html", "<html>Bad gateway</html>"));
    let s = syn::start();
    let out = ok(
        &tools(&fx.base_url(), &s),
        json!({"handle": "someone", "id": PLAIN_ID}),
    );
    assert_eq!(
        fx.targets(),
        [
            format!("/2/thread/{PLAIN_ID}"),
            format!("/2/status/{PLAIN_ID}")
        ]
    );
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
    assert!(
        out.text.ends_with(&format!(
            "> **Note:** FxTwitter failed (code fxtwitter_error), {NOTE}\n> The thread may be incomplete."
        )),
        "{}",
        out.text
    );
    let st = out.structured.unwrap();
    assert_eq!(
        (&st["source"], &st["thread_complete"], &st["post_count"]),
        (&json!("syndication"), &json!(false), &json!(1))
    );

    // Unreachable: FxTwitter is asked once (for the thread), not again.
    let fx = fx_always(Answer::json(200, "{}").delay(Duration::from_secs(3)));
    let s = syn::start();
    let t = Tools::new(Arc::new(HttpUpstream::new(
        &fx.base_url(),
        Duration::from_secs(1),
    )))
    .with_fallback(Arc::new(HttpUpstream::new(
        &s.base_url(),
        Duration::from_secs(5),
    )));
    let out = ok(
        &t,
        json!({"handle": "someone", "id": PLAIN_ID, "replies": "recent"}),
    );
    assert_eq!(fx.targets(), [format!("/2/thread/{PLAIN_ID}")]);
    assert!(out.text.contains("(code upstream_timeout)"), "{}", out.text);
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
}

#[test]
fn without_a_fallback_the_fxtwitter_error_stands() {
    let fx = fx_500();
    let t = Tools::new(Arc::new(HttpUpstream::new(
        &fx.base_url(),
        Duration::from_secs(5),
    )));
    assert_eq!(
        err(&call(&t, post_args(PLAIN_ID))),
        "FxTwitter API error: HTTP 500. (HTTP 502, code fxtwitter_error)"
    );
}

/// An in-process FxTwitter with one scripted answer.
struct Scripted(Result<UpstreamResponse, FetchError>);

impl Upstream for Scripted {
    fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
        self.0.clone()
    }
}

/// An in-process syndication endpoint that counts its requests and
/// serves the plain fixture.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Upstream for Counting {
    fn get(&self, path: &str) -> Result<UpstreamResponse, FetchError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        assert_eq!(path, syn::target(PLAIN_ID));
        Ok(UpstreamResponse {
            status: 200,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: syn::fixture("tweet-plain.json").into_bytes().into(),
        })
    }
}

fn body_strategy() -> impl Strategy<Value = (String, &'static str)> {
    prop_oneof![
        Just((
            r#"{"code":404,"message":"NOT_FOUND","tweet":null}"#.to_string(),
            "json"
        )),
        Just((
            r#"{"code":500,"message":"API_FAIL","tweet":null}"#.to_string(),
            "json5xx"
        )),
        Just((r#"{"code":503,"status":null}"#.to_string(), "json5xx")),
        Just((
            r#"{"code":401,"message":"PRIVATE_TWEET"}"#.to_string(),
            "json"
        )),
        Just((r#"{"code":400,"message":"bad"}"#.to_string(), "json")),
        Just(("[]".to_string(), "other")),
        Just(("".to_string(), "other")),
        "<[a-zA-Z !]{0,40}>".prop_map(|s| (s, "other")),
        "[^{\\[]{1,20}".prop_map(|s| (s, "other")),
        Just((r#"{"code":200,"status":{"id":"1""#.to_string(), "other")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The class "which FxTwitter answers send a post read to the
    /// fallback", over generated statuses and bodies, judged by the
    /// issue's rule: a transport failure other than xmd's own spent
    /// budget, 429, 5xx, or (other than 401/403) a body that is not a JSON
    /// object or whose `code` is 5xx. Then exactly one fallback request and
    /// `source: syndication`; otherwise none and FxTwitter's own result.
    #[test]
    fn outages_fall_back_and_truths_do_not(
        status in prop_oneof![Just(200u16), Just(400), Just(401), Just(403), Just(404), Just(410), Just(429), Just(500), Just(502), Just(503), Just(504), 200u16..600],
        (body, kind) in body_strategy(),
        transport in prop_oneof![Just(None), Just(Some(0u8)), Just(Some(1)), Just(Some(2)), Just(Some(3)), Just(Some(4)), Just(Some(5))],
        thread in any::<bool>(),
    ) {
        let fx = match transport {
            None => Ok(UpstreamResponse { status, retry_after: None, content_type: None, body: body.clone().into_bytes().into() }),
            Some(0) => Err(FetchError::Connect("refused".into())),
            Some(1) => Err(FetchError::Timeout),
            Some(2) => Err(FetchError::CoolingDown(9)),
            Some(3) => Err(FetchError::TooLarge),
            Some(4) => Err(FetchError::Other("reset".into())),
            _ => Err(FetchError::BudgetExhausted(1)),
        };
        let expected = match transport {
            Some(5) => false,
            Some(_) => true,
            None => status == 429 || status >= 500 || (status != 401 && status != 403 && kind != "json"),
        };
        let fallback = Arc::new(Counting::default());
        let t = Tools::new(Arc::new(Scripted(fx))).with_fallback(fallback.clone());
        let args = json!({"handle": "someone", "id": PLAIN_ID, "thread": if thread { "full" } else { "off" }});
        let out = call(&t, args);
        let calls = fallback.0.load(Ordering::SeqCst);
        if expected {
            prop_assert_eq!(calls, 1, "{}", out.text);
            prop_assert!(!out.is_error, "{}", out.text);
            prop_assert_eq!(&out.structured.as_ref().unwrap()["source"], "syndication");
        } else {
            prop_assert_eq!(calls, 0, "{}", out.text);
            if let Some(s) = &out.structured {
                prop_assert_eq!(&s["source"], "fxtwitter");
            }
        }
    }
}

/// The binary: `/{handle}/status/{id}` falls back too, `/metrics` counts
/// the syndication requests, and `--syndication-url ''` turns it off.
/// The access log line of a call the fallback served says so, with the
/// cause of FxTwitter's failure: an operator sees the outage even while
/// every answer is a 200 (REST and MCP, plain and JSON log).
#[test]
fn the_access_log_names_the_fallback_and_fxtwitters_failure() {
    let fx = fx_500();
    let s = syn::start();
    let line_with = |x: &Xmd, needle: &str| -> String {
        for _ in 0..500 {
            if let Some(l) = x.log.lock().unwrap().iter().find(|l| l.contains(needle)) {
                return l.clone();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no log line with {needle:?}: {:#?}", x.log.lock().unwrap());
    };
    let x = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        &s.base_url(),
    ]);
    let r = roundtrip(
        &x,
        format!(
            "GET /someone/status/{PLAIN_ID}?thread=off HTTP/1.1\r\nHost: {}\r\n\r\n",
            x.host()
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let line = line_with(&x, &format!(" GET /someone/status/{PLAIN_ID} "));
    assert!(
        line.contains(" 200 ") && line.contains(" tool=x_md_get_post "),
        "{line}"
    );
    assert!(
        line.ends_with(" fallback=syndication after=upstream_status_500"),
        "{line}"
    );
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"handle":"someone","id":"{PHOTOS_ID}"}}}}}}"#
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
            &body,
        ),
    );
    assert_eq!(
        r.json()["result"]["structuredContent"]["source"],
        "syndication"
    );
    let line = line_with(&x, " POST /mcp ");
    assert!(
        line.ends_with(" fallback=syndication after=upstream_status_500"),
        "{line}"
    );
    let json = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        &s.base_url(),
        "--log-format",
        "json",
    ]);
    let r = roundtrip(
        &json,
        format!(
            "GET /i/status/{QUOTE_ID} HTTP/1.1\r\nHost: {}\r\n\r\n",
            json.host()
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v: Value = serde_json::from_str(&line_with(&json, "\"path\":\"/i/status/")).unwrap();
    assert_eq!(
        v["fallback"], "syndication after=upstream_status_500",
        "{v}"
    );
    assert_eq!(v["error"], Value::Null, "{v}");
}

/// The log line of a call that failed after asking the fallback names
/// FxTwitter's cause and what the fallback answered; an HTML page from
/// FxTwitter is named as such, whether the fallback then served the post
/// or not.
#[test]
fn the_access_log_names_both_providers_when_the_fallback_was_asked() {
    let html = fx_always(Answer::raw(200, "text/html", "<html>Cloudflare</html>"));
    let fx = fx_500();
    let down = FakeUpstream::start();
    down.handler(|_| Some(Answer::raw(503, "text/html", "<html>Over capacity</html>")));
    let s = syn::start();
    let unknown = "1905000000000000000";
    for (fx_base, syn_base, id, status, want) in [
        (
            fx.base_url(),
            down.base_url(),
            PLAIN_ID,
            502,
            " error=fxtwitter_error cause=upstream_status_500 fallback=syndication_503",
        ),
        (
            html.base_url(),
            s.base_url(),
            unknown,
            404,
            " error=not_found cause=upstream_status_200_invalid_body fallback=syndication_404",
        ),
        (
            html.base_url(),
            s.base_url(),
            PLAIN_ID,
            200,
            " fallback=syndication after=upstream_status_200_invalid_body",
        ),
    ] {
        let x = Xmd::start(&["--upstream", &fx_base, "--syndication-url", &syn_base]);
        let r = roundtrip(
            &x,
            format!(
                "GET /someone/status/{id}?thread=off HTTP/1.1\r\nHost: {}\r\n\r\n",
                x.host()
            )
            .as_bytes(),
        );
        assert_eq!(r.status, status, "{}", r.text());
        let needle = format!(" GET /someone/status/{id} ");
        let mut line = None;
        for _ in 0..500 {
            line = x
                .log
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(&needle))
                .cloned();
            if line.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let line = line.expect("a log line");
        assert!(line.ends_with(want), "{line}");
    }
}

#[test]
fn rest_route_metrics_and_turning_it_off() {
    let fx = fx_500();
    let s = syn::start();
    let x = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        &s.base_url(),
    ]);
    let get = |target: &str| {
        roundtrip(
            &x,
            format!("GET {target} HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
        )
    };
    let r = get(&format!("/someone/status/{PLAIN_ID}?thread=off"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), PLAIN_MARKDOWN);
    let r = get(&format!(
        "/someone/status/{PLAIN_ID}?thread=off&format=json"
    ));
    assert_eq!(r.json()["source"], "syndication");
    assert_one_request_with_id_and_token(&s, PLAIN_ID);
    let metrics = get("/metrics").text();
    assert!(
        metrics.contains("\nxmd_syndication_requests_total{status=\"200\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nxmd_upstream_requests_total{status=\"500\"} 2\n"),
        "{metrics}"
    );

    let off = Xmd::start(&[
        "--upstream",
        &fx.base_url(),
        "--syndication-url",
        &s.base_url(),
        "--syndication-url",
        "",
    ]);
    let r = roundtrip(
        &off,
        format!(
            "GET /someone/status/{PLAIN_ID}?thread=off HTTP/1.1\r\nHost: {}\r\n\r\n",
            off.host()
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(r.json()["code"], "fxtwitter_error");
    assert_eq!(syn::requests(&s), 1);
}

/// A syndication endpoint that answers one body to anything.
struct Fixed(String);

impl Upstream for Fixed {
    fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
        Ok(UpstreamResponse {
            status: 200,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: self.0.clone().into_bytes().into(),
        })
    }
}

fn opt<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![1 => Just(None), 3 => s.prop_map(Some)]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z @#&;:/.<>*_`\\[\\]()\n-]{0,40}",
        any::<String>(),
        Just("@ada hi &amp; bye https://t.co/x".to_string()),
    ]
}

fn media_item() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("photo"),
            Just("video"),
            Just("animated_gif"),
            Just("other")
        ],
        opt(text()),
        opt(text()),
        opt((0u64..5000, 0u64..5000)),
        opt(prop::collection::vec(
            (
                opt(0u64..9_000_000),
                opt(prop_oneof![
                    Just("video/mp4"),
                    Just("application/x-mpegURL"),
                    Just("x")
                ]),
                opt(text()),
            ),
            0..4,
        )),
        opt(0u64..600_000),
    )
        .prop_map(|(kind, url, alt, size, variants, ms)| {
            let mut m = json!({"type": kind});
            if let Some(u) = url {
                m["media_url_https"] = json!(u);
            }
            if let Some(a) = alt {
                m["ext_alt_text"] = json!(a);
            }
            if let Some((w, h)) = size {
                m["original_info"] = json!({"width": w, "height": h});
            }
            if let Some(vs) = variants {
                let vs: Vec<Value> = vs
                    .into_iter()
                    .map(|(b, c, u)| json!({"bitrate": b, "content_type": c, "url": u}))
                    .collect();
                m["video_info"] = json!({"variants": vs, "duration_millis": ms});
            }
            m
        })
}

fn tweet(quote: Option<Value>) -> impl Strategy<Value = Value> {
    (
        opt(prop_oneof![3 => "[0-9]{1,20}", 1 => "[0-9a-z]{0,22}"]),
        (opt(text()), opt((0u64..80, 0u64..80)), opt(prop_oneof![Just("2026-07-14T09:05:31.000Z".to_string()), text()])),
        opt((opt(text()), opt(text()), opt(any::<bool>()), opt(prop_oneof![Just("Business"), Just("Government"), Just("x")]))),
        (opt(0u64..u64::MAX / 2), opt(0u64..1_000_000), opt(0u64..1_000_000)),
        opt(prop::collection::vec(media_item(), 0..4)),
        opt("[0-9]{1,20}"),
        any::<bool>(),
        opt((prop_oneof![Just("poll2choice_text_only"), Just("summary")], text(), text(), opt(text()))),
    )
        .prop_map(move |(id, (txt, range, created), user, (likes, replies, reposts), media, parent, with_quote, card)| {
            let mut t = json!({"__typename": "Tweet", "lang": "en"});
            if let Some(i) = id { t["id_str"] = json!(i); }
            if let Some(x) = txt { t["text"] = json!(x); }
            if let Some((a, b)) = range { t["display_text_range"] = json!([a, b]); }
            if let Some(c) = created { t["created_at"] = json!(c); }
            if let Some((name, handle, blue, kind)) = user {
                t["user"] = json!({"id_str": "1", "name": name, "screen_name": handle, "is_blue_verified": blue, "verified_type": kind});
            }
            t["favorite_count"] = json!(likes);
            t["conversation_count"] = json!(replies);
            t["retweet_count"] = json!(reposts);
            if let Some(m) = media { t["mediaDetails"] = json!(m); }
            if let Some(p) = parent {
                t["in_reply_to_status_id_str"] = json!(p);
                t["in_reply_to_screen_name"] = json!("someone");
            }
            if let (true, Some(q)) = (with_quote, &quote) { t["quoted_tweet"] = q.clone(); }
            if let Some((name, a, b, count)) = card {
                let sv = |v: &str| json!({"string_value": v, "type": "STRING"});
                t["card"] = json!({"name": name, "url": b, "binding_values": {
                    "title": sv(&a), "card_url": sv(&b), "choice1_label": sv(&a), "choice2_label": sv(&b),
                    "choice1_count": sv(count.as_deref().unwrap_or("3"))}});
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The class "any answer in the syndication Tweet shape (every field
    /// optional, any text, any media mix, a quote)": the fallback result
    /// validates against `x_md_get_post`'s outputSchema (the jsonschema
    /// crate is the oracle) and names the post asked for; an answer
    /// without a usable id holds no post, so the fallback failed too (only
    /// `{}`, a tombstone or a 404 are its not-found).
    #[test]
    fn any_syndication_tweet_maps_into_a_valid_result(
        body in tweet(None).prop_flat_map(|q| tweet(Some(q))),
        thread in any::<bool>(),
        full in any::<bool>(),
        format in prop_oneof![Just("markdown"), Just("obsidian"), Just("json")],
    ) {
        let fx = Scripted(Ok(UpstreamResponse { status: 503, retry_after: None, content_type: None, body: b"".to_vec().into() }));
        let t = Tools::new(Arc::new(fx)).with_fallback(Arc::new(Fixed(body.to_string())));
        let usable = body["id_str"].as_str().is_some_and(|i| !i.is_empty() && i.len() <= 20 && i.bytes().all(|b| b.is_ascii_digit()));
        // The post asked for is the one the answer carries (another id is
        // the endpoint failing: `a_200_without_the_post_is_a_failure_…`).
        // (An id past u64::MAX cannot be asked for: the fallback is then
        // asked for PLAIN_ID and sends another post; so can't id 0, which
        // is refused as an argument.)
        let askable = usable && body["id_str"].as_str().unwrap().parse::<u64>().is_ok_and(|n| n != 0);
        let id = if askable { body["id_str"].as_str().unwrap() } else { PLAIN_ID };
        let args = json!({"handle": "someone", "id": id, "thread": if thread { "full" } else { "off" }, "full": full, "format": format});
        let out = call(&t, args);
        if askable {
            prop_assert!(!out.is_error, "{}", out.text);
            common::post::assert_valid_output(&out);
            let s = out.structured.as_ref().unwrap();
            // The id in its one spelling (no leading zeros; `u64` is the oracle).
            let one_spelling = id.parse::<u64>().unwrap().to_string();
            prop_assert_eq!(&s["posts"][0]["id"], &json!(one_spelling));
            prop_assert_eq!(&s["source"], "syndication");
        } else {
            prop_assert!(out.is_error);
            let how = if usable { "another post (" } else { "an unexpected response (not a post object)." };
            prop_assert!(
                out.text.contains(&format!("The fallback, X's syndication endpoint, failed too: it sent {how}")),
                "{}",
                out.text
            );
        }
    }
}
