//! The body of one status: its text, poll, media, card, note, translation
//! and quoted post, as blocks.

use serde_json::Value;

use super::text::display_text;
use super::{author_name, date_line, join_blocks, stats_line, MAX_QUOTE_DEPTH, PARTIAL_TEXT_NOTE};
use crate::x::escape::{at_handle, escape_block, escape_inline};
use crate::x::model::{self, handle, is_tombstone, s};
use crate::x::render::article::article_blocks;
use crate::x::render::attached::{card_lines, note_lines, poll_lines, quoted, url_text};
use crate::x::render::media::media_lines;

/// The body blocks of a status (text, poll, media, card, note, quote), and
/// whether anything was shown.
pub(super) fn body_blocks(post: &Value, depth: usize, full: bool) -> (Vec<Vec<String>>, bool) {
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
