//! The syndication endpoint's Tweet object (typed) and its mapping into the
//! FxTwitter status shape the rest of xmd reads (`model.rs`, `render/`,
//! `structuredContent`).
//!
//! Field names and types follow the public type definitions of
//! vercel/react-tweet, `packages/react-tweet/src/api/types/` (`tweet.ts`,
//! `user.ts`, `entities.ts`, `media.ts`, `photo.ts`, `video.ts`). Every
//! field is optional here: a missing one leaves its FxTwitter counterpart
//! out, it never fails the read.

use serde_json::{json, Map, Value};

mod tweet;
pub use tweet::{
    Entities, MediaDetail, OriginalInfo, Photo, Tweet, UrlEntity, User, Variant, Video, VideoInfo,
};

fn unescape_html(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The visible text: leading reply mentions (before
/// `display_text_range`) dropped, media links removed, links expanded (in
/// one pass by the entities' `indices`, each checked against the text:
/// [`crate::x::model::expand`]), HTML entities decoded.
fn display_text(t: &Tweet) -> String {
    use crate::x::model::expand::{expand, indices, Edit};
    let raw = t.text.as_deref().unwrap_or("");
    let start = t
        .display_text_range
        .as_ref()
        .and_then(|r| r.first())
        .map_or(0, |s| *s as usize);
    // The byte where the shown text starts, when `start` code points of
    // the text are all reply mentions.
    let cut = raw
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(raw.len()))
        .nth(start);
    let from = match cut {
        Some(b) if start > 0 => {
            let prefix = &raw[..b];
            let only_mentions = prefix
                .split_whitespace()
                .all(|w| w.starts_with('@') && w.len() > 1);
            if only_mentions {
                b
            } else {
                0
            }
        }
        _ => 0,
    };
    let mut edits = Vec::new();
    if let Some(e) = &t.entities {
        for m in &e.media {
            if let Some(u) = m.url.as_deref().filter(|u| u.starts_with("http")) {
                edits.push(Edit {
                    indices: indices(m.indices.as_ref()),
                    original: u,
                    replacement: "",
                });
            }
        }
        for l in &e.urls {
            if let (Some(u), Some(x)) = (l.url.as_deref(), l.expanded_url.as_deref()) {
                if u.starts_with("http") {
                    edits.push(Edit {
                        indices: indices(l.indices.as_ref()),
                        original: u,
                        replacement: x,
                    });
                }
            }
        }
    }
    unescape_html(expand(raw, from, &edits).text.trim())
}

fn author(u: &User) -> Value {
    let mut a = Map::new();
    if let Some(v) = &u.id_str {
        a.insert("id".into(), json!(v));
    }
    if let Some(v) = &u.name {
        a.insert("name".into(), json!(v));
    }
    if let Some(v) = &u.screen_name {
        a.insert("screen_name".into(), json!(v));
        a.insert("url".into(), json!(format!("https://x.com/{v}")));
    }
    if let Some(v) = &u.profile_image_url_https {
        a.insert("avatar_url".into(), json!(v));
    }
    let kind = match u.verified_type.as_deref() {
        Some("Business") => Some("business"),
        Some("Government") => Some("government"),
        _ if u.verified == Some(true) || u.is_blue_verified == Some(true) => Some("individual"),
        _ => None,
    };
    if let Some(k) = kind {
        a.insert("verification".into(), json!({"verified": true, "type": k}));
    }
    Value::Object(a)
}

/// FxTwitter's `created_at` (`Mon Aug 10 12:41:03 +0000 2026`) and
/// `created_timestamp` for an ISO 8601 UTC time; `None` when it is not
/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
fn fx_time(iso: &str) -> Option<(String, u64)> {
    let b = iso.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || !iso.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| iso.get(r)?.parse::<u64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let rest = &iso[19..iso.len() - 1];
    let fraction_ok = rest.is_empty()
        || (rest.len() > 1
            && rest.starts_with('.')
            && rest[1..].bytes().all(|c| c.is_ascii_digit()));
    if !fraction_ok || !(1..=12).contains(&mo) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = crate::calendar::days_from_civil(y as i64, mo as i64, d as i64);
    use crate::calendar::{MONTHS, WEEKDAYS};
    let text = format!(
        "{} {} {d:02} {h:02}:{mi:02}:{s:02} +0000 {y}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[mo as usize - 1]
    );
    Some((text, days as u64 * 86_400 + h * 3600 + mi * 60 + s))
}

fn media(t: &Tweet) -> Option<Value> {
    let mut all = Vec::new();
    let mut photos = Vec::new();
    let mut videos = Vec::new();
    for m in t.media_details.iter().flatten() {
        let (w, h) = m
            .original_info
            .as_ref()
            .map_or((None, None), |o| (o.width, o.height));
        let kind = m.kind.as_deref().unwrap_or("photo");
        if kind == "photo" {
            let Some(url) = &m.media_url_https else {
                continue;
            };
            let mut p = json!({"type": "photo", "url": url});
            if let (Some(w), Some(h)) = (w, h) {
                p["width"] = json!(w);
                p["height"] = json!(h);
            }
            if let Some(alt) = m.ext_alt_text.as_deref().filter(|a| !a.trim().is_empty()) {
                p["altText"] = json!(alt);
            }
            photos.push(p.clone());
            all.push(p);
            continue;
        }
        let info = m.video_info.as_ref();
        let variants: Vec<&Variant> = info
            .map(|i| i.variants.iter().filter(|v| v.url.is_some()).collect())
            .unwrap_or_default();
        let best = variants
            .iter()
            .filter(|v| v.content_type.as_deref() == Some("video/mp4"))
            .max_by_key(|v| v.bitrate.unwrap_or(0));
        let Some(url) = best
            .and_then(|v| v.url.as_deref())
            .or(m.media_url_https.as_deref())
        else {
            continue;
        };
        let mut v = json!({
            "type": if kind == "animated_gif" { "gif" } else { "video" },
            "url": url,
            "format": "video/mp4",
        });
        if let Some(alt) = m.ext_alt_text.as_deref().filter(|a| !a.trim().is_empty()) {
            v["altText"] = json!(alt);
        }
        if let Some(thumb) = &m.media_url_https {
            v["thumbnail_url"] = json!(thumb);
        }
        if let (Some(w), Some(h)) = (w, h) {
            v["width"] = json!(w);
            v["height"] = json!(h);
        }
        let ms = info
            .and_then(|i| i.duration_millis)
            .or_else(|| t.video.as_ref().and_then(|v| v.duration_ms));
        if let Some(ms) = ms.filter(|_| kind == "video") {
            v["duration"] = json!(ms as f64 / 1000.0);
        }
        let formats: Vec<Value> = variants
            .iter()
            .map(|x| {
                let container = match x.content_type.as_deref() {
                    Some("video/mp4") => "mp4",
                    Some(c) if c.to_ascii_lowercase().contains("mpegurl") => "m3u8",
                    Some(c) => c,
                    None => "unknown",
                };
                let mut f = json!({"url": x.url, "container": container});
                if let Some(b) = x.bitrate {
                    f["bitrate"] = json!(b);
                }
                f
            })
            .collect();
        if !formats.is_empty() {
            v["formats"] = Value::Array(formats);
        }
        videos.push(v.clone());
        all.push(v);
    }
    if all.is_empty() {
        for p in t.photos.iter().flatten() {
            let Some(url) = &p.url else { continue };
            let mut item = json!({"type": "photo", "url": url});
            if let (Some(w), Some(h)) = (p.width, p.height) {
                item["width"] = json!(w);
                item["height"] = json!(h);
            }
            photos.push(item.clone());
            all.push(item);
        }
    }
    if all.is_empty() {
        return None;
    }
    let mut m = json!({"all": all});
    if !photos.is_empty() {
        m["photos"] = Value::Array(photos);
    }
    if !videos.is_empty() {
        m["videos"] = Value::Array(videos);
    }
    Some(m)
}

/// FxTwitter's `replying_to` (`screen_name`, `status`) from
/// `in_reply_to_screen_name` / `in_reply_to_status_id_str`, each else from
/// the `parent` post; a handle alone is kept ("Replying to @h"), a parent
/// id must be a post id.
fn replying_to(t: &Tweet) -> Option<Value> {
    let parent = t.parent.as_ref();
    let status = t
        .in_reply_to_status_id_str
        .as_deref()
        .or_else(|| parent?.get("id_str")?.as_str())
        .filter(|p| super::super::url::is_id(p));
    let handle = t
        .in_reply_to_screen_name
        .as_deref()
        .or_else(|| parent?.pointer("/user/screen_name")?.as_str())
        .filter(|h| !h.trim().is_empty());
    match (handle, status) {
        (None, None) => None,
        (h, None) => Some(json!({"screen_name": h})),
        (h, Some(p)) => Some(json!({"screen_name": h, "status": p})),
    }
}

/// A t.co link of the Tweet's `entities.urls` expanded (a card's `url`),
/// else the link as given.
fn expand_link(t: &Tweet, u: &str) -> String {
    t.entities
        .iter()
        .flat_map(|e| &e.urls)
        .find(|l| l.url.as_deref() == Some(u))
        .and_then(|l| l.expanded_url.clone())
        .unwrap_or_else(|| u.to_string())
}

/// The FxTwitter status for a syndication Tweet (`None` when it has no
/// id). Counts the endpoint does not send (reposts of the main post,
/// quotes, bookmarks, views) stay absent, so nothing shows a made-up 0.
pub fn to_status(t: &Tweet) -> Option<Value> {
    to_status_at(t, 0)
}

fn to_status_at(t: &Tweet, level: usize) -> Option<Value> {
    let id = t
        .id_str
        .as_deref()
        .filter(|i| super::super::url::is_id(i))?;
    let mut s = Map::new();
    s.insert("type".into(), json!("status"));
    s.insert("id".into(), json!(id));
    let handle = t.user.as_ref().and_then(|u| u.screen_name.as_deref());
    let url = match handle {
        Some(h) if !h.is_empty() => format!("https://x.com/{h}/status/{id}"),
        _ => format!("https://x.com/i/status/{id}"),
    };
    s.insert("url".into(), json!(url));
    s.insert("text".into(), json!(display_text(t)));
    // A long post: the endpoint sends only the start of its text.
    if t.note_tweet.as_ref().is_some_and(|n| !n.is_null()) {
        s.insert("text_partial".into(), json!(true));
    }
    if let Some(u) = &t.user {
        s.insert("author".into(), author(u));
    }
    if let Some(n) = t.conversation_count.or(t.reply_count) {
        s.insert("replies".into(), json!(n));
    }
    if let Some(n) = t.retweet_count {
        s.insert("reposts".into(), json!(n));
    }
    if let Some(n) = t.favorite_count {
        s.insert("likes".into(), json!(n));
    }
    if let Some(c) = &t.created_at {
        match fx_time(c) {
            Some((text, ts)) => {
                s.insert("created_at".into(), json!(text));
                s.insert("created_timestamp".into(), json!(ts));
            }
            None => {
                s.insert("created_at".into(), json!(c));
            }
        }
    }
    if let Some(l) = &t.lang {
        s.insert("lang".into(), json!(l));
    }
    if let Some(p) = t.possibly_sensitive {
        s.insert("possibly_sensitive".into(), json!(p));
    }
    if let Some(r) = replying_to(t) {
        s.insert("replying_to".into(), r);
    }
    if let Some(m) = media(t) {
        s.insert("media".into(), m);
    }
    if let Some(c) = &t.card {
        super::card::insert_card(&mut s, c, &|u| expand_link(t, u));
    }
    if let Some(a) = t.article.as_ref().and_then(super::card::article) {
        s.insert("article".into(), a);
    }
    if let Some(q) = t.quoted_tweet.as_deref() {
        use crate::x::model::parse::{past_quote_nesting_message, MAX_QUOTE_NESTING};
        // Checked before descending: the parse already stopped there
        // (`past_quote_nesting`); a `Tweet` built otherwise stops here.
        let quote = if q.past_quote_nesting || level >= MAX_QUOTE_NESTING {
            Some(json!({
                "type": "tombstone",
                "reason": crate::x::model::parse::PAST_QUOTE_NESTING,
                "message": past_quote_nesting_message(),
            }))
        } else if q.is_tombstone() {
            Some(json!({"type": "tombstone", "reason": "unavailable"}))
        } else {
            to_status_at(q, level + 1)
        };
        if let Some(q) = quote {
            s.insert("quote".into(), q);
        }
    }
    Some(Value::Object(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_fxtwitter_form() {
        assert_eq!(
            fx_time("2026-08-10T12:41:03.000Z"),
            Some(("Mon Aug 10 12:41:03 +0000 2026".into(), 1_786_365_663))
        );
        assert_eq!(
            fx_time("1970-01-01T00:00:00Z"),
            Some(("Thu Jan 01 00:00:00 +0000 1970".into(), 0))
        );
        assert_eq!(
            fx_time("2024-02-29T23:59:59.5Z"),
            Some(("Thu Feb 29 23:59:59 +0000 2024".into(), 1_709_251_199))
        );
        for bad in [
            "",
            "2026-08-10 12:41:03Z",
            "2026-13-10T12:41:03Z",
            "2026-08-10T12:41:03+02:00",
            "2026-08-10T12:41:03.Z",
            "Mon Aug 10 12:41:03 +0000 2026",
        ] {
            assert_eq!(fx_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn text_drops_mentions_and_media_links_and_expands_urls() {
        let t: Tweet = serde_json::from_value(json!({
            "text": "@alice @bob fixed in &lt;1 day &amp; shipped https://t.co/AAAA https://t.co/MMMM",
            "display_text_range": [12, 57],
            "entities": {
                "urls": [{"url": "https://t.co/AAAA", "expanded_url": "https://example.com/notes"}],
                "media": [{"url": "https://t.co/MMMM"}]
            }
        }))
        .unwrap();
        assert_eq!(
            display_text(&t),
            "fixed in <1 day & shipped https://example.com/notes"
        );
        // A range that does not start after mentions keeps the text whole.
        let t: Tweet = serde_json::from_value(json!({
            "text": "héllo wörld", "display_text_range": [3, 11]
        }))
        .unwrap();
        assert_eq!(display_text(&t), "héllo wörld");
    }
}
