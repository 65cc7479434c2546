//! Issue 27 item 8: `userinfo=author` describes the requested post's
//! author, not the first post's (in a thread, an ancestor's).
//!
//! Generated: chains of 0–4 ancestors, the requested post, and 0–3 posts
//! after it, each by an author drawn from a small set (so the requested
//! author may or may not also write an ancestor). Oracle: the post
//! objects themselves: exactly one `### Author` block, inside the section
//! of the post whose `context` is `post`, naming that post's author.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::ok;
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::args::{Format, UserInfo};
use xmd::x::render::post::{render_posts, RenderOptions};
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

fn post(i: usize, context: &str, handle: &str) -> Value {
    json!({"type": "status", "id": (1_900_000_000_000_000_000u64 + i as u64).to_string(),
        "url": format!("https://x.com/{handle}/status/{i}"), "text": format!("post {i}"),
        "created_at": "Wed Oct 02 12:00:00 +0000 2024", "context": context,
        "author": {"id": format!("{}", 100 + handle.len()), "name": format!("Name of {handle}"), "screen_name": handle}})
}

/// The `### Author` blocks of `md`: for each, the section heading above it
/// and the handle it names.
fn author_blocks(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut in_block = false;
    for line in md.lines() {
        if line.starts_with("## ") {
            heading = line.to_string();
        }
        if line == "### Author" {
            in_block = true;
        } else if in_block {
            if let Some(h) = line.strip_prefix("- **Handle:** @") {
                out.push((heading.clone(), h.replace('\\', "")));
                in_block = false;
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_author_block_belongs_to_the_requested_post(
        before in prop::collection::vec(0usize..3, 0..5),
        after in prop::collection::vec(0usize..3, 0..4),
        focal in 0usize..3,
        full in any::<bool>(),
        format in prop_oneof![Just("markdown"), Just("obsidian")],
    ) {
        let names = ["ann_a", "bob_b", "cy_c"];
        let mut posts: Vec<Value> = before.iter().enumerate().map(|(i, a)| post(i, "parent", names[*a])).collect();
        let k = posts.len();
        posts.push(post(k, "post", names[focal]));
        posts.extend(after.iter().enumerate().map(|(i, a)| post(k + 1 + i, "thread", names[*a])));
        let opts = RenderOptions { format: Format::parse(format).unwrap(), full, userinfo: UserInfo::Author };
        let md = render_posts(&posts, &opts);
        let blocks = author_blocks(&md);
        prop_assert_eq!(blocks.len(), 1, "{}", md);
        prop_assert!(blocks[0].0.starts_with(&format!("## Post · {}/", k + 1)), "{}", md);
        prop_assert_eq!(&blocks[0].1, names[focal]);
    }
}

/// The fixture conversation: the parent is @demo_author's, the requested
/// reply @demo_reader's; the one profile block is @demo_reader's.
#[test]
fn conversation_reply_describes_the_reply_author() {
    let id = "2085826244871471104";
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/thread/{id}"),
        Answer::fixture(200, "thread-reply.json"),
    );
    fake.on(
        &format!("/2/conversation/{id}?ranking_mode=likes"),
        Answer::fixture(200, "conversation-reply.json"),
    );
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &fake.base_url(),
        Duration::from_secs(5),
    )));
    let out = ok(
        &tools,
        json!({"url": format!("https://x.com/demo_reader/status/{id}"), "userinfo": "author"}),
    );
    let blocks = author_blocks(&out.text);
    assert_eq!(blocks.len(), 1, "{}", out.text);
    assert!(blocks[0].0.starts_with("## Post · 2/"), "{}", out.text);
    assert_eq!(blocks[0].1, "demo_reader");
}
