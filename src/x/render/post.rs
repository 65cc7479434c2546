//! Post and thread Markdown (upstream.md §2.9).
//!
//! Layout: every block (heading, author block, "Replying to" line, text
//! paragraphs, poll, media, link card, Community Note, quote, footer; the
//! attached ones are built in `attached.rs` and `media.rs`) is
//! followed by a blank line, so CommonMark never merges one into the next;
//! posts are separated by a blank line, `---` and a blank line. User text
//! goes through `escape.rs` and never becomes structure.

use std::collections::HashSet;

use serde_json::Value;

use super::attached::url_text;
use super::choice::{Format, UserInfo};
use super::date::post_date;
use super::num::count as counted;
use crate::x::escape::{at_handle, escape_heading, escape_inline, yaml_string};
use crate::x::model::{self, count, handle, is_tombstone, s};

mod author;
mod body;
mod text;
pub use author::account_facts;
use author::author_block;
use body::body_blocks;
pub use text::{display_text, status_text};

/// Most levels of quotes inside quotes rendered. Default 3; deeper quotes
/// are shown as a link only.
pub const MAX_QUOTE_DEPTH: usize = 3;

/// What a post whose source sent only the start of its text says, under
/// that text (the syndication fallback's answer for a long post).
pub const PARTIAL_TEXT_NOTE: &str = "Text cut at the source: X's syndication endpoint (the fallback while FxTwitter fails) sends only the first ~270 characters of a long post. For the whole text, call again when FxTwitter answers, or open the post link.";

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// `format` (json renders like markdown).
    pub format: Format,
    /// Full details (Source/Date/Stats block) instead of compact.
    pub full: bool,
    /// `userinfo`.
    pub userinfo: UserInfo,
}

fn label(context: &str) -> &'static str {
    match context {
        "parent" => "Parent",
        "thread" => "Thread",
        "reply" => "Reply",
        _ => "Post",
    }
}

/// The author's name escaped by `esc`, else the handle, else `Unknown`.
fn author_name(post: &Value, esc: fn(&str) -> String) -> String {
    let a = post.get("author");
    [
        a.and_then(|a| s(a, "name")),
        a.and_then(|a| s(a, "screen_name")),
    ]
    .into_iter()
    .flatten()
    .map(esc)
    .find(|n| !n.is_empty())
    .unwrap_or_else(|| "Unknown".into())
}

/// Blocks joined by one blank line each.
fn join_blocks(blocks: Vec<Vec<String>>) -> Vec<String> {
    let mut l = Vec::new();
    for b in blocks.into_iter().filter(|b| !b.is_empty()) {
        if !l.is_empty() {
            l.push(String::new());
        }
        l.extend(b);
    }
    l
}

fn stats_line(post: &Value) -> Option<String> {
    let mut parts = Vec::new();
    let reposts = count(post, "retweets").or_else(|| count(post, "reposts"));
    for (n, one, many) in [
        (count(post, "likes"), "like", "likes"),
        (reposts, "repost", "reposts"),
        (count(post, "replies"), "reply", "replies"),
        (count(post, "quotes"), "quote", "quotes"),
        (count(post, "bookmarks"), "bookmark", "bookmarks"),
        (count(post, "views"), "view", "views"),
    ] {
        if let Some(n) = n {
            parts.push(counted(n, one, many));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// `Language: <code>` (X's detection, `lang`), when sent.
fn lang_line(post: &Value) -> Option<String> {
    s(post, "lang")
        .map(escape_inline)
        .filter(|l| !l.is_empty())
        .map(|l| format!("Language: {l}"))
}

fn date_line(post: &Value) -> Option<String> {
    post_date(post)
        .or_else(|| {
            s(post, "created_at")
                .map(escape_inline)
                .filter(|d| !d.is_empty())
        })
        .map(|d| format!("Date: {d}"))
}

/// The handle and parent id a reply answers, at least one of them: from
/// `replying_to` (object: `screen_name` + `status` or `post`; legacy: the
/// handle as a string, or a list whose first item is the handle) and
/// legacy `replying_to_status` (see [`model::parent_id`]).
fn reply_target(post: &Value) -> Option<(Option<String>, Option<String>)> {
    let rt = post.get("replying_to");
    let h = match rt {
        Some(Value::Object(o)) => o.get("screen_name").and_then(Value::as_str),
        Some(Value::String(h)) => Some(h.as_str()),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str),
        _ => None,
    }
    .map(|h| h.trim().trim_start_matches('@'))
    .filter(|h| !h.is_empty());
    let id = model::parent_id(post).or_else(|| {
        rt.and_then(|r| s(r, "post"))
            .filter(|p| crate::x::url::is_id(p))
            .map(str::to_string)
    });
    (h.is_some() || id.is_some()).then(|| (h.map(str::to_string), id))
}

/// `Replying to @h · https://x.com/h/status/<id>` (`Replying to a post ·
/// https://x.com/i/status/<id>` when the handle is unknown), for a reply
/// whose parent is not among the rendered posts.
fn replying_line(post: &Value, shown: &HashSet<&str>) -> Option<String> {
    let (h, id) = reply_target(post)?;
    if id.as_deref().is_some_and(|i| shown.contains(i)) {
        return None;
    }
    let mut line = match &h {
        Some(h) => format!("Replying to {}", at_handle(h, escape_inline)),
        None => "Replying to a post".to_string(),
    };
    if let Some(i) = id {
        let h = h.filter(|h| crate::x::url::is_handle(h));
        let url = format!("https://x.com/{}/status/{i}", h.as_deref().unwrap_or("i"));
        line.push_str(&format!(" · {}", url_text(&url)));
    }
    Some(line)
}

fn front_matter(first: &Value, total: usize) -> Vec<String> {
    let mut l = vec!["---".to_string()];
    l.push(format!(
        "source: {}",
        yaml_string(s(first, "url").unwrap_or(""))
    ));
    let name = first
        .get("author")
        .and_then(|a| s(a, "name"))
        .unwrap_or("Unknown");
    l.push(format!("author: {}", yaml_string(name)));
    let h = handle(first);
    if let Some(h) = h {
        l.push(format!("author_handle: {}", yaml_string(h)));
    }
    if let Some(d) = post_date(first).or_else(|| s(first, "created_at").map(str::to_string)) {
        l.push(format!("published: {}", yaml_string(&d)));
    }
    if total > 1 {
        l.push(format!("thread_posts: {total}"));
    }
    let mut tags = vec![yaml_string("twitter"), yaml_string("x")];
    if let Some(h) = h {
        tags.push(yaml_string(h));
    }
    l.push(format!("tags: [{}]", tags.join(", ")));
    l.push("---".into());
    l
}

fn post_lines(
    post: &Value,
    i: usize,
    n: usize,
    opts: &RenderOptions,
    author_meta: bool,
    shown_ids: &HashSet<&str>,
) -> Vec<String> {
    let ctx = label(s(post, "context").unwrap_or("post"));
    let url = s(post, "url").unwrap_or(model::MISSING_IDENTITY);
    let source = format!("Source: {}", url_text(url));
    let tomb = is_tombstone(post);
    let mut blocks = Vec::new();
    if tomb {
        blocks.push(vec![format!("## {ctx} · {}/{n} — Unavailable post", i + 1)]);
    } else {
        let h = handle(post)
            .filter(|h| !h.trim().is_empty())
            .map(|h| format!(" ({})", at_handle(h, escape_heading)))
            .unwrap_or_default();
        blocks.push(vec![format!(
            "## {ctx} · {}/{n} — {}{h}",
            i + 1,
            author_name(post, escape_heading)
        )]);
    }
    let date = if tomb { None } else { date_line(post) };
    if opts.full && opts.format != Format::Obsidian {
        let mut head = vec![source.clone()];
        head.extend(date.clone());
        head.extend(stats_line(post).map(|st| format!("Stats: {st}")));
        head.extend(lang_line(post));
        blocks.push(head);
    }
    if author_meta {
        if let Some(a) = post.get("author").filter(|a| a.is_object()) {
            blocks.push(author_block(a));
        }
    }
    if tomb {
        let reason = escape_inline(s(post, "reason").unwrap_or("unavailable"));
        let msg = s(post, "message")
            .map(escape_inline)
            .filter(|m| !m.is_empty())
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        blocks.push(vec![format!("Post unavailable ({reason}){msg}")]);
    } else {
        blocks.extend(replying_line(post, shown_ids).map(|l| vec![l]));
        let (body, shown) = body_blocks(post, 0, opts.full);
        blocks.extend(body);
        if !shown {
            blocks.push(vec!["_This post has no text._".into()]);
        }
    }
    if !opts.full || opts.format == Format::Obsidian {
        let mut foot: Vec<String> = date.into_iter().collect();
        if opts.format != Format::Obsidian {
            foot.push(source);
        }
        blocks.push(foot);
    }
    join_blocks(blocks)
}

/// Renders posts (normalised, with `context` and `url` filled) as one
/// Markdown document: trimmed, no trailing newline, never empty for a
/// non-empty list.
pub fn render_posts(posts: &[Value], opts: &RenderOptions) -> String {
    let (head, blocks) = post_blocks(posts, opts, 0, posts.len());
    join_posts(&head, &blocks)
}

/// The pieces [`render_posts`] joins, for the result budget: the head (the
/// obsidian front matter when `first` is 0, else empty) and one block per
/// post, numbered from `first + 1` of `total`. Joined by [`join_posts`],
/// any prefix of the pieces is the document of that prefix of `posts`: a
/// post's "Replying to" line is written when its parent is not among the
/// posts before it (posts come in reading order, so a parent is never
/// after its reply).
pub fn post_blocks(
    posts: &[Value],
    opts: &RenderOptions,
    first: usize,
    total: usize,
) -> (String, Vec<String>) {
    let mut head = String::new();
    if opts.format == Format::Obsidian && first == 0 {
        if let Some(p) = posts.first() {
            head = front_matter(p, total).join("\n");
            head.push_str("\n\n");
        }
    }
    let shown_ids: HashSet<&str> = posts.iter().filter_map(model::id).collect();
    let mut seen = HashSet::new();
    let blocks = posts
        .iter()
        .enumerate()
        .map(|(i, post)| {
            let meta = match opts.userinfo {
                // The requested post's author (`context` `post`; a post
                // without `context` is the requested one), not the first
                // post's: in a thread that is an ancestor's.
                UserInfo::Author => s(post, "context").unwrap_or("post") == "post",
                UserInfo::All => handle(post).is_some_and(|h| seen.insert(h.to_ascii_lowercase())),
                UserInfo::Off => false,
            };
            post_lines(post, first + i, total, opts, meta, &shown_ids).join("\n")
        })
        .collect();
    (head, blocks)
}

/// Joins [`post_blocks`] pieces into one document (trimmed): posts are
/// separated by a blank line, `---` and a blank line.
pub fn join_posts(head: &str, blocks: &[String]) -> String {
    format!("{head}{}", blocks.join("\n\n---\n\n"))
        .trim()
        .to_string()
}
