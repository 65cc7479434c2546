//! The text of a `format=json` result: posts as a fenced `json` block,
//! and the reduced form of one post that alone exceeds the result budget.
//!
//! The class this closes: a JSON text cut like prose (at a character
//! count) is no longer JSON. A post whose media, quote and author alone
//! exceed a small budget lost its whole text to the inside cut and then
//! had its block cut mid-member by the budget's last guard, the fence left
//! open. Reduced instead, the block stays one closed, parseable array
//! whose post keeps what identifies and says it ([`KEPT_MEMBERS`]), its
//! text cut only when the text itself is over the budget.

use serde::Serialize;
use serde_json::{Map, Value};

/// Members a reduced post keeps (written in name order, as every
/// `serde_json` object here); every other member is left out of the text
/// and named in the cut note. An author keeps
/// [`KEPT_AUTHOR_MEMBERS`].
pub const KEPT_MEMBERS: &[&str] = &[
    "type",
    "id",
    "url",
    "context",
    "text",
    "text_truncated",
    "author",
    "replying_to",
    "created_at",
    "created_timestamp",
    "lang",
    "replies",
    "reposts",
    "likes",
    "quotes",
    "bookmarks",
    "views",
];

/// Members of a reduced post's `author`.
pub const KEPT_AUTHOR_MEMBERS: &[&str] = &["id", "screen_name", "name"];

/// Posts as a fenced `json` block whose fence is longer than any backtick
/// run inside, so post text cannot close it.
pub fn fenced_json<T: Serialize>(posts: &[T]) -> String {
    let body = serde_json::to_string_pretty(posts).unwrap_or_else(|_| "[]".into());
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}json\n{body}\n{fence}")
}

/// One post reduced to [`KEPT_MEMBERS`] (its author to
/// [`KEPT_AUTHOR_MEMBERS`]), its `text` replaced by `text` when given (a
/// cut text, which then says `text_truncated: true`); returns it with the
/// names of the members left out, in name order.
pub fn reduced_post<T: Serialize>(post: &T, text: Option<String>) -> (Value, Vec<String>) {
    let Ok(Value::Object(whole)) = serde_json::to_value(post) else {
        return (Value::Object(Map::new()), Vec::new());
    };
    let left_out: Vec<String> = whole
        .keys()
        .filter(|k| !KEPT_MEMBERS.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut kept = Map::new();
    for key in KEPT_MEMBERS {
        let value = match (*key, whole.get(*key)) {
            ("text", _) if text.is_some() => text.clone().map(Value::String),
            ("text_truncated", _) if text.is_some() => Some(Value::Bool(true)),
            ("author", Some(Value::Object(a))) => Some(Value::Object(
                KEPT_AUTHOR_MEMBERS
                    .iter()
                    .filter_map(|k| a.get(*k).map(|v| ((*k).to_string(), v.clone())))
                    .collect(),
            )),
            (_, v) => v.cloned(),
        };
        if let Some(v) = value {
            kept.insert((*key).to_string(), v);
        }
    }
    (Value::Object(kept), left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fence_outgrows_backtick_runs() {
        let t = fenced_json(&[json!({"text": "a ```` b"})]);
        assert!(t.starts_with("`````json\n"));
        assert!(t.ends_with("\n`````"));
        assert!(fenced_json::<Value>(&[]).starts_with("```json\n"));
    }

    #[test]
    fn a_reduced_post_keeps_identity_text_and_counts() {
        let post = json!({
            "type": "status", "id": "7", "url": "https://x.com/a/status/7", "text": "hello",
            "author": {"id": "1", "screen_name": "a", "name": "A", "description": "bio"},
            "media": {"all": []}, "likes": 3, "quote": {"id": "8"}, "lang": "en"
        });
        let (v, out) = reduced_post(&post, None);
        assert_eq!(
            v,
            json!({"type": "status", "id": "7", "url": "https://x.com/a/status/7", "text": "hello",
                   "author": {"id": "1", "screen_name": "a", "name": "A"}, "lang": "en", "likes": 3})
        );
        assert_eq!(out, ["media", "quote"]);
        let (v, _) = reduced_post(&post, Some("he…".into()));
        assert_eq!(
            (&v["text"], &v["text_truncated"]),
            (&json!("he…"), &json!(true))
        );
    }
}
