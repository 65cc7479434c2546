//! The media block of a normalised post: one blockquote, a line (or a few)
//! per item. Photo `> ![<alt text or "image">](<url>)`; video `> [video](<mp4>)`,
//! its thumbnail `> ![<alt text or "video thumbnail">](<thumb>)`, a
//! `Video:` facts line and a `Variants:` line; GIF `> [GIF](<mp4>)` and its
//! thumbnail `> ![<alt text or "GIF thumbnail">](<thumb>)`; other `> [media](<url>)`.
//! Alt text is user text (escaped); a URL that is not `http(s)` is shown as
//! text, never linked.

use serde_json::Value;

use super::num::grouped;
use crate::x::escape::{escape_inline, image, link};
use crate::x::model::s;

fn items(post: &Value) -> Vec<&Value> {
    let Some(media) = post.get("media") else {
        return Vec::new();
    };
    if let Some(all) = media
        .get("all")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    {
        return all.iter().collect();
    }
    ["photos", "videos", "animated"]
        .iter()
        .filter_map(|k| media.get(*k).and_then(Value::as_array))
        .flatten()
        .collect()
}

/// The item's alt text (`alt`, FxTwitter's `altText`), escaped, if any.
fn alt_text(item: &Value) -> Option<String> {
    s(item, "alt")
        .or_else(|| s(item, "altText"))
        .map(escape_inline)
        .filter(|a| !a.is_empty())
}

/// The best MP4 of a video or GIF: the highest-bitrate `video/mp4` variant,
/// else `url` (FxTwitter's best variant) when a `thumbnail_url` is there
/// too; a GIF FxTwitter transcoded (listed as a photo: `url` is then its
/// still image) has only its `transcode_url`.
fn mp4_url(item: &Value) -> Option<&str> {
    let best = item
        .get("variants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| {
            s(v, "content_type") == Some("video/mp4")
                || s(v, "url").is_some_and(|u| u.contains(".mp4"))
        })
        .filter_map(|v| {
            Some((
                v.get("bitrate").and_then(Value::as_u64).unwrap_or(0),
                s(v, "url")?,
            ))
        })
        .max_by_key(|(b, _)| *b)
        .map(|(_, u)| u);
    let url = s(item, "url").filter(|_| item.get("thumbnail_url").is_some());
    best.or(url)
        .or_else(|| s(item, "transcode_url"))
        .or_else(|| s(item, "url"))
}

/// The still image of a video or GIF: `thumbnail_url`, else (a transcoded
/// GIF) its `url` when that is not the moving one.
fn still<'a>(item: &'a Value, moving: Option<&str>) -> Option<&'a str> {
    s(item, "thumbnail_url").or_else(|| s(item, "url").filter(|u| Some(*u) != moving))
}

fn video_facts(item: &Value) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(ms) = item.get("duration_ms").and_then(Value::as_u64) {
        parts.push(format!("duration: {} ms", grouped(ms)));
    }
    if let (Some(w), Some(h)) = (
        item.get("width").and_then(Value::as_u64),
        item.get("height").and_then(Value::as_u64),
    ) {
        parts.push(format!("{w}×{h}"));
    }
    if let Some(b) = item.get("bitrate").and_then(Value::as_u64) {
        parts.push(format!("{} bps", grouped(b)));
    }
    (!parts.is_empty()).then(|| format!("Video: {}", parts.join(" · ")))
}

fn variants(item: &Value) -> Option<String> {
    let vs: Vec<String> = item
        .get("variants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| {
            let u = s(v, "url")?;
            let label = match v.get("bitrate").and_then(Value::as_u64) {
                Some(b) => format!("{} bps", grouped(b)),
                None => s(v, "content_type")
                    .map(escape_inline)
                    .unwrap_or_else(|| "MP4".into()),
            };
            Some(link(&label, u))
        })
        .collect();
    (!vs.is_empty()).then(|| format!("Variants: {}", vs.join(" · ")))
}

/// A moving item (video or GIF): its MP4, its thumbnail carrying the alt
/// text (or an `Alt text:` line when there is no thumbnail).
fn moving(item: &Value, kind: &str, lines: &mut Vec<String>) {
    let mp4 = mp4_url(item);
    let thumb = still(item, mp4);
    let alt = alt_text(item);
    if let Some(u) = mp4 {
        lines.push(link(kind, u));
    }
    match (thumb, &alt) {
        (Some(t), _) => {
            let fallback = format!("{kind} thumbnail");
            lines.push(image(alt.as_deref().unwrap_or(&fallback), t));
        }
        (None, Some(a)) => lines.push(format!("Alt text: {a}")),
        (None, None) => {}
    }
}

/// The media block of a post: lines starting with `> `, or none.
pub fn media_lines(post: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for item in items(post) {
        let kind = s(item, "type").unwrap_or("").to_ascii_lowercase();
        match kind.as_str() {
            "photo" | "image" => {
                if let Some(u) = s(item, "url").or_else(|| s(item, "thumbnail_url")) {
                    lines.push(image(&alt_text(item).unwrap_or_else(|| "image".into()), u));
                }
            }
            "video" => {
                moving(item, "video", &mut lines);
                lines.extend(video_facts(item));
                lines.extend(variants(item));
            }
            "gif" | "animated_gif" => moving(item, "GIF", &mut lines),
            _ => {
                if let Some(u) = s(item, "url").or_else(|| s(item, "thumbnail_url")) {
                    lines.push(link("media", u));
                }
                if let Some(a) = alt_text(item) {
                    lines.push(format!("Alt text: {a}"));
                }
            }
        }
    }
    // A YouTube (or other) embed FxTwitter names `media.external`, and the
    // mosaic FxTwitter composes of several photos.
    if let Some(e) = post.pointer("/media/external").filter(|e| e.is_object()) {
        if let Some(u) = s(e, "url") {
            lines.push(link("Embedded video", u));
        }
        if let Some(t) = s(e, "thumbnail_url") {
            lines.push(image("Embedded video thumbnail", t));
        }
    }
    if let Some(u) = post.pointer("/media/mosaic").and_then(|m| s(m, "url")) {
        lines.push(link("Mosaic of the photos", u));
    }
    lines.into_iter().map(|l| format!("> {l}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gif_forms() {
        // FxTwitter's video form: `url` is the best MP4, no alt text.
        let video_form = json!({"media": {"all": [{"type": "gif", "url": "https://video.twimg.com/tweet_video/G.mp4",
            "thumbnail_url": "https://pbs.twimg.com/tweet_video_thumb/G.jpg",
            "formats": [{"url": "https://video.twimg.com/tweet_video/G.mp4", "container": "mp4", "bitrate": 0}]}]}});
        assert_eq!(
            media_lines(&video_form),
            [
                "> [GIF](https://video.twimg.com/tweet_video/G.mp4)",
                "> ![GIF thumbnail](https://pbs.twimg.com/tweet_video_thumb/G.jpg)"
            ]
        );
        // The transcoded form: a still `url`, the moving `transcode_url`, alt text.
        let transcoded = json!({"media": {"photos": [{"type": "gif", "url": "https://pbs.twimg.com/tweet_video_thumb/G.jpg",
            "transcode_url": "https://gif.fxtwitter.com/tweet_video/G.gif", "altText": "A *goat*"}]}});
        assert_eq!(
            media_lines(&transcoded),
            [
                "> [GIF](https://gif.fxtwitter.com/tweet_video/G.gif)",
                "> ![A \\*goat\\*](https://pbs.twimg.com/tweet_video_thumb/G.jpg)"
            ]
        );
        // Alt text with no still image gets its own line.
        let bare = json!({"media": {"all": [{"type": "video", "url": "https://v/x.mp4", "altText": "Alt"}]}});
        assert_eq!(
            media_lines(&bare),
            ["> [video](https://v/x.mp4)", "> Alt text: Alt"]
        );
    }
}
