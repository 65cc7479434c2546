//! An X article whole (issue 27 item 2): `x_md_get_post` over the loopback
//! fake serving tests/fixtures/fxtwitter/status-article.json, a
//! schema-faithful article (FxEmbed's `TwitterArticleSchema`) with every
//! block type FxEmbed renders (headings, unstyled, lists with depth,
//! blockquote, code-block, atomic) plus an unknown one, and every entity
//! (`MARKDOWN` code, `MEDIA` image, `TWEET`, `DIVIDER`, `LINK`, and an
//! unknown type). Judged by pulldown-cmark: the events, in document order.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::ok;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::json;
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

const ID: &str = "2088404040404040401";

fn article_post() -> (String, serde_json::Value) {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::fixture(200, "status-article.json"),
    );
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &format!("{}/", fake.base_url()),
        Duration::from_secs(5),
    )));
    let out = ok(
        &tools,
        json!({"url": format!("https://x.com/ada_writes/status/{ID}"), "thread": "off"}),
    );
    (out.text, out.structured.unwrap())
}

/// The events that say what the document is, in order: blocks, styles,
/// links, images and code, with their text.
fn outline(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<String>| {
        if !text.is_empty() {
            out.push(format!("text {text:?}"));
            text.clear();
        }
    };
    for ev in Parser::new_ext(md, Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES) {
        match ev {
            Event::Text(t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            Event::Start(tag) => {
                flush(&mut text, &mut out);
                out.push(match tag {
                    Tag::Heading { level, .. } => format!("{level:?}"),
                    Tag::CodeBlock(CodeBlockKind::Fenced(info)) => format!("code {info:?}"),
                    Tag::Link { dest_url, .. } => format!("link {dest_url}"),
                    Tag::Image { dest_url, .. } => format!("image {dest_url}"),
                    Tag::List(start) => format!("list {start:?}"),
                    other => format!("{other:?}"),
                });
            }
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item) => {
                flush(&mut text, &mut out)
            }
            Event::End(t) => {
                flush(&mut text, &mut out);
                if matches!(
                    t,
                    TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough | TagEnd::List(_)
                ) {
                    out.push(format!("end {t:?}"));
                }
            }
            Event::Rule => {
                flush(&mut text, &mut out);
                out.push("rule".into());
            }
            other => {
                flush(&mut text, &mut out);
                out.push(format!("{other:?}"));
            }
        }
    }
    out
}

#[test]
fn every_block_and_entity_in_document_order() {
    let (md, s) = article_post();
    let o = outline(&md);
    let want = [
        "H2",
        "text \"Post · 1/1 — Ada Writes (@ada_writes)\"",
        // The title and headings nest under the post's own heading.
        "H3",
        "text \"Parsing, again\"",
        "Paragraph",
        "text \"Published: 2026-08-12T08:00:00.000Z · Updated: 2026-08-12T09:30:00.000Z\"",
        "Paragraph",
        "image https://pbs.twimg.com/media/Cover.jpg",
        "text \"Cover\"",
        "H4",
        "text \"Why we rewrote the parser\"",
        "Paragraph",
        "Strong",
        "text \"Bold\"",
        "end Strong",
        "text \" and \"",
        "Emphasis",
        "text \"*starred*\"",
        "end Emphasis",
        "text \" and \"",
        "Strikethrough",
        "text \"removed\"",
        "end Strikethrough",
        "text \"_text here.\"",
        "code Borrowed(\"python\")",
        "text \"print(\\\"hi\\\")\\n\"",
        "H5",
        "text \"The old way\"",
        "list None",
        "Item",
        "text \"first point\"",
        "list None",
        "Item",
        "text \"nested point\"",
        "end List(false)",
        "end List(false)",
        "list Some(1)",
        "Item",
        "text \"step one\"",
        "end List(true)",
        "BlockQuote(None)",
        "Paragraph",
        "text \"Quoted wisdom\"",
        "Paragraph",
        "image https://pbs.twimg.com/media/ArtImg1.jpg",
        "text \"Image\"",
        "Paragraph",
        "link https://x.com/i/status/1800000000000000042",
        "text \"Embedded post\"",
        "rule",
        "code Borrowed(\"\")",
        "text \"let x = 1;\\n\"",
        // An unknown block type and an unknown entity are named.
        "Paragraph",
        "Strong",
        "text \"[Article block of type “callout-box”, shown as text:]\"",
        "end Strong",
        "text \"\\nA callout\"",
        "Paragraph",
        "Strong",
        "text \"[Article embed of type “POLL_WIDGET”, which xmd does not render; open the post link to see it.]\"",
        "end Strong",
        "Paragraph",
        "text \"Read the docs.rs page.\"",
        "Paragraph",
        "text \"Links: \"",
        "link https://docs.rs/",
        "text \"docs.rs\"",
        "Paragraph",
        "link https://x.com/i/article/2088404040404040400",
        "text \"https://x.com/i/article/2088404040404040400\"",
        "Paragraph",
        "text \"Date: 2026-08-12T08:14:20Z\\nSource: \"",
        "link https://x.com/ada_writes/status/2088404040404040401",
        "text \"https://x.com/ada_writes/status/2088404040404040401\"",
    ];
    assert_eq!(o, want, "{md}");
    // structuredContent keeps the body as sent (blocks, ranges, entities, media).
    let a = &s["posts"][0]["article"];
    assert_eq!(a["content"]["blocks"].as_array().unwrap().len(), 15);
    assert_eq!(
        a["content"]["blocks"][1]["inlineStyleRanges"][2],
        json!({"offset": 23, "length": 7, "style": "Strikethrough"})
    );
    assert_eq!(
        a["content"]["entityMap"][0]["value"]["data"]["markdown"],
        "```python\nprint(\"hi\")\n```"
    );
    assert_eq!(
        a["content"]["entityMap"][2]["value"]["data"]["tweetId"],
        "1800000000000000042"
    );
    assert_eq!(
        a["media_entities"][0]["media_info"]["original_img_url"],
        "https://pbs.twimg.com/media/ArtImg1.jpg"
    );
    assert_eq!(a["created_at"], "2026-08-12T08:00:00.000Z");
}
