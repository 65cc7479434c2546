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

use super::article::article_blocks;
use super::attached::{card_lines, note_lines, poll_lines, quoted, url_text};
use super::choice::{Format, UserInfo};
use super::date::{iso, post_date};
use super::media::media_lines;
use super::num::{count as counted, grouped};
use crate::x::escape::{
    at_handle, escape_block, escape_heading, escape_inline, escape_inline_text, yaml_string,
};
use crate::x::model::status::Status;
use crate::x::model::{self, count, handle, is_tombstone, s};

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

fn unescape_html(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text to show: `text`, or when it is empty, `raw_text.text` with
/// t.co links expanded and media links removed, in one pass by the facets'
/// offsets, each checked against its `original` ([`crate::x::model::expand`]).
pub fn display_text(post: &Value) -> String {
    let text = s(post, "text").unwrap_or("").trim();
    if !text.is_empty() {
        return text.to_string();
    }
    let Some(raw) = post.get("raw_text") else {
        return String::new();
    };
    let facets = raw
        .get("facets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|f| {
            (
                s(f, "type"),
                model::expand::indices(f.get("indices")),
                s(f, "original"),
                s(f, "replacement"),
            )
        });
    expand_raw(s(raw, "text").unwrap_or(""), facets)
}

/// [`display_text`] of a typed status.
pub fn status_text(post: &Status) -> String {
    let text = post.text.trim();
    if !text.is_empty() {
        return text.to_string();
    }
    let Some(raw) = &post.raw_text else {
        return String::new();
    };
    let facets = raw.facets.iter().map(|f| {
        (
            f.kind.as_deref(),
            model::expand::raw_indices(f.indices.as_deref()),
            f.original.as_deref(),
            f.replacement.as_deref(),
        )
    });
    expand_raw(&raw.text, facets)
}

/// One facet as [`expand_raw`] reads it: `(type, indices, original,
/// replacement)`.
type RawFacet<'f> = (
    Option<&'f str>,
    Option<(u64, u64)>,
    Option<&'f str>,
    Option<&'f str>,
);

/// Raw text with its facets applied in one pass
/// ([`crate::x::model::expand`]): t.co links (`url`) expanded, media links
/// (`media`) removed, then HTML entities decoded.
fn expand_raw<'f>(raw: &str, facets: impl Iterator<Item = RawFacet<'f>>) -> String {
    let edits: Vec<model::expand::Edit> = facets
        .filter_map(|(kind, indices, original, replacement)| {
            let original = original.filter(|o| o.starts_with("http"))?;
            let replacement = match kind {
                Some("url") => replacement?,
                Some("media") => "",
                _ => return None,
            };
            Some(model::expand::Edit {
                indices,
                original,
                replacement,
            })
        })
        .collect();
    unescape_html(model::expand::expand(raw, 0, &edits).text.trim())
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

fn author_block(author: &Value) -> Vec<String> {
    let mut l = vec!["### Author".to_string(), String::new()];
    let field = |k: &str| s(author, k).map(escape_inline).filter(|v| !v.is_empty());
    if let Some(v) = field("name") {
        l.push(format!("- **Name:** {v}"));
    }
    if let Some(v) = s(author, "screen_name").filter(|v| !v.trim().is_empty()) {
        l.push(format!("- **Handle:** {}", at_handle(v, escape_inline)));
    }
    if let Some(v) = s(author, "description")
        .map(escape_inline_text)
        .filter(|v| !v.is_empty())
    {
        l.push(format!("- **Bio:** {v}"));
    }
    if let Some(v) = field("location") {
        l.push(format!("- **Location:** {v}"));
    }
    if let Some(w) = author
        .get("website")
        .and_then(|w| s(w, "display_url").or_else(|| s(w, "url")))
        .map(escape_inline)
        .filter(|w| !w.is_empty())
    {
        l.push(format!("- **Website:** {w}"));
    }
    if let Some(n) = count(author, "followers") {
        l.push(format!("- **Followers:** {}", grouped(n)));
    }
    if let Some(n) = count(author, "following") {
        l.push(format!("- **Following:** {}", grouped(n)));
    }
    for (k, label) in [
        ("statuses", "Posts"),
        ("likes", "Likes"),
        ("media_count", "Media"),
    ] {
        if let Some(n) = count(author, k) {
            l.push(format!("- **{label}:** {}", grouped(n)));
        }
    }
    if let Some(v) = s(author, "joined").filter(|v| !v.trim().is_empty()) {
        let d = iso(v).unwrap_or_else(|| escape_inline(v));
        l.push(format!("- **Joined:** {d}"));
    }
    l.extend(account_facts(author).into_iter().map(|f| format!("- {f}")));
    l
}

/// What an account's `verification`, `protected`, `avatar_url` and
/// `banner_url` say, one fact a line: `**Verified:** yes (business, since
/// <ISO date>)`, `**Protected:** yes`, `**Avatar:** ![avatar](…)`.
pub fn account_facts(user: &Value) -> Vec<String> {
    let mut l = Vec::new();
    if let Some(v) = user.get("verification").filter(|v| v.is_object()) {
        if let Some(yes) = v.get("verified").and_then(Value::as_bool) {
            let mut how: Vec<String> = Vec::new();
            how.extend(s(v, "type").map(escape_inline).filter(|t| !t.is_empty()));
            if let Some(at) = s(v, "verified_at").filter(|t| !t.trim().is_empty()) {
                how.push(format!(
                    "since {}",
                    iso(at).unwrap_or_else(|| escape_inline(at))
                ));
            }
            let how = if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            };
            l.push(format!(
                "**Verified:** {}{how}",
                if yes { "yes" } else { "no" }
            ));
        }
    }
    if let Some(p) = user.get("protected").and_then(Value::as_bool) {
        l.push(format!(
            "**Protected:** {}",
            if p {
                "yes (only approved followers see its posts)"
            } else {
                "no"
            }
        ));
    }
    for (k, label) in [("avatar_url", "Avatar"), ("banner_url", "Banner")] {
        if let Some(u) = s(user, k).filter(|u| !u.trim().is_empty()) {
            l.push(format!(
                "**{label}:** {}",
                crate::x::escape::image(&label.to_ascii_lowercase(), u)
            ));
        }
    }
    l
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

/// The body blocks of a status (text, poll, media, card, note, quote), and
/// whether anything was shown.
fn body_blocks(post: &Value, depth: usize, full: bool) -> (Vec<Vec<String>>, bool) {
    let mut b = Vec::new();
    let mut shown = false;
    let article = post.get("article").filter(|a| a.is_object());
    if let Some(a) = article {
        b.extend(article_blocks(a));
        shown = true;
    }
    let text = display_text(post);
    let lines = escape_block(&text);
    if lines.iter().any(|l| !l.is_empty()) {
        b.push(lines);
        shown = true;
    }
    if let Some(t) = post.get("translation").filter(|t| t.is_object()) {
        let lines = translation_lines(t);
        if !lines.is_empty() {
            b.push(lines);
        }
    }
    if post.get("text_partial").and_then(Value::as_bool) == Some(true) {
        b.push(vec![format!("**[{}]**", PARTIAL_TEXT_NOTE)]);
        shown = true;
    }
    if article.is_none() && text.contains("/i/article/") {
        b.push(vec![
            "_The article body is not available upstream; open the link above to read it._".into(),
        ]);
    }
    if post.get("possibly_sensitive").and_then(Value::as_bool) == Some(true) {
        b.push(vec!["> Marked by X as possibly sensitive.".into()]);
    }
    if let Some(p) = post.get("poll").filter(|p| p.is_object()) {
        b.push(poll_lines(p));
        shown = true;
    }
    let media = media_lines(post);
    shown |= !media.is_empty();
    b.push(media);
    if let Some(c) = post.get("card").filter(|c| c.is_object()) {
        b.push(card_lines(c));
        shown = true;
    }
    if let Some(n) = post.get("community_note").filter(|n| n.is_object()) {
        b.push(note_lines(n, model::id(post)));
    }
    if let Some(q) = post.get("quote").filter(|q| q.is_object()) {
        b.push(quote_lines(q, depth + 1, full));
        shown = true;
    }
    (b, shown)
}

/// FxTwitter's translation (`lang`), under the original: which language
/// it is from (`source_lang_en` and `source_lang`), into which, by whom,
/// then the text as a quote.
fn translation_lines(t: &Value) -> Vec<String> {
    let text = s(t, "text").unwrap_or("");
    if text.trim().is_empty() {
        return Vec::new();
    }
    let word = |k: &str| s(t, k).filter(|v| !v.trim().is_empty()).map(escape_inline);
    let from = match (word("source_lang_en"), word("source_lang")) {
        (Some(n), Some(c)) => format!("{n} ({c})"),
        (Some(n), None) => n,
        (None, Some(c)) => c,
        (None, None) => "an unnamed language".into(),
    };
    let mut head = format!("Translation from {from}");
    if let Some(into) = word("target_lang") {
        head.push_str(&format!(" into {into}"));
    }
    if let Some(by) = word("provider") {
        head.push_str(&format!(", by {by}"));
    }
    head.push(':');
    let mut lines = vec![head, String::new()];
    lines.extend(escape_block(text).into_iter().map(|l| {
        if l.is_empty() {
            ">".to_string()
        } else {
            format!("> {l}")
        }
    }));
    lines
}

fn quote_lines(q: &Value, depth: usize, full: bool) -> Vec<String> {
    let mut blocks = Vec::new();
    if is_tombstone(q) {
        let reason = escape_inline(s(q, "reason").unwrap_or("unavailable"));
        let by = handle(q)
            .filter(|h| !h.trim().is_empty())
            .map(|h| format!(" ({})", at_handle(h, escape_inline)))
            .unwrap_or_default();
        let msg = s(q, "message")
            .map(escape_inline)
            .filter(|m| !m.is_empty())
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        blocks.push(vec![format!(
            "**Quoted post**{by} — unavailable ({reason}){msg}"
        )]);
    } else if depth > MAX_QUOTE_DEPTH {
        blocks.push(vec!["**Quoted post** (nested quote not shown)".to_string()]);
    } else {
        let h = handle(q)
            .filter(|h| !h.trim().is_empty())
            .map(|h| format!(" ({})", at_handle(h, escape_inline)))
            .unwrap_or_default();
        blocks.push(vec![format!(
            "**Quoted post** — **{}**{h}",
            author_name(q, escape_inline)
        )]);
        blocks.extend(body_blocks(q, depth, full).0);
    }
    let mut footer: Vec<String> = if is_tombstone(q) {
        Vec::new()
    } else {
        let mut f: Vec<String> = date_line(q).into_iter().collect();
        if full {
            f.extend(stats_line(q).map(|st| format!("Stats: {st}")));
        }
        f
    };
    if let Some(u) = model::post_url(q) {
        footer.push(format!("Source: {}", url_text(&u)));
    }
    blocks.push(footer);
    quoted(join_blocks(blocks))
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
