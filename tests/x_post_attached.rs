//! What the author attached, end to end (issue 16): `x_md_get_post` over a
//! real `HttpUpstream` against the loopback fake serving FxTwitter-schema
//! fixtures (tests/fixtures/fxtwitter/status-alt-gif.json,
//! status-note-reply.json, status-card.json), with the exact Markdown in
//! compact mode (and full/obsidian where they differ) and
//! `structuredContent` validated against the advertised outputSchema.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{fixture, Answer, FakeUpstream};
use common::post::ok;
use serde_json::{json, Value};
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

const GIF_ID: &str = "2088101010101010101";
const NOTE_ID: &str = "2088202020202020201";
const CARD_ID: &str = "2088303030303030301";

fn tools_for(fake: &FakeUpstream) -> Tools {
    Tools::new(Arc::new(HttpUpstream::new(
        &format!("{}/", fake.base_url()),
        Duration::from_secs(5),
    )))
}

/// One post fetched alone (`thread=off`) with extra arguments.
fn alone(fixture_name: &str, handle: &str, id: &str, extra: Value) -> (String, Value) {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{id}"),
        Answer::fixture(200, fixture_name),
    );
    let mut args = json!({"url": format!("https://x.com/{handle}/status/{id}"), "thread": "off"});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    let out = ok(&tools_for(&fake), args);
    assert_eq!(fake.targets(), [format!("/2/status/{id}")]);
    (out.text, out.structured.unwrap())
}

#[test]
fn alt_text_and_the_mp4_of_a_gif() {
    let (md, s) = alone("status-alt-gif.json", "nora_fieldwell", GIF_ID, json!({}));
    assert_eq!(
        md,
        "## Post · 1/1 — Nora Fieldwell (@nora_fieldwell)\n\n\
         Trail report: the ridge was worth it, the descent less so.\n\n\
         > ![A ridge trail at sunrise, fog filling the valley below](https://pbs.twimg.com/media/HnA1bC2dE3fG4hI.jpg?name=orig)\n\
         > ![Trail sign: \"Summit 2 km\" with an arrow \\*scratched\\* in by hand](https://pbs.twimg.com/media/HnA1bJ5kL6mN7oP.jpg?name=orig)\n\
         > [GIF](https://video.twimg.com/tweet_video/HnA1bQ8rS9tU0vW.mp4)\n\
         > ![GIF thumbnail](https://pbs.twimg.com/tweet_video_thumb/HnA1bQ8rS9tU0vW.jpg)\n\n\
         Date: 2026-08-13T07:02:11Z\n\
         Source: <https://x.com/nora_fieldwell/status/2088101010101010101>"
    );
    let media = &s["posts"][0]["media"]["all"];
    assert_eq!(
        media[0]["alt"],
        "A ridge trail at sunrise, fog filling the valley below"
    );
    assert_eq!(
        media[2]["variants"],
        json!([{"url": "https://video.twimg.com/tweet_video/HnA1bQ8rS9tU0vW.mp4", "content_type": "video/mp4", "bitrate": 0}])
    );
}

#[test]
fn full_mode_counts_with_plurals_and_one_number_format() {
    let (md, _) = alone(
        "status-alt-gif.json",
        "nora_fieldwell",
        GIF_ID,
        json!({"full": true}),
    );
    let head = "## Post · 1/1 — Nora Fieldwell (@nora_fieldwell)\n\n\
                Source: <https://x.com/nora_fieldwell/status/2088101010101010101>\n\
                Date: 2026-08-13T07:02:11Z\n\
                Stats: 48 likes · 1 repost · 3 replies · 0 quotes · 2 bookmarks · 911 views\n\
                Language: en\n\n";
    assert!(md.starts_with(head), "{md}");
    assert!(md.ends_with("/HnA1bQ8rS9tU0vW.jpg)"), "{md}");
    let (md, _) = alone(
        "status-card.json",
        "iris_kettleby",
        CARD_ID,
        json!({"full": true}),
    );
    assert!(
        md.contains("\nStats: 57 likes · 6 reposts · 4 replies · 1 quote · 9 bookmarks · 3,102 views\nLanguage: en\n"),
        "{md}"
    );
}

#[test]
fn community_note_and_replying_to_when_shown_alone() {
    let (md, s) = alone("status-note-reply.json", "tbrightwater", NOTE_ID, json!({}));
    assert_eq!(
        md,
        "## Post · 1/1 — Tomas Brightwater (@tbrightwater)\n\n\
         Replying to @nora_fieldwell · <https://x.com/nora_fieldwell/status/2088101010101010101>\n\n\
         @nora_fieldwell That ridge is 4,000 m high, the tallest in the region.\n\n\
         > **Community Note**\n\
         > The ridge is 2,140 m high according to the regional survey: <https://survey.example.org/ridges/2140>\n\
         > Notes on this post: https://x.com/i/birdwatch/t/2088202020202020201\n\n\
         Date: 2026-08-13T09:30:00Z\n\
         Source: <https://x.com/tbrightwater/status/2088202020202020201>"
    );
    assert_eq!(
        s["posts"][0]["community_note"]["facets"][0]["replacement"],
        "https://survey.example.org/ridges/2140"
    );
}

/// With its parent in the rendered thread, a reply says nothing more.
#[test]
fn replying_to_is_left_out_when_the_parent_is_shown() {
    let fake = FakeUpstream::start();
    let parent: Value = serde_json::from_str(&fixture("status-alt-gif.json")).unwrap();
    let reply: Value = serde_json::from_str(&fixture("status-note-reply.json")).unwrap();
    let thread = json!({"code": 200, "status": reply["status"], "author": reply["author"],
        "thread": [parent["status"], reply["status"]]});
    fake.on(
        &format!("/2/thread/{NOTE_ID}"),
        Answer::json(200, &thread.to_string()),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": format!("https://x.com/tbrightwater/status/{NOTE_ID}"), "replies": "off"}),
    );
    assert!(!out.text.contains("Replying to"), "{}", out.text);
    let heads: Vec<&str> = out.text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        heads,
        [
            "## Parent · 1/2 — Nora Fieldwell (@nora_fieldwell)",
            "## Post · 2/2 — Tomas Brightwater (@tbrightwater)"
        ]
    );
    // `context=thread` keeps only the author's posts: the parent is gone,
    // so the reply says whom it answers.
    let out = ok(
        &tools_for(&fake),
        json!({"url": format!("https://x.com/tbrightwater/status/{NOTE_ID}"), "context": "thread"}),
    );
    assert!(
        out.text.contains(
            "\n\nReplying to @nora_fieldwell · <https://x.com/nora_fieldwell/status/2088101010101010101>\n\n"
        ),
        "{}",
        out.text
    );
}

/// Every form of the reply target says whom a reply shown alone answers:
/// v2's object (`status` or `post`), the legacy handle string or list with
/// `replying_to_status` as a list or a string, and a parent id alone.
#[test]
fn replying_to_in_every_upstream_form() {
    let id = "1800000000000000002";
    let parent = "1800000000000000001";
    let cases = [
        (
            json!({"replying_to": {"screen_name": "ada_x", "post": parent}}),
            "Replying to @ada_x · <https://x.com/ada_x/status/1800000000000000001>",
        ),
        (
            json!({"replying_to": ["ada_x"], "replying_to_status": [parent]}),
            "Replying to @ada_x · <https://x.com/ada_x/status/1800000000000000001>",
        ),
        (
            json!({"replying_to": "@ada_x", "replying_to_status": parent}),
            "Replying to @ada_x · <https://x.com/ada_x/status/1800000000000000001>",
        ),
        (
            json!({"replying_to_status": [parent]}),
            "Replying to a post · <https://x.com/i/status/1800000000000000001>",
        ),
        (json!({"replying_to": ["__x__"]}), "Replying to `@__x__`"),
    ];
    for (extra, line) in cases {
        let fake = FakeUpstream::start();
        fake.on(
            &format!("/2/status/{id}"),
            Answer::json(200, &common::post::status_body(id, extra.clone())),
        );
        let out = ok(
            &tools_for(&fake),
            json!({"url": format!("https://x.com/example_user/status/{id}"), "thread": "off"}),
        );
        assert_eq!(
            out.text,
            format!(
                "## Post · 1/1 — Example (@example_user)\n\n{line}\n\npost {id}\n\n\
                 Date: 2024-10-02T12:00:00Z\nSource: <https://x.com/example_user/status/{id}>"
            ),
            "{extra}"
        );
    }
}

#[test]
fn link_card() {
    let (md, s) = alone("status-card.json", "iris_kettleby", CARD_ID, json!({}));
    assert_eq!(
        md,
        "## Post · 1/1 — Iris Kettleby (@iris_kettleby)\n\n\
         New write-up: keeping fixture servers honest <https://blog.example.net/fixtures-honest>\n\n\
         > **Link card:** Keeping fixture servers honest\n\
         > Why a fake upstream should fail the way the real one does.\n\
         > <https://blog.example.net/fixtures-honest> (blog.example.net)\n\
         > ![A rack of servers drawn in pencil](https://pbs.twimg.com/card_img/2088303030303030300/Cd5Ef6Gh?format=jpg&name=orig)\n\n\
         Date: 2026-08-14T15:20:33Z\n\
         Source: <https://x.com/iris_kettleby/status/2088303030303030301>"
    );
    assert_eq!(
        s["posts"][0]["card"]["title"],
        "Keeping fixture servers honest"
    );
    // FxTwitter's card image is an object: kept as sent, its alt text too.
    assert_eq!(
        s["posts"][0]["card"]["image"]["alt"],
        "A rack of servers drawn in pencil"
    );
    assert_eq!(s["posts"][0]["card"]["card_name"], "summary_large_image");
}

/// Obsidian: the note's front matter, and the date on every post.
#[test]
fn obsidian_keeps_attached_content_and_dates() {
    let (md, _) = alone(
        "status-card.json",
        "iris_kettleby",
        CARD_ID,
        json!({"format": "obsidian"}),
    );
    assert_eq!(
        md,
        "---\nsource: \"https://x.com/iris_kettleby/status/2088303030303030301\"\nauthor: \"Iris Kettleby\"\n\
         author_handle: \"iris_kettleby\"\npublished: \"2026-08-14T15:20:33Z\"\n\
         tags: [\"twitter\", \"x\", \"iris_kettleby\"]\n---\n\n\
         ## Post · 1/1 — Iris Kettleby (@iris_kettleby)\n\n\
         New write-up: keeping fixture servers honest <https://blog.example.net/fixtures-honest>\n\n\
         > **Link card:** Keeping fixture servers honest\n\
         > Why a fake upstream should fail the way the real one does.\n\
         > <https://blog.example.net/fixtures-honest> (blog.example.net)\n\
         > ![A rack of servers drawn in pencil](https://pbs.twimg.com/card_img/2088303030303030300/Cd5Ef6Gh?format=jpg&name=orig)\n\n\
         Date: 2026-08-14T15:20:33Z"
    );
}

/// The README's example (Tools section) is this renderer's output for a
/// post carrying alt text, a link card and a Community Note: the card
/// fixture given a photo and a note in FxTwitter's shapes.
#[test]
fn readme_example_is_real_output() {
    let mut body: Value = serde_json::from_str(&fixture("status-card.json")).unwrap();
    body["status"]["media"] = json!({"all": [{"type": "photo", "id": "2088303030303030302",
        "url": "https://pbs.twimg.com/media/HnC3dE4fG5hI6jK.jpg?name=orig", "width": 1600, "height": 900,
        "altText": "Diagram: xmd, a fake upstream and FxTwitter, with arrows for *every* failure"}]});
    body["status"]["community_note"] = json!({
        "text": "The timings in this article come from a fixture server, not the live API: https://t.co/Mt4Hd5Nt6Q",
        "facets": [{"type": "url", "indices": [74, 97], "original": "https://t.co/Mt4Hd5Nt6Q",
                    "replacement": "https://blog.example.net/fixtures-honest#method",
                    "display": "blog.example.net/fixtures-ho…"}]});
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{CARD_ID}"),
        Answer::json(200, &body.to_string()),
    );
    let out = ok(
        &tools_for(&fake),
        json!({"url": format!("https://x.com/iris_kettleby/status/{CARD_ID}"), "thread": "off"}),
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("<!-- example: post with alt text, card and note -->\n```markdown\n")
        .expect("README example marker");
    let rest = &readme[start..];
    let rest = &rest[rest.find("```markdown\n").unwrap() + "```markdown\n".len()..];
    let example = &rest[..rest.find("\n```").unwrap()];
    assert_eq!(
        example, out.text,
        "README example differs; the output is:\n{}",
        out.text
    );
}
