//! Media lines (`> ![image](…)`, `> [video](…)`, …) of a normalised post.

use serde_json::Value;

use super::escape::escape_url;
use super::num;
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

/// The media lines of a post, each starting with `> `.
pub fn media_lines(post: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for item in items(post) {
        let kind = s(item, "type").unwrap_or("").to_ascii_lowercase();
        let url = s(item, "url").or_else(|| s(item, "thumbnail_url"));
        let thumb = s(item, "thumbnail_url");
        let Some(url) = url else { continue };
        match kind.as_str() {
            "photo" | "image" => lines.push(format!("> ![image]({})", escape_url(url))),
            "video" => {
                lines.push(format!("> [video]({})", escape_url(url)));
                if let Some(t) = thumb.filter(|t| *t != url) {
                    lines.push(format!("> ![video thumbnail]({})", escape_url(t)));
                }
                let mut parts = Vec::new();
                if let Some(ms) = item.get("duration_ms").and_then(Value::as_u64) {
                    parts.push(format!("duration: {ms}ms"));
                }
                if let (Some(w), Some(h)) = (
                    item.get("width").and_then(Value::as_u64),
                    item.get("height").and_then(Value::as_u64),
                ) {
                    parts.push(format!("{w}×{h}"));
                }
                if let Some(b) = item.get("bitrate").and_then(Value::as_u64) {
                    parts.push(format!("{b}bps"));
                }
                if !parts.is_empty() {
                    lines.push(format!("> Video: {}", parts.join(" · ")));
                }
                let variants: Vec<String> = item
                    .get("variants")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter_map(|v| {
                                let u = s(v, "url")?;
                                let label = match v.get("bitrate").and_then(Value::as_u64) {
                                    Some(b) => format!("{b}bps"),
                                    None => s(v, "content_type")
                                        .map(num::label)
                                        .unwrap_or_else(|| "MP4".into()),
                                };
                                Some(format!("[{label}]({})", escape_url(u)))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if !variants.is_empty() {
                    lines.push(format!("> Variants: {}", variants.join(" · ")));
                }
            }
            "gif" | "animated_gif" => lines.push(format!(
                "> [animated_gif]({})",
                escape_url(thumb.unwrap_or(url))
            )),
            _ => lines.push(format!("> [media]({})", escape_url(url))),
        }
    }
    lines
}
