//! Post and thread Markdown (upstream.md §2.9).

use std::collections::HashSet;

use serde_json::Value;

use super::escape::{escape_block, escape_handle, escape_inline, escape_url, yaml_value};
use super::media::media_lines;
use super::num::grouped;
use crate::x::model::{self, count, handle, is_tombstone, s};

/// Most levels of quotes inside quotes rendered. Default 3; deeper quotes
/// are shown as a link only.
pub const MAX_QUOTE_DEPTH: usize = 3;

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions<'a> {
    /// `markdown`, `obsidian` or `json` (json renders like markdown).
    pub format: &'a str,
    /// Full details (Source/Date/Stats block) instead of compact.
    pub full: bool,
    /// `off`, `author` or `all`.
    pub userinfo: &'a str,
}

fn label(context: &str) -> &'static str {
    match context {
        "parent" => "Parent",
        "thread" => "Thread",
        "reply" => "Reply",
        _ => "Post",
    }
}

fn author_name(post: &Value) -> String {
    let a = post.get("author");
    let name = a
        .and_then(|a| s(a, "name"))
        .filter(|n| !n.trim().is_empty());
    let name = name.or_else(|| a.and_then(|a| s(a, "screen_name")));
    escape_inline(name.unwrap_or("Unknown"))
}

fn unescape_html(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text to show: `text`, or when it is empty, `raw_text.text` with
/// t.co links expanded and media links removed. Facets are applied by
/// matching their `original` string, never by index, so multi-byte text
/// and stale UTF-16 offsets cannot split a character.
pub fn display_text(post: &Value) -> String {
    let text = s(post, "text").unwrap_or("").trim();
    if !text.is_empty() {
        return text.to_string();
    }
    let Some(raw) = post.get("raw_text") else {
        return String::new();
    };
    let mut t = s(raw, "text").unwrap_or("").to_string();
    for f in raw
        .get("facets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(orig) = s(f, "original").filter(|o| o.starts_with("http")) else {
            continue;
        };
        match s(f, "type") {
            Some("url") => t = t.replace(orig, s(f, "replacement").unwrap_or(orig)),
            Some("media") => t = t.replace(orig, ""),
            _ => {}
        }
    }
    unescape_html(t.trim())
}

fn stats_line(post: &Value) -> Option<String> {
    let mut parts = Vec::new();
    let reposts = count(post, "retweets").or_else(|| count(post, "reposts"));
    for (n, what) in [
        (count(post, "likes"), "likes"),
        (reposts, "reposts"),
        (count(post, "replies"), "replies"),
        (count(post, "views"), "views"),
    ] {
        if let Some(n) = n {
            parts.push(format!("{} {what}", grouped(n)));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

fn author_block(author: &Value) -> Vec<String> {
    let mut l = vec!["### Author".to_string(), String::new()];
    let field = |k: &str| s(author, k).filter(|v| !v.trim().is_empty());
    if let Some(v) = field("name") {
        l.push(format!("- **Name:** {}", escape_inline(v)));
    }
    if let Some(v) = field("screen_name") {
        l.push(format!("- **Handle:** @{}", escape_handle(v)));
    }
    if let Some(v) = field("description") {
        l.push(format!("- **Bio:** {}", escape_inline(v)));
    }
    if let Some(v) = field("location") {
        l.push(format!("- **Location:** {}", escape_inline(v)));
    }
    if let Some(w) = author
        .get("website")
        .and_then(|w| s(w, "display_url").or_else(|| s(w, "url")))
    {
        l.push(format!("- **Website:** {}", escape_inline(w)));
    }
    if let Some(n) = count(author, "followers") {
        l.push(format!("- **Followers:** {}", grouped(n)));
    }
    if let Some(n) = count(author, "following") {
        l.push(format!("- **Following:** {}", grouped(n)));
    }
    if let Some(v) = field("joined") {
        l.push(format!("- **Joined:** {}", escape_inline(v)));
    }
    l.push(String::new());
    l
}

fn article_lines(article: &Value) -> Vec<String> {
    let mut l = Vec::new();
    if let Some(t) = s(article, "title").filter(|t| !t.trim().is_empty()) {
        l.push(format!("## {}", escape_inline(t)));
        l.push(String::new());
    }
    let cover = article
        .pointer("/cover_media/media_info/original_img_url")
        .and_then(Value::as_str);
    if let Some(c) = cover {
        l.push(format!("![cover]({})", escape_url(c)));
        l.push(String::new());
    }
    let mut body = 0;
    for block in article
        .pointer("/content/blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = s(block, "text").unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        body += 1;
        match s(block, "type").unwrap_or("") {
            "header-one" => l.push(format!("# {}", escape_inline(text))),
            "header-two" => l.push(format!("## {}", escape_inline(text))),
            "header-three" => l.push(format!("### {}", escape_inline(text))),
            "unordered-list-item" => l.push(format!("- {}", escape_inline(text))),
            "ordered-list-item" => l.push(format!("1. {}", escape_inline(text))),
            "blockquote" => l.push(format!("> {}", escape_inline(text))),
            _ => l.extend(escape_block(text)),
        }
        l.push(String::new());
    }
    if body == 0 {
        if let Some(p) = s(article, "preview_text").filter(|p| !p.trim().is_empty()) {
            l.extend(escape_block(p));
            l.push(String::new());
        }
        l.push("_Only the article preview is available upstream; open the post link for the full article._".into());
        l.push(String::new());
    }
    l
}

fn poll_lines(poll: &Value) -> Vec<String> {
    let mut l = Vec::new();
    let mut head = vec!["> **Poll**".to_string()];
    if let Some(n) = count(poll, "total_votes") {
        head.push(format!("{} votes", grouped(n)));
    }
    if let Some(t) = s(poll, "time_left_en").filter(|t| !t.is_empty()) {
        head.push(escape_inline(t));
    }
    l.push(head.join(" · "));
    for c in poll
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = escape_inline(s(c, "label").unwrap_or(""));
        let pct = c
            .get("percentage")
            .and_then(Value::as_f64)
            .map(|p| format!(" — {p}%"))
            .unwrap_or_default();
        let votes = count(c, "count")
            .map(|n| format!(" ({} votes)", grouped(n)))
            .unwrap_or_default();
        l.push(format!("> - {name}{pct}{votes}"));
    }
    l
}

fn quote_lines(q: &Value, depth: usize) -> Vec<String> {
    let mut l = vec!["> **Quoted post**".to_string(), ">".to_string()];
    let url = model::post_url(q);
    if is_tombstone(q) {
        let reason = s(q, "reason").unwrap_or("unavailable");
        l.push(format!(
            "> Quoted post unavailable ({})",
            escape_inline(reason)
        ));
    } else if depth >= MAX_QUOTE_DEPTH {
        l.push("> (nested quote not shown)".into());
    } else {
        let h = handle(q)
            .map(|h| format!(" @{}", escape_handle(h)))
            .unwrap_or_default();
        l.push(format!("> **{}**{h}", author_name(q)));
        for line in escape_block(&display_text(q)) {
            l.push(if line.is_empty() {
                ">".into()
            } else {
                format!("> {line}")
            });
        }
        if let Some(p) = q.get("poll").filter(|p| p.is_object()) {
            l.extend(poll_lines(p));
        }
        l.extend(media_lines(q));
        if let Some(inner) = q.get("quote").filter(|v| v.is_object()) {
            l.extend(
                quote_lines(inner, depth + 1)
                    .into_iter()
                    .map(|x| format!("> {x}")),
            );
        }
    }
    if let Some(u) = url {
        l.push(format!("> Source: {}", escape_url(&u)));
    }
    l.push(">".into());
    l
}

fn front_matter(first: &Value, total: usize) -> Vec<String> {
    let mut l = vec!["---".to_string()];
    l.push(format!(
        "source: {}",
        yaml_value(&escape_url(s(first, "url").unwrap_or("")))
    ));
    let name = first
        .get("author")
        .and_then(|a| s(a, "name"))
        .unwrap_or("Unknown");
    l.push(format!("author: {}", yaml_value(name)));
    let h = handle(first);
    if let Some(h) = h {
        l.push(format!("author_handle: {}", yaml_value(h)));
    }
    if let Some(d) = s(first, "created_at") {
        l.push(format!("published: {}", yaml_value(d)));
    }
    if total > 1 {
        l.push(format!("thread_posts: {total}"));
    }
    let mut tags = vec!["twitter".to_string(), "x".to_string()];
    if let Some(h) = h {
        tags.push(yaml_value(h));
    }
    l.push(format!("tags: [{}]", tags.join(", ")));
    l.push("---".into());
    l.push(String::new());
    l
}

fn post_lines(
    post: &Value,
    i: usize,
    n: usize,
    opts: &RenderOptions<'_>,
    author_meta: bool,
) -> Vec<String> {
    let obsidian = opts.format == "obsidian";
    let compact = !opts.full && !obsidian;
    let ctx = label(s(post, "context").unwrap_or("post"));
    let url = s(post, "url").unwrap_or(model::MISSING_IDENTITY);
    let mut l = Vec::new();
    if is_tombstone(post) {
        l.push(format!("## {ctx} · {}/{n} — Unavailable post", i + 1));
    } else {
        let h = handle(post)
            .map(|h| format!(" (@{})", escape_handle(h)))
            .unwrap_or_default();
        l.push(format!(
            "## {ctx} · {}/{n} — {}{h}",
            i + 1,
            author_name(post)
        ));
    }
    l.push(String::new());
    if opts.full && !obsidian {
        l.push(format!("Source: {}", escape_url(url)));
        if let Some(d) = s(post, "created_at") {
            l.push(format!("Date: {}", escape_inline(d)));
        }
        if let Some(st) = stats_line(post) {
            l.push(format!("Stats: {st}"));
        }
        l.push(String::new());
    }
    if author_meta {
        if let Some(a) = post.get("author").filter(|a| a.is_object()) {
            l.extend(author_block(a));
        }
    }
    if is_tombstone(post) {
        let reason = escape_inline(s(post, "reason").unwrap_or("unavailable"));
        let msg = s(post, "message")
            .map(|m| format!(": {}", escape_inline(m)))
            .unwrap_or_default();
        l.push(format!("Post unavailable ({reason}){msg}"));
        l.push(String::new());
    } else {
        let mut shown = false;
        let article = post.get("article").filter(|a| a.is_object());
        if let Some(a) = article {
            l.extend(article_lines(a));
            shown = true;
        }
        let text = display_text(post);
        if !text.is_empty() {
            l.extend(escape_block(&text));
            l.push(String::new());
            shown = true;
        }
        if article.is_none() && text.contains("/i/article/") {
            l.push(
                "_The article body is not available upstream; open the link above to read it._"
                    .into(),
            );
            l.push(String::new());
        }
        if post.get("possibly_sensitive").and_then(Value::as_bool) == Some(true) {
            l.push("> Marked by X as possibly sensitive.".into());
        }
        if let Some(p) = post.get("poll").filter(|p| p.is_object()) {
            l.extend(poll_lines(p));
            shown = true;
        }
        let media = media_lines(post);
        shown |= !media.is_empty();
        l.extend(media);
        if let Some(q) = post.get("quote").filter(|q| q.is_object()) {
            l.extend(quote_lines(q, 1));
            l.push(String::new());
            shown = true;
        }
        if !shown {
            l.push("_This post has no text._".into());
            l.push(String::new());
        }
    }
    if compact {
        l.push(format!("Source: {}", escape_url(url)));
    }
    l
}

/// Renders posts (normalised, with `context` and `url` filled) as one
/// Markdown document: trimmed, no trailing newline, never empty for a
/// non-empty list.
pub fn render_posts(posts: &[Value], opts: &RenderOptions<'_>) -> String {
    let mut lines = Vec::new();
    if opts.format == "obsidian" {
        if let Some(first) = posts.first() {
            lines.extend(front_matter(first, posts.len()));
        }
    }
    let mut seen = HashSet::new();
    for (i, post) in posts.iter().enumerate() {
        let meta = match opts.userinfo {
            "author" => i == 0,
            "all" => handle(post).is_some_and(|h| seen.insert(h.to_ascii_lowercase())),
            _ => false,
        };
        lines.extend(post_lines(post, i, posts.len(), opts, meta));
        if i + 1 < posts.len() {
            lines.push("---".into());
            lines.push(String::new());
        }
    }
    lines.join("\n").trim().to_string()
}

/// The pieces [`render_posts`] joins, for the result budget: the head (the
/// obsidian front matter when `first` is 0, else empty) and one block per
/// post, numbered from `first + 1` of `total`. Joined as
/// [`join_blocks`] joins them, the pieces of all posts give exactly
/// `render_posts`.
pub fn post_blocks(
    posts: &[Value],
    opts: &RenderOptions<'_>,
    first: usize,
    total: usize,
) -> (String, Vec<String>) {
    let mut head = String::new();
    if opts.format == "obsidian" && first == 0 {
        if let Some(p) = posts.first() {
            head = front_matter(p, total).join("\n");
            head.push('\n');
        }
    }
    let mut seen = HashSet::new();
    let blocks = posts
        .iter()
        .enumerate()
        .map(|(i, post)| {
            let meta = match opts.userinfo {
                "author" => first + i == 0,
                "all" => handle(post).is_some_and(|h| seen.insert(h.to_ascii_lowercase())),
                _ => false,
            };
            post_lines(post, first + i, total, opts, meta).join("\n")
        })
        .collect();
    (head, blocks)
}

/// Joins [`post_blocks`] pieces into one document (trimmed).
pub fn join_blocks(head: &str, blocks: &[String]) -> String {
    format!("{head}{}", blocks.join("\n---\n\n"))
        .trim()
        .to_string()
}
