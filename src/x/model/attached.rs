//! What an author attaches beside a status's text (upstream.md §1.3):
//! a poll, a link card, an X article and a Community Note, typed after
//! FxEmbed's `APIPollSchema`, `APITwitterCommunityNoteSchema` (with the
//! legacy Birdwatch `entities`) and `TwitterArticleSchema`, reading only
//! what xmd shows or passes on.
//!
//! Tolerant like the rest of the model: unknown fields are ignored,
//! missing or `null` fields are absent, a loose leaf of the wrong type is
//! absent; an object or list of the wrong shape is an
//! `upstream_invalid_response` naming it (`` `poll.choices`: … ``).

use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::article::{entity_map, list, ArticleBlock, ArticleEntity, ArticleMedia};
use super::parse::{blocks, choices, content, cover_media, entities, facets, note_ref};
use super::scalar::{count, opt_number, opt_text, Count};
use super::user::Facet;

/// A poll (`APIPoll`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a poll object")]
pub struct Poll {
    /// The choices, in order.
    #[serde(deserialize_with = "choices", skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<PollChoice>>,
    /// Votes cast in all.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub total_votes: Count,
    /// When voting closes (ISO 8601).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    /// `6 hours left`, `Final results`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub time_left_en: Option<String>,
}

impl Poll {
    /// The choices (none when absent).
    pub fn choices(&self) -> &[PollChoice] {
        self.choices.as_deref().unwrap_or_default()
    }
}

/// One choice of a [`Poll`] (`APIPollChoice`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a poll choice object")]
pub struct PollChoice {
    /// What the choice says.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Votes for it.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub count: Count,
    /// Its share of the votes in percent, as sent (`33.3`).
    #[serde(
        deserialize_with = "opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub percentage: Option<Number>,
}

/// A link card: the page a post links to, as X previews it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a card object")]
pub struct Card {
    /// The page's title.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The page's description.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The link.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The link's site.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The preview image, as sent: FxTwitter's `{url, width, height, alt}`
    /// (`APICard.image`), or a URL string.
    /// Anything else (a number, a list) is absent.
    #[serde(
        deserialize_with = "card_image",
        skip_serializing_if = "Option::is_none"
    )]
    pub image: Option<serde_json::Value>,
    /// The card's kind (`summary_large_image`, …).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub card_name: Option<String>,
}

/// A card's `image`: an object or a URL string, else absent.
fn card_image<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    use serde_json::Value;
    Ok(match Value::deserialize(d)? {
        v @ (Value::Object(_) | Value::String(_)) => Some(v),
        _ => None,
    })
}

/// An X article (`TwitterArticle`): title, preview, cover and the
/// Draft.js body blocks.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an article object")]
pub struct Article {
    /// The article id.
    #[serde(
        deserialize_with = "super::parse::id",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<super::scalar::Id>,
    /// The title.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The first lines, shown when the body is not available.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub preview_text: Option<String>,
    /// When it was published.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When it was last changed.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<String>,
    /// The cover image.
    #[serde(
        deserialize_with = "cover_media",
        skip_serializing_if = "Option::is_none"
    )]
    pub cover_media: Option<ArticleMedia>,
    /// The body.
    #[serde(deserialize_with = "content", skip_serializing_if = "Option::is_none")]
    pub content: Option<ArticleContent>,
    /// The images and videos the body's `MEDIA` entities name.
    #[serde(deserialize_with = "list", skip_serializing_if = "Vec::is_empty")]
    pub media_entities: Vec<ArticleMedia>,
}

impl Article {
    /// The cover image's URL, if any.
    pub fn cover_url(&self) -> Option<&str> {
        self.cover_media
            .as_ref()?
            .media_info
            .as_ref()?
            .original_img_url
            .as_deref()
    }

    /// The body blocks (none when absent).
    pub fn blocks(&self) -> &[ArticleBlock] {
        self.content
            .as_ref()
            .and_then(|c| c.blocks.as_deref())
            .unwrap_or_default()
    }
}

/// An article's `content`: the Draft.js body.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an article content object")]
pub struct ArticleContent {
    /// The body, one Draft.js block per paragraph, heading, list item,
    /// quote, code block or embed.
    #[serde(deserialize_with = "blocks", skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<ArticleBlock>>,
    /// What the blocks' `entityRanges` point at.
    #[serde(
        rename = "entityMap",
        deserialize_with = "entity_map",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub entity_map: Vec<ArticleEntity>,
}

/// A Community Note: its text with `facets` (FxTwitter v2), or with the
/// legacy Birdwatch `entities`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a community note object")]
pub struct CommunityNote {
    /// The note, t.co links unexpanded.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Links in the text (like `raw_text.facets`).
    #[serde(deserialize_with = "facets", skip_serializing_if = "Option::is_none")]
    pub facets: Option<Vec<Facet>>,
    /// Legacy Birdwatch entities (`ref.url`).
    #[serde(deserialize_with = "entities", skip_serializing_if = "Option::is_none")]
    pub entities: Option<Vec<NoteEntity>>,
}

/// A legacy Birdwatch entity of a [`CommunityNote`].
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a note entity object")]
pub struct NoteEntity {
    /// What it points at.
    #[serde(
        rename = "ref",
        deserialize_with = "note_ref",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference: Option<NoteRef>,
}

/// A [`NoteEntity`]'s `ref`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a note entity ref object")]
pub struct NoteRef {
    /// The cited link.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
