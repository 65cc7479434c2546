//! The text of a post to show: `text`, or the raw text with its t.co links
//! expanded and its media links removed by the facets' offsets.

use serde_json::Value;

use crate::x::model::status::Status;
use crate::x::model::{self, s};

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
