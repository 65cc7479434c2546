//! An X article as Markdown: title, dates, cover, then every Draft.js
//! block of its body (FxEmbed's `src/helpers/article.ts` reads the same
//! shapes):
//!
//! - headings nest under the post's own `##`: the title is `###`,
//!   `header-one` `####`, `header-two` `#####`, deeper ones `######`
//!   ([`TITLE_LEVEL`]); an article heading never outranks the post's;
//! - list items (`unordered-list-item`, `ordered-list-item`) are grouped
//!   into one tight list, nested by their `depth` (4 spaces a level, at
//!   most [`MAX_LIST_DEPTH`], never more than one level below the item
//!   before); `blockquote` is a quote; `code-block` a fenced code block;
//! - entities: a `MARKDOWN` code block is fenced code with its language
//!   as info string; `MEDIA` an image (a video a link and its still),
//!   found in `media_entities`; `TWEET` a link to the post; `DIVIDER` a
//!   thematic break (`* * *`: `---` separates posts); `LINK` a link after
//!   its block; any other entity type, and any unknown block type, is
//!   named in the output with its text, never dropped;
//! - `Bold`, `Italic` and `Strikethrough` ranges become emphasis over the
//!   escaped text ([`super::styled`]).

use serde_json::Value;

use super::date::iso;
use super::styled::{styled_lines, Range, Style};
use crate::x::escape::{escape_block, escape_heading, escape_inline, image, link};
use crate::x::model::article::{ArticleBlock, ArticleEntity, ArticleMedia};
use crate::x::model::attached::Article;

/// The level of the article's title: one below the post's `##` heading.
/// `header-one` is one level deeper, and so on down to `######`.
pub const TITLE_LEVEL: usize = 3;

/// Most list nesting rendered. Default 4 (Draft.js's own maximum); a
/// deeper item is shown at this depth.
pub const MAX_LIST_DEPTH: usize = 4;

/// The styles of a block xmd renders.
fn ranges(block: &ArticleBlock) -> Vec<Range> {
    block
        .inline_style_ranges
        .iter()
        .filter_map(|r| {
            let style = Style::named(r.style.as_deref()?)?;
            let start = r.offset?;
            Some((start, start.saturating_add(r.length?), style))
        })
        .collect()
}

/// The article's blocks of Markdown lines, joined by the caller with a
/// blank line each: title, dates, cover, then the body (or, without one,
/// the preview and a note saying so).
pub fn article_blocks(article: &Value) -> Vec<Vec<String>> {
    let Ok(a) = serde_json::from_value::<Article>(article.clone()) else {
        return vec![vec![
            "_The article could not be read; open the post link to read it._".into(),
        ]];
    };
    let mut b = Vec::new();
    if let Some(t) = a
        .title
        .as_deref()
        .map(escape_heading)
        .filter(|t| !t.is_empty())
    {
        b.push(vec![format!("{} {t}", "#".repeat(TITLE_LEVEL))]);
    }
    let date = |d: &Option<String>| {
        d.as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(|d| iso(d).unwrap_or_else(|| escape_inline(d)))
    };
    let dates: Vec<String> = [
        date(&a.created_at).map(|d| format!("Published: {d}")),
        date(&a.modified_at).map(|d| format!("Updated: {d}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !dates.is_empty() {
        b.push(vec![dates.join(" · ")]);
    }
    if let Some(c) = a.cover_url().filter(|u| !u.is_empty()) {
        b.push(vec![image("Cover", c)]);
    }
    let body = body_blocks(&a);
    if body.is_empty() {
        let preview = escape_block(a.preview_text.as_deref().unwrap_or(""));
        if preview.iter().any(|l| !l.is_empty()) {
            b.push(preview);
        }
        b.push(vec!["_Only the article preview is available upstream; open the post link for the full article._".into()]);
    } else {
        b.extend(body);
    }
    b
}

/// The Markdown blocks of the article's body, in document order.
fn body_blocks(a: &Article) -> Vec<Vec<String>> {
    let entities = a.content.as_ref().map_or(&[][..], |c| &c.entity_map[..]);
    let mut out: Vec<Vec<String>> = Vec::new();
    // The list being built: its lines and the depth of its last item.
    let mut list: Option<(Vec<String>, usize)> = None;
    for block in a.blocks() {
        let kind = block.kind.as_deref().unwrap_or("unstyled");
        let text = block.text.as_deref().unwrap_or("");
        let rs = ranges(block);
        let is_item = matches!(kind, "unordered-list-item" | "ordered-list-item");
        if !is_item {
            if let Some((lines, _)) = list.take() {
                out.push(lines);
            }
        }
        let lines = styled_lines(text, &rs, false);
        match kind {
            "unordered-list-item" | "ordered-list-item" => {
                let (items, last) = list.get_or_insert_with(|| (Vec::new(), 0));
                let want = usize::try_from(block.depth.unwrap_or(0)).unwrap_or(usize::MAX);
                let depth = if items.is_empty() {
                    0
                } else {
                    want.min(*last + 1).min(MAX_LIST_DEPTH)
                };
                *last = depth;
                let marker = if kind == "ordered-list-item" {
                    "1."
                } else {
                    "-"
                };
                let indent = " ".repeat(4 * depth);
                let cont = " ".repeat(4 * depth + marker.len() + 1);
                let mut first = true;
                for l in lines_of(&lines) {
                    items.push(if first {
                        format!("{indent}{marker} {l}")
                    } else {
                        format!("{cont}{l}")
                    });
                    first = false;
                }
                if first {
                    items.push(format!("{indent}{marker}"));
                }
            }
            "header-one" | "header-two" | "header-three" | "header-four" | "header-five"
            | "header-six" => {
                let n = ["one", "two", "three", "four", "five", "six"]
                    .iter()
                    .position(|w| kind.ends_with(w))
                    .unwrap_or(0);
                let level = (TITLE_LEVEL + 1 + n).min(6);
                let line = styled_lines(&text.replace('\n', " "), &rs, true);
                if let Some(l) = line.first() {
                    out.push(vec![format!("{} {l}", "#".repeat(level))]);
                }
            }
            "blockquote" => {
                if !lines.is_empty() {
                    out.push(lines_of(&lines).map(|l| format!("> {l}")).collect());
                }
            }
            "code-block" => out.push(fenced(text, "")),
            "atomic" | "unstyled" | "paragraph" => {
                if !lines.is_empty() && (kind != "atomic" || block.entity_ranges.is_empty()) {
                    out.push(lines_of(&lines).collect());
                }
            }
            other => {
                let mut l = vec![format!(
                    "**[Article block of type “{}”, shown as text:]**",
                    escape_inline(other)
                )];
                l.extend(lines_of(&lines));
                out.push(l);
            }
        }
        let embeds = entity_blocks(block, entities, &a.media_entities);
        if !embeds.is_empty() {
            if let Some((lines, _)) = list.take() {
                out.push(lines);
            }
            out.extend(embeds);
        }
    }
    if let Some((lines, _)) = list.take() {
        out.push(lines);
    }
    out
}

/// The lines of a block, one Markdown line each (soft line breaks, as
/// post text keeps its lines: every line is escaped as a line start).
fn lines_of(lines: &[String]) -> impl Iterator<Item = String> + '_ {
    lines.iter().cloned()
}

/// `code` as a fenced code block whose backtick fence is longer than any
/// backtick run inside, with `info` (already checked) as info string.
pub fn fenced(code: &str, info: &str) -> Vec<String> {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let mut l = vec![format!("{fence}{info}")];
    l.extend(code.lines().map(|x| {
        x.chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
            .collect::<String>()
    }));
    l.push(fence);
    l
}

/// A language name safe as an info string as it is (no backslash
/// escapes or entities to read, no backtick, no white space).
fn plain_language(lang: &str) -> bool {
    !lang.is_empty()
        && lang.len() <= 40
        && lang
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-#._/".contains(&b))
}

/// The blocks the entities of `block` stand for, in offset order.
fn entity_blocks(
    block: &ArticleBlock,
    entities: &[ArticleEntity],
    media: &[ArticleMedia],
) -> Vec<Vec<String>> {
    let mut ranges: Vec<_> = block.entity_ranges.iter().collect();
    ranges.sort_by_key(|r| r.offset.unwrap_or(0));
    let mut out = Vec::new();
    let mut links = Vec::new();
    for r in ranges {
        let key = r.key.as_ref().map_or("", |k| k.as_str());
        let Some(v) = entities
            .iter()
            .find(|e| e.key.as_ref().is_some_and(|k| k.as_str() == key))
            .and_then(|e| e.value.as_ref())
        else {
            out.push(vec![format!(
                "**[Article embed “{}” is missing from the article's entity map.]**",
                escape_inline(key)
            )]);
            continue;
        };
        let data = v.data.clone().unwrap_or_default();
        let kind = v.kind.as_deref().unwrap_or("");
        match kind.to_ascii_uppercase().as_str() {
            "MARKDOWN" => out.push(markdown_block(data.markdown.as_deref().unwrap_or(""))),
            "MEDIA" => {
                let mut l = Vec::new();
                for item in &data.media_items {
                    l.extend(media_lines(item, media));
                }
                if l.is_empty() {
                    l.push("**[Article media with no items.]**".into());
                }
                out.push(l);
            }
            "TWEET" | "POST" => {
                let id = data.tweet_id.as_ref().map_or("", |i| i.as_str());
                out.push(vec![if crate::x::url::is_id(id) {
                    link("Embedded post", &format!("https://x.com/i/status/{id}"))
                } else {
                    format!("**[Embedded post with an unreadable id: “{}”.]**", escape_inline(id))
                }]);
            }
            "DIVIDER" => out.push(vec!["* * *".into()]),
            "LINK" => {
                if let Some(u) = data.url.as_deref() {
                    let text = utf16_slice(
                        block.text.as_deref().unwrap_or(""),
                        r.offset.unwrap_or(0),
                        r.length.unwrap_or(0),
                    );
                    let label = escape_inline(&text);
                    let label = if label.is_empty() { "link".into() } else { label };
                    links.push(link(&label, u));
                }
            }
            _ => out.push(vec![format!(
                "**[Article embed of type “{}”, which xmd does not render; open the post link to see it.]**",
                escape_inline(kind)
            )]),
        }
    }
    if !links.is_empty() {
        out.insert(0, vec![format!("Links: {}", links.join(" · "))]);
    }
    out
}

/// The characters of `text` whose UTF-16 offsets are in
/// `[offset, offset + length)`.
fn utf16_slice(text: &str, offset: u64, length: u64) -> String {
    let end = offset.saturating_add(length);
    let mut at = 0u64;
    let mut out = String::new();
    for c in text.chars() {
        if at >= offset && at < end {
            out.push(c);
        }
        at += c.len_utf16() as u64;
    }
    out
}

/// A `MARKDOWN` entity: a ```` ```lang ```` block as fenced code with its
/// language (as info string when plain, else named on a line before);
/// other Markdown as fenced `markdown` source, shown, never interpreted.
fn markdown_block(md: &str) -> Vec<String> {
    let Some(rest) = md.strip_prefix("```") else {
        return fenced(md, "markdown");
    };
    let (first, body) = rest.split_once('\n').unwrap_or((rest, ""));
    let lang = first.trim();
    let body = body.trim_end_matches('\n');
    let code = match body.rfind('\n') {
        Some(i) if body[i + 1..].trim_start().starts_with("```") => &body[..i],
        None if body.trim_start().starts_with("```") => "",
        _ => body,
    };
    if lang.is_empty() || plain_language(lang) {
        return fenced(code, lang);
    }
    let mut l = vec![format!("Code in “{}”:", escape_inline(lang))];
    l.push(String::new());
    l.extend(fenced(code, ""));
    l
}

/// The lines of one `MEDIA` item: an image, or a video's link and still;
/// an item not in `media_entities` is named.
fn media_lines(item: &crate::x::model::article::MediaRef, media: &[ArticleMedia]) -> Vec<String> {
    let id = item.media_id.as_ref().map_or("", |i| i.as_str());
    let found = media.iter().find(|m| {
        [&m.media_id, &m.id]
            .into_iter()
            .flatten()
            .any(|k| !id.is_empty() && k.as_str() == id)
    });
    let Some(info) = found.and_then(|m| m.media_info.as_ref()) else {
        return vec![format!(
            "**[Article media {} ({}) is not in the article's media list; open the post link to see it.]**",
            escape_inline(id),
            escape_inline(item.media_category.as_deref().unwrap_or("unknown kind"))
        )];
    };
    let video = info.typename.as_deref().is_some_and(|t| t != "ApiImage")
        || !info.all_variants().is_empty();
    if !video {
        return match info.original_img_url.as_deref() {
            Some(u) => vec![image("Image", u)],
            None => vec!["**[Article image without a URL.]**".into()],
        };
    }
    let label = if info.typename.as_deref() == Some("ApiGif") {
        "GIF"
    } else {
        "Video"
    };
    let best = info
        .all_variants()
        .iter()
        .filter(|v| v.content_type.as_deref() == Some("video/mp4") || v.content_type.is_none())
        .filter(|v| v.url.is_some())
        .max_by_key(|v| v.bitrate.unwrap_or(0))
        .or_else(|| info.all_variants().iter().find(|v| v.url.is_some()));
    let mut l = Vec::new();
    match best.and_then(|v| v.url.as_deref()) {
        Some(u) => l.push(link(label, u)),
        None => l.push(format!("**[Article {label} without a playable URL.]**")),
    }
    if let Some(still) = info
        .media_url_https
        .as_deref()
        .or(info.original_img_url.as_deref())
    {
        l.push(image(&format!("{label} thumbnail"), still));
    }
    l
}
