//! The syndication endpoint's Tweet object, typed: the Tweet (or quoted
//! Tweet, or tombstone), its user, entities and media, as the public type
//! definitions of vercel/react-tweet give them.

use serde::Deserialize;
use serde_json::Value;

/// A Tweet, a quoted Tweet or a `TweetTombstone`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Tweet {
    /// `Tweet` or `TweetTombstone`.
    #[serde(rename = "__typename")]
    pub typename: Option<String>,
    /// The post id.
    pub id_str: Option<String>,
    /// The text with its entities' raw t.co links, HTML-escaped.
    pub text: Option<String>,
    /// Code-point range of the visible text.
    pub display_text_range: Option<Vec<u64>>,
    /// ISO 8601 with milliseconds, e.g. `2026-08-10T12:41:03.000Z`.
    pub created_at: Option<String>,
    /// Language code.
    pub lang: Option<String>,
    /// Likes.
    pub favorite_count: Option<u64>,
    /// Replies of the main post.
    pub conversation_count: Option<u64>,
    /// Replies of a quoted or parent post.
    pub reply_count: Option<u64>,
    /// Reposts of a quoted or parent post.
    pub retweet_count: Option<u64>,
    /// Whether X marks the media sensitive.
    pub possibly_sensitive: Option<bool>,
    /// The author.
    pub user: Option<User>,
    /// Links, mentions, hashtags, media links.
    pub entities: Option<Entities>,
    /// The attached media, with sizes, alt text and video variants.
    #[serde(rename = "mediaDetails")]
    pub media_details: Option<Vec<MediaDetail>>,
    /// Photos in the embed's own shape (used when `mediaDetails` is absent).
    pub photos: Option<Vec<Photo>>,
    /// The embed's video summary (its `durationMs` is the video length).
    pub video: Option<Video>,
    /// The quoted post (read to
    /// [`crate::x::model::parse::MAX_QUOTE_NESTING`] levels, as FxTwitter's
    /// `quote`; one deeper stands as a tombstone that says so).
    #[serde(deserialize_with = "crate::x::model::parse::quote")]
    pub quoted_tweet: Option<Box<Tweet>>,
    /// Set by xmd on the stand-in for a quote nested past
    /// [`crate::x::model::parse::MAX_QUOTE_NESTING`]; never read.
    #[serde(skip)]
    pub past_quote_nesting: bool,
    /// The handle replied to.
    pub in_reply_to_screen_name: Option<String>,
    /// The post replied to.
    pub in_reply_to_status_id_str: Option<String>,
    /// A tombstone's text (`{"text": {"text": "…"}}`).
    pub tombstone: Option<Value>,
    /// The post replied to (`id_str`, `user.screen_name` read), when the
    /// `in_reply_to_*` fields are missing.
    pub parent: Option<Value>,
    /// A link card or a poll (`card.rs`).
    pub card: Option<Value>,
    /// An X article (title, preview, cover).
    pub article: Option<Value>,
    /// Present (`{"id": …}`) on a long post, whose `text` is then only
    /// its first ~270 characters (react-tweet `types/tweet.ts`).
    pub note_tweet: Option<Value>,
}

/// `TweetUser`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct User {
    /// Account id.
    pub id_str: Option<String>,
    /// Display name.
    pub name: Option<String>,
    /// Handle.
    pub screen_name: Option<String>,
    /// Avatar.
    pub profile_image_url_https: Option<String>,
    /// Legacy verification.
    pub verified: Option<bool>,
    /// `Business` or `Government`.
    pub verified_type: Option<String>,
    /// Paid verification.
    pub is_blue_verified: Option<bool>,
}

/// `TweetEntities` (only what the mapping reads).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Entities {
    /// Links.
    pub urls: Vec<UrlEntity>,
    /// Media links (removed from the text).
    pub media: Vec<UrlEntity>,
}

/// `UrlEntity` / `MediaEntity`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct UrlEntity {
    /// The t.co link in the text.
    pub url: Option<String>,
    /// Where it leads.
    pub expanded_url: Option<String>,
    /// `[start, end)` of `url` in the text (code points or UTF-16 code
    /// units; checked against the text before use).
    pub indices: Option<Value>,
}

/// `MediaDetails` (photo, video or animated GIF).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MediaDetail {
    /// `photo`, `video` or `animated_gif`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The image (a video's poster).
    pub media_url_https: Option<String>,
    /// Alt text (of a photo, a GIF or a video).
    pub ext_alt_text: Option<String>,
    /// Pixel size.
    pub original_info: Option<OriginalInfo>,
    /// Variants of a video or GIF.
    pub video_info: Option<VideoInfo>,
}

/// `original_info`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OriginalInfo {
    /// Pixels.
    pub width: Option<u64>,
    /// Pixels.
    pub height: Option<u64>,
}

/// `VideoInfo`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoInfo {
    /// Length in milliseconds (sent by the endpoint, not in react-tweet's
    /// types).
    pub duration_millis: Option<u64>,
    /// The encodings.
    pub variants: Vec<Variant>,
}

/// One video encoding.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Variant {
    /// Bits per second (MP4 only).
    pub bitrate: Option<u64>,
    /// `video/mp4` or `application/x-mpegURL`.
    pub content_type: Option<String>,
    /// Where it is.
    pub url: Option<String>,
}

/// `TweetPhoto`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Photo {
    /// The image.
    pub url: Option<String>,
    /// Pixels.
    pub width: Option<u64>,
    /// Pixels.
    pub height: Option<u64>,
}

/// `TweetVideo` (only its length).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Video {
    /// Length in milliseconds.
    #[serde(rename = "durationMs")]
    pub duration_ms: Option<u64>,
}

impl crate::x::model::parse::PastQuoteNesting for Box<Tweet> {
    fn past_quote_nesting() -> Self {
        Box::new(Tweet {
            typename: Some("TweetTombstone".into()),
            past_quote_nesting: true,
            ..Tweet::default()
        })
    }
}

impl Tweet {
    /// True for a deleted, withheld or otherwise unavailable post.
    pub fn is_tombstone(&self) -> bool {
        self.typename.as_deref() == Some("TweetTombstone") || self.tombstone.is_some()
    }

    /// The tombstone's text, if any.
    pub fn tombstone_text(&self) -> Option<&str> {
        self.tombstone
            .as_ref()?
            .pointer("/text/text")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
    }
}
