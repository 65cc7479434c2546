//! The blocks a post's author attached beside its text, each a blockquote:
//! a poll, a link card and a Community Note (media are in `media.rs`).
//! Their text is user text (escaped); their URLs are shown as text.

use std::collections::HashSet;

use serde_json::Value;

use super::num::count as counted;
use crate::x::escape::{escape_block, escape_inline, escape_inline_text, link_url};
use crate::x::model::{count, s};

/// Lines prefixed for a blockquote (`>` alone for a blank line).
pub fn quoted(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|x| {
            if x.is_empty() {
                ">".into()
            } else {
                format!("> {x}")
            }
        })
        .collect()
}

/// A URL shown as text (never linked by xmd; a renderer that links bare
/// URLs shows the URL itself).
pub fn url_text(u: &str) -> String {
    crate::x::escape::autolink(u)
}

/// A poll: `**Poll** · N votes · time left`, then `- label — P% (N votes)`
/// per choice.
pub fn poll_lines(poll: &Value) -> Vec<String> {
    let mut head = vec!["**Poll**".to_string()];
    if let Some(n) = count(poll, "total_votes") {
        head.push(counted(n, "vote", "votes"));
    }
    if let Some(t) = s(poll, "time_left_en")
        .map(escape_inline)
        .filter(|t| !t.is_empty())
    {
        head.push(t);
    }
    if let Some(e) = s(poll, "ends_at").filter(|e| !e.trim().is_empty()) {
        let at = super::date::iso(e).unwrap_or_else(|| escape_inline(e));
        head.push(format!("ends {at}"));
    }
    let mut l = vec![head.join(" · ")];
    for c in poll
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut name = escape_inline_text(s(c, "label").unwrap_or(""));
        if name.is_empty() {
            name = "(no label)".into();
        }
        let pct = c
            .get("percentage")
            .and_then(Value::as_f64)
            .filter(|p| p.is_finite())
            .map(|p| format!(" — {p}%"))
            .unwrap_or_default();
        let votes = count(c, "count")
            .map(|n| format!(" ({})", counted(n, "vote", "votes")))
            .unwrap_or_default();
        l.push(format!("- {name}{pct}{votes}"));
    }
    quoted(l)
}

/// A link card: `**Link card:** title`, the description, then the URL as
/// text with its domain. The title is never a link label (it could name
/// one site and point at another).
pub fn card_lines(card: &Value) -> Vec<String> {
    let field = |k: &str| s(card, k).map(escape_inline).filter(|v| !v.is_empty());
    let mut l = vec![match field("title") {
        Some(t) => format!("**Link card:** {t}"),
        None => "**Link card**".into(),
    }];
    l.extend(
        s(card, "description")
            .map(escape_inline_text)
            .filter(|v| !v.is_empty()),
    );
    let url = s(card, "url")
        .filter(|u| !u.trim().is_empty())
        .map(url_text);
    let domain = field("domain");
    match (url, domain) {
        (Some(u), Some(d)) => l.push(format!("{u} ({d})")),
        (Some(u), None) => l.push(u),
        (None, Some(d)) => l.push(d),
        (None, None) => {}
    }
    // The preview image: FxTwitter's `{url, alt, …}`, or a URL string.
    let img = card.get("image");
    if let Some(u) = img.and_then(|i| i.as_str().or_else(|| s(i, "url"))) {
        let alt = img
            .and_then(|i| s(i, "alt"))
            .map(escape_inline)
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "card image".into());
        l.push(crate::x::escape::image(&alt, u));
    }
    quoted(l)
}

/// A Community Note's text with its t.co links replaced by their targets
/// (`facets` of type `url`, in one pass by their offsets, each checked
/// against its `original`: [`crate::x::model::expand`]), and the http(s)
/// links it cites that the text does not show: facets not applied and
/// legacy Birdwatch `entities` (`ref.url`), once each.
pub fn note_text_and_links(note: &Value) -> (String, Vec<String>) {
    use crate::x::model::expand::{expand, indices, Edit};
    let facets: Vec<&Value> = note
        .get("facets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| s(f, "type").is_none_or(|t| t == "url"))
        .collect();
    // (facet, edit index) for the facets that may be applied.
    let mut edits = Vec::new();
    let mut edit_of = Vec::with_capacity(facets.len());
    for f in &facets {
        let target = s(f, "replacement").or_else(|| s(f, "original"));
        match (
            s(f, "original").filter(|o| o.starts_with("https://t.co/")),
            target,
        ) {
            (Some(o), Some(r)) if link_url(r).is_some() => {
                edit_of.push(Some(edits.len()));
                edits.push(Edit {
                    indices: indices(f.get("indices")),
                    original: o,
                    replacement: r,
                });
            }
            _ => edit_of.push(None),
        }
    }
    let expanded = expand(s(note, "text").unwrap_or(""), 0, &edits);
    let text = expanded.text;
    let mut cited = Vec::new();
    for (f, e) in facets.iter().zip(edit_of) {
        let applied = e.is_some_and(|i| expanded.applied[i]);
        if let (false, Some(r)) = (applied, s(f, "replacement").or_else(|| s(f, "original"))) {
            cited.push(r);
        }
    }
    let entities = note
        .get("entities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    cited.extend(entities.filter_map(|e| e.pointer("/ref/url").and_then(Value::as_str)));
    // Each distinct link once; the text is searched for at most
    // MAX_NOTE_LINKS of them (each search reads the whole text).
    let mut seen = HashSet::new();
    let distinct: Vec<&str> = cited
        .into_iter()
        .filter(|u| seen.insert(*u) && link_url(u).is_some())
        .collect();
    let more = distinct.len().saturating_sub(MAX_NOTE_LINKS);
    let mut links: Vec<String> = distinct
        .into_iter()
        .take(MAX_NOTE_LINKS)
        .filter(|u| !text.contains(*u))
        .map(url_text)
        .collect();
    if more > 0 {
        links.push(format!("{more} more not listed"));
    }
    (text, links)
}

/// Most distinct links a Community Note's `Links:` line checks and lists
/// (20); past them it ends with "N more not listed".
pub const MAX_NOTE_LINKS: usize = 20;

/// The Community Note block: `**Community Note**`, its text, `Links:` it
/// cites beyond the text, and the page of the post's notes on X.
pub fn note_lines(note: &Value, post_id: Option<&str>) -> Vec<String> {
    let (text, links) = note_text_and_links(note);
    let mut l = vec!["**Community Note**".to_string()];
    l.extend(escape_block(&text));
    if !links.is_empty() {
        l.push(format!("Links: {}", links.join(" · ")));
    }
    if let Some(id) = post_id.filter(|i| crate::x::url::is_id(i)) {
        l.push(format!(
            "Notes on this post: https://x.com/i/birdwatch/t/{id}"
        ));
    }
    quoted(l)
}
