//! An X article's body as FxTwitter sends it (`TwitterArticleSchema` in
//! FxEmbed's `packages/atmosphere/src/types/api-schemas.ts`): Draft.js
//! `content.blocks` with their inline style and entity ranges, the
//! `entityMap` (code as `MARKDOWN`, images and videos as `MEDIA`, embedded
//! posts as `TWEET`, and whatever else X adds), and the `media_entities`
//! the `MEDIA` entries point at.
//!
//! Tolerant like the rest of the model: a leaf of the wrong type is
//! absent; `entityMap` is read as FxTwitter's list of `{key, value}` or as
//! Draft.js's own object keyed by entity key. Offsets and lengths are
//! UTF-16 code units of the block's text, as Draft.js counts them.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::parse::raw;
use super::scalar::{count, opt_text, Count, Id};

/// One Draft.js block of an article body.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an article block object")]
pub struct ArticleBlock {
    /// The block's Draft.js key.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `unstyled`, `header-one` … `header-six`, `unordered-list-item`,
    /// `ordered-list-item`, `blockquote`, `code-block`, `atomic`, …
    #[serde(
        rename = "type",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<String>,
    /// The block's text.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A list item's nesting (0 outermost), when sent.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub depth: Count,
    /// Bold, italic, strikethrough … over ranges of the text.
    #[serde(
        rename = "inlineStyleRanges",
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub inline_style_ranges: Vec<StyleRange>,
    /// Ranges of the text an entity (code, media, post, link) stands on.
    #[serde(
        rename = "entityRanges",
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub entity_ranges: Vec<EntityRange>,
    /// The block's `data` (mentions, urls, hashtags, cashtags), as sent.
    #[serde(deserialize_with = "raw", skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<serde_json::value::RawValue>>,
}

/// An inline style over `[offset, offset + length)` of a block's text.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an inline style range object")]
pub struct StyleRange {
    /// Start, in UTF-16 code units.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub offset: Count,
    /// Length, in UTF-16 code units.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub length: Count,
    /// `Bold`, `Italic`, `Strikethrough`, …
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
}

/// An entity over `[offset, offset + length)` of a block's text.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an entity range object")]
pub struct EntityRange {
    /// The entity's key in `entityMap`.
    #[serde(deserialize_with = "loose_id", skip_serializing_if = "Option::is_none")]
    pub key: Option<Id>,
    /// Start, in UTF-16 code units.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub offset: Count,
    /// Length, in UTF-16 code units.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub length: Count,
}

/// One entry of `entityMap`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an entity map entry object")]
pub struct ArticleEntity {
    /// The key the blocks' `entityRanges` name.
    #[serde(deserialize_with = "loose_id", skip_serializing_if = "Option::is_none")]
    pub key: Option<Id>,
    /// The entity.
    #[serde(deserialize_with = "value", skip_serializing_if = "Option::is_none")]
    pub value: Option<EntityValue>,
}

/// An entity: its `type` and `data`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an entity object")]
pub struct EntityValue {
    /// `MARKDOWN`, `MEDIA`, `TWEET`, `DIVIDER`, `LINK`, …
    #[serde(
        rename = "type",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<String>,
    /// `Mutable` or `Immutable` (Draft.js editing; not shown).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub mutability: Option<String>,
    /// What the entity holds.
    #[serde(deserialize_with = "data", skip_serializing_if = "Option::is_none")]
    pub data: Option<EntityData>,
}

/// An entity's `data`: the members of every kind FxEmbed types, and
/// `url` (a `LINK`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an entity data object")]
pub struct EntityData {
    /// The entity's own key (Draft.js bookkeeping; not shown).
    #[serde(
        rename = "entityKey",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub entity_key: Option<String>,
    /// A `MARKDOWN` entity's source: a code block is ```` ```lang ````,
    /// the code, ```` ``` ````.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    /// A `MEDIA` entity's items.
    #[serde(
        rename = "mediaItems",
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub media_items: Vec<MediaRef>,
    /// A `TWEET` entity's post id.
    #[serde(
        rename = "tweetId",
        deserialize_with = "loose_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub tweet_id: Option<Id>,
    /// A `LINK` entity's target.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One item of a `MEDIA` entity.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a media item object")]
pub struct MediaRef {
    /// The editor's id (not shown).
    #[serde(
        rename = "localMediaId",
        deserialize_with = "loose_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub local_media_id: Option<Id>,
    /// `DraftTweetImage`, `DraftTweetVideo`, `DraftTweetGif`, …
    #[serde(
        rename = "mediaCategory",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub media_category: Option<String>,
    /// The `media_id` of an entry of the article's `media_entities`.
    #[serde(
        rename = "mediaId",
        deserialize_with = "loose_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub media_id: Option<Id>,
}

/// One of an article's `media_entities` (and its `cover_media`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an article media object")]
pub struct ArticleMedia {
    /// The media id.
    #[serde(deserialize_with = "loose_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// X's media key (`3_…`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub media_key: Option<String>,
    /// What a `MEDIA` entity's `mediaId` names.
    #[serde(deserialize_with = "loose_id", skip_serializing_if = "Option::is_none")]
    pub media_id: Option<Id>,
    /// The image or video.
    #[serde(
        deserialize_with = "super::parse::media_info",
        skip_serializing_if = "Option::is_none"
    )]
    pub media_info: Option<ArticleMediaInfo>,
}

/// A `media_info`: an `ApiImage`, or an `ApiVideo` / `ApiGif`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a media info object")]
pub struct ArticleMediaInfo {
    /// `ApiImage`, `ApiVideo`, `ApiGif`.
    #[serde(
        rename = "__typename",
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub typename: Option<String>,
    /// The image at full size.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub original_img_url: Option<String>,
    /// The image's width in pixels.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub original_img_width: Count,
    /// The image's height in pixels.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub original_img_height: Count,
    /// A video's still.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub media_url_https: Option<String>,
    /// A video's alt text.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub ext_alt_text: Option<String>,
    /// An article video's encodings (sent on `media_info` itself).
    #[serde(deserialize_with = "list", skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VideoVariant>,
    /// A video's `video_info` (duration, encodings).
    #[serde(
        deserialize_with = "video_info",
        skip_serializing_if = "Option::is_none"
    )]
    pub video_info: Option<VideoInfo>,
}

impl ArticleMediaInfo {
    /// The encodings: `variants`, else `video_info.variants`.
    pub fn all_variants(&self) -> &[VideoVariant] {
        if !self.variants.is_empty() {
            return &self.variants;
        }
        self.video_info
            .as_ref()
            .map_or(&[][..], |v| v.variants.as_slice())
    }
}

/// A video's `video_info`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a video info object")]
pub struct VideoInfo {
    /// Duration in milliseconds.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub duration_millis: Count,
    /// The encodings.
    #[serde(deserialize_with = "list", skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VideoVariant>,
}

/// One encoding of an article video.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a video variant object")]
pub struct VideoVariant {
    /// The file.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `video/mp4`, `application/x-mpegURL`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Bits per second.
    #[serde(
        alias = "bit_rate",
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub bitrate: Count,
}

/// An id-like key: a string or a non-negative integer; anything else is
/// absent (a key is never worth failing a post).
fn loose_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Id>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(Id(s)),
        serde_json::Value::Number(n) => n.as_u64().map(|n| Id(n.to_string())),
        _ => None,
    })
}

/// A list of `T` read leniently: `null` or a non-list is empty, an entry
/// that is not an object of the right shape is skipped (the body's size is
/// bounded by the upstream read, `MAX_BODY_BYTES`).
pub fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_any(Lenient::<T>(std::marker::PhantomData))
}

struct Lenient<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Lenient<T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = a.next_element::<serde_json::Value>()? {
            if v.is_object() {
                if let Ok(t) = T::deserialize(v) {
                    out.push(t);
                }
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Vec<T>, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
}

/// An optional object read leniently: anything but an object of the
/// right shape is absent.
fn lenient_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(v.is_object().then(|| T::deserialize(v).ok()).flatten())
}

fn value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<EntityValue>, D::Error> {
    lenient_object(d)
}

fn data<'de, D: Deserializer<'de>>(d: D) -> Result<Option<EntityData>, D::Error> {
    lenient_object(d)
}

fn video_info<'de, D: Deserializer<'de>>(d: D) -> Result<Option<VideoInfo>, D::Error> {
    lenient_object(d)
}

/// `entityMap`: FxTwitter's list of `{key, value}`, or Draft.js's object
/// `{key: value}` (read into the same entries); anything else is empty.
pub fn entity_map<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ArticleEntity>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        v @ serde_json::Value::Array(_) => list(v).unwrap_or_default(),
        serde_json::Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| ArticleEntity {
                key: Some(Id(k)),
                value: v
                    .is_object()
                    .then(|| EntityValue::deserialize(v).ok())
                    .flatten(),
            })
            .collect(),
        _ => Vec::new(),
    })
}
