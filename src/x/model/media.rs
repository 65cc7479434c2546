//! A status's `media` (upstream.md §1.5): photos, videos and GIFs with
//! their alt text (FxTwitter sends `altText`), video formats and variants.
//!
//! Reading normalises once, where every consumer sees it: `alt` is filled
//! from `altText`, `duration_ms` from `duration` (seconds), and
//! `variants` from `formats` (`container` → `content_type`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;

use super::parse::{formats, media_items, variants};
use super::scalar::{count, opt_number, opt_text, opt_word, Count, Word};

/// The `media` object. Lists other than these are not kept.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a media object")]
pub struct Media {
    /// Every item in order (FxTwitter v2).
    #[serde(
        deserialize_with = "media_items",
        skip_serializing_if = "Option::is_none"
    )]
    pub all: Option<Vec<MediaItem>>,
    /// The photos.
    #[serde(
        deserialize_with = "media_items",
        skip_serializing_if = "Option::is_none"
    )]
    pub photos: Option<Vec<MediaItem>>,
    /// The videos and GIFs.
    #[serde(
        deserialize_with = "media_items",
        skip_serializing_if = "Option::is_none"
    )]
    pub videos: Option<Vec<MediaItem>>,
    /// GIFs (older answers).
    #[serde(
        deserialize_with = "media_items",
        skip_serializing_if = "Option::is_none"
    )]
    pub animated: Option<Vec<MediaItem>>,
    /// The mosaic of several photos, as sent.
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub mosaic: Option<Box<RawValue>>,
    /// An external media link, as sent.
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub external: Option<Box<RawValue>>,
}

impl Media {
    /// True when no list or object is present.
    pub fn is_empty(&self) -> bool {
        self.all.is_none()
            && self.photos.is_none()
            && self.videos.is_none()
            && self.animated.is_none()
            && self.mosaic.is_none()
            && self.external.is_none()
    }

    /// The items to show: `all` when non-empty, else photos, videos and
    /// GIFs in that order.
    pub fn items(&self) -> Vec<&MediaItem> {
        if let Some(all) = self.all.as_ref().filter(|a| !a.is_empty()) {
            return all.iter().collect();
        }
        [&self.photos, &self.videos, &self.animated]
            .into_iter()
            .flatten()
            .flatten()
            .collect()
    }

    /// Fills `alt`, `duration_ms` and `variants` in every item.
    pub fn normalize(&mut self) {
        for list in [
            &mut self.all,
            &mut self.photos,
            &mut self.videos,
            &mut self.animated,
        ]
        .into_iter()
        .flatten()
        {
            list.iter_mut().for_each(MediaItem::normalize);
        }
    }
}

/// One photo, video or GIF.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a media item object")]
pub struct MediaItem {
    /// The media id.
    #[serde(
        deserialize_with = "super::parse::id",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<super::scalar::Id>,
    /// `photo`, `video` or `gif`.
    #[serde(
        rename = "type",
        deserialize_with = "opt_word",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Word>,
    /// The image, or the video file.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A video's still.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub thumbnail_url: Option<String>,
    /// A GIF's transcoded video.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub transcode_url: Option<String>,
    /// Width in pixels.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub width: Count,
    /// Height in pixels.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub height: Count,
    /// The alt text (filled from `altText`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub alt: Option<String>,
    /// The alt text as FxTwitter names it.
    #[serde(
        rename = "altText",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub alt_text: Option<String>,
    /// Duration in seconds, as sent.
    #[serde(
        deserialize_with = "opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub duration: Option<Number>,
    /// Duration in milliseconds (filled from `duration`).
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub duration_ms: Count,
    /// Bits per second of the file at `url`.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub bitrate: Count,
    /// The file format FxTwitter names (`video/mp4`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// FxTwitter's list of encodings.
    #[serde(deserialize_with = "formats", skip_serializing_if = "Option::is_none")]
    pub formats: Option<Vec<Format>>,
    /// The encodings as xmd lists them (filled from `formats`).
    #[serde(deserialize_with = "variants", skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<Variant>>,
}

impl MediaItem {
    fn normalize(&mut self) {
        if self.alt.is_none() {
            self.alt = self.alt_text.clone();
        }
        if self.duration_ms.is_none() {
            self.duration_ms = self
                .duration
                .as_ref()
                .and_then(Number::as_f64)
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| (d * 1000.0).round() as u64);
        }
        if self.variants.is_none() {
            if let Some(formats) = &self.formats {
                self.variants = Some(
                    formats
                        .iter()
                        .filter_map(|f| {
                            Some(Variant {
                                url: Some(f.url.clone()?),
                                content_type: f.container.as_deref().map(content_type_of),
                                bitrate: f.bitrate.clone(),
                            })
                        })
                        .collect(),
                );
            }
        }
    }
}

/// The media type of a FxTwitter `container`.
fn content_type_of(container: &str) -> String {
    match container {
        "mp4" => "video/mp4".into(),
        "webm" => "video/webm".into(),
        "m3u8" => "application/vnd.apple.mpegurl".into(),
        other => other.to_string(),
    }
}

/// One of FxTwitter's video `formats`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a format object")]
pub struct Format {
    /// The file.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `mp4`, `webm`, `m3u8`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// `h264`, `hevc`, …
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub codec: Option<String>,
    /// Bits per second, as sent.
    #[serde(
        deserialize_with = "opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub bitrate: Option<Number>,
}

/// One encoding of a video, as xmd lists it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a variant object")]
pub struct Variant {
    /// The file.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its media type.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Bits per second, as sent.
    #[serde(
        deserialize_with = "opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub bitrate: Option<Number>,
}
