//! Helpers over FxTwitter JSON values: normalisation, parent ids, roles.
//!
//! Posts stay `serde_json::Value` (all upstream fields are kept for
//! `structuredContent`); these functions read and amend them.

use serde_json::{json, Value};

/// The string at `key`, if it is one.
pub fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// True when the value is a tombstone row.
pub fn is_tombstone(v: &Value) -> bool {
    s(v, "type") == Some("tombstone")
}

/// True for an object that is a status (or an untyped post object with an
/// id), as opposed to a tombstone or junk.
pub fn is_status(v: &Value) -> bool {
    v.is_object() && !is_tombstone(v) && s(v, "id").is_some()
}

/// The post id, if present.
pub fn id(v: &Value) -> Option<&str> {
    s(v, "id")
}

/// The parent post id: `replying_to.status` for the v2 object form, else
/// the legacy `replying_to_status` (its first item, or the string itself).
/// Only digit strings count.
pub fn parent_id(v: &Value) -> Option<String> {
    let p = match v.get("replying_to") {
        Some(Value::Object(o)) => o.get("status").and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    let p = p.or_else(|| match v.get("replying_to_status") {
        Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_string),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    });
    p.filter(|p| crate::x::url::is_id(p))
}

/// Rewrites the ids of a post read as JSON numbers (the post's, its
/// author's, recursively its quote's) as decimal strings. serde_json
/// reads any integer up to `u64::MAX` exactly, so the string is exact.
pub fn ids_to_strings(v: &mut Value, depth: usize) {
    let Some(o) = v.as_object_mut() else { return };
    for key in ["id", "conversation_id"] {
        if let Some(Value::Number(n)) = o.get(key) {
            if let Some(u) = n.as_u64() {
                o.insert(key.into(), Value::String(u.to_string()));
            }
        }
    }
    if let Some(Value::Object(a)) = o.get_mut("author") {
        if let Some(Value::Number(n)) = a.get("id") {
            if let Some(u) = n.as_u64() {
                a.insert("id".into(), Value::String(u.to_string()));
            }
        }
    }
    if depth < 8 {
        if let Some(q) = o.get_mut("quote") {
            ids_to_strings(q, depth + 1);
        }
    }
}

/// The author's handle, if any.
pub fn handle(v: &Value) -> Option<&str> {
    v.get("author").and_then(|a| s(a, "screen_name"))
}

/// A count field as a whole number (floats are rounded, negatives and
/// non-numbers are `None`).
pub fn count(v: &Value, key: &str) -> Option<u64> {
    let n = v.get(key)?;
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| *f >= 0.0 && f.is_finite())
            .map(|f| f.round() as u64)
    })
}

fn content_type_of(container: &str) -> String {
    match container {
        "mp4" => "video/mp4".into(),
        "webm" => "video/webm".into(),
        "m3u8" => "application/vnd.apple.mpegurl".into(),
        other => other.to_string(),
    }
}

fn normalize_media_item(item: &mut Value) {
    let Some(o) = item.as_object_mut() else {
        return;
    };
    if !o.contains_key("alt") {
        if let Some(a) = o.get("altText").cloned() {
            o.insert("alt".into(), a);
        }
    }
    if !o.contains_key("duration_ms") {
        if let Some(d) = o
            .get("duration")
            .and_then(Value::as_f64)
            .filter(|d| d.is_finite() && *d >= 0.0)
        {
            o.insert("duration_ms".into(), json!((d * 1000.0).round() as u64));
        }
    }
    if !o.contains_key("variants") {
        if let Some(formats) = o.get("formats").and_then(Value::as_array) {
            let variants: Vec<Value> = formats
                .iter()
                .filter_map(|f| {
                    let url = s(f, "url")?;
                    let mut v = json!({"url": url});
                    if let Some(c) = s(f, "container") {
                        v["content_type"] = json!(content_type_of(c));
                    }
                    if let Some(b) = f.get("bitrate").filter(|b| b.is_number()) {
                        v["bitrate"] = b.clone();
                    }
                    Some(v)
                })
                .collect();
            o.insert("variants".into(), Value::Array(variants));
        }
    }
}

/// Normalises a status in place (recursively into `quote`): `retweets`,
/// `text` always a string, empty `media` dropped, media items amended.
/// Tombstones are left as they are.
pub fn normalize(post: &mut Value, depth: usize) {
    if is_tombstone(post) || depth > 8 {
        return;
    }
    let Some(o) = post.as_object_mut() else {
        return;
    };
    if !o.contains_key("retweets") {
        if let Some(r) = o.get("reposts").cloned() {
            o.insert("retweets".into(), r);
        }
    }
    if !o.get("text").is_some_and(Value::is_string) {
        o.insert("text".into(), json!(""));
    }
    let empty_media = match o.get("media") {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Null) => true,
        _ => false,
    };
    if empty_media {
        o.remove("media");
    }
    if let Some(Value::Object(m)) = o.get_mut("media") {
        for (_, list) in m.iter_mut() {
            if let Value::Array(items) = list {
                items.iter_mut().for_each(normalize_media_item);
            }
        }
    }
    if let Some(q) = o.get_mut("quote") {
        if q.is_null() {
            o.remove("quote");
        } else {
            normalize(q, depth + 1);
        }
    }
}

/// The link of a post: its `url`, else built from handle and id.
pub fn post_url(v: &Value) -> Option<String> {
    if let Some(u) = s(v, "url").filter(|u| !u.is_empty()) {
        return Some(u.to_string());
    }
    let i = id(v)?;
    Some(match handle(v) {
        Some(h) if !h.is_empty() => format!("https://x.com/{h}/status/{i}"),
        _ => format!("https://x.com/i/status/{i}"),
    })
}

/// Text shown when a post has no identity at all.
pub const MISSING_IDENTITY: &str = "Unavailable (post identity missing)";

/// Fills `url` (post and quote) so every post carries a link.
pub fn fill_url(post: &mut Value, fallback: Option<&str>) {
    let url = post_url(post)
        .or_else(|| fallback.map(str::to_string))
        .unwrap_or_else(|| MISSING_IDENTITY.into());
    if let Some(o) = post.as_object_mut() {
        o.insert("url".into(), json!(url));
        if let Some(q) = o.get_mut("quote") {
            if q.is_object() && !q.get("url").is_some_and(Value::is_string) {
                if let Some(u) = post_url(q) {
                    q["url"] = json!(u);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_media_and_counts() {
        let mut p = json!({"type":"status","id":"1","reposts":3,"media":{"all":[
            {"type":"video","duration":15.24,"altText":"a","formats":[
                {"url":"u1","container":"m3u8"},{"url":"u2","container":"mp4","bitrate":256000}]}]},
            "quote":{"type":"status","id":"2","reposts":1,"media":{}}});
        normalize(&mut p, 0);
        assert_eq!(p["retweets"], json!(3));
        assert_eq!(p["text"], json!(""));
        let item = &p["media"]["all"][0];
        assert_eq!(item["duration_ms"], json!(15240));
        assert_eq!(item["alt"], json!("a"));
        assert_eq!(
            item["variants"],
            json!([{"url":"u1","content_type":"application/vnd.apple.mpegurl"},{"url":"u2","content_type":"video/mp4","bitrate":256000}])
        );
        assert_eq!(p["quote"]["retweets"], json!(1));
        assert!(p["quote"].get("media").is_none());
    }

    #[test]
    fn parent_ids() {
        assert_eq!(
            parent_id(&json!({"replying_to":{"status":"12"}})),
            Some("12".into())
        );
        assert_eq!(
            parent_id(&json!({"replying_to":["x"],"replying_to_status":["13"]})),
            Some("13".into())
        );
        assert_eq!(parent_id(&json!({"replying_to":{"status":"1x"}})), None);
        assert_eq!(parent_id(&json!({"replying_to":null})), None);
    }

    #[test]
    fn urls() {
        let mut p = json!({"id":"5","author":{"screen_name":"a"}});
        fill_url(&mut p, None);
        assert_eq!(p["url"], "https://x.com/a/status/5");
        let mut t = json!({"type":"tombstone"});
        fill_url(&mut t, None);
        assert_eq!(t["url"], MISSING_IDENTITY);
        let mut t = json!({"type":"tombstone"});
        fill_url(&mut t, Some("https://x.com/b/status/9"));
        assert_eq!(t["url"], "https://x.com/b/status/9");
    }
}
