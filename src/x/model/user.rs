//! An FxTwitter `APIUser` (upstream.md §1.4): a post's author, a profile,
//! a row of a followers/following list or of the users search.

use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize};

use super::parse::{
    authors_as_identity, id, in_field, raw_description, verification, website, ObjectOrNull,
};
use super::scalar::{count, opt_bool, opt_text, opt_word, Count, Id, Word};

/// A user. Fields may be missing on partial users (a post's `author` in
/// some paths carries only `screen_name` and `name`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a user object")]
pub struct User {
    /// `"profile"` or `"user"` when sent.
    #[serde(
        rename = "type",
        deserialize_with = "opt_word",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Word>,
    /// The account id.
    #[serde(deserialize_with = "id", skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// The handle, without `@`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub screen_name: Option<String>,
    /// The display name.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `https://x.com/<handle>`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The bio, t.co links expanded by FxTwitter.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The bio as X sent it, with its link facets (kept only with `full`).
    #[serde(
        deserialize_with = "raw_description",
        skip_serializing_if = "Option::is_none"
    )]
    pub raw_description: Option<RawText>,
    /// The location the account states.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Followers.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub followers: Count,
    /// Accounts followed.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub following: Count,
    /// Likes given.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub likes: Count,
    /// Media posted.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub media_count: Count,
    /// Posts.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub statuses: Count,
    /// True for a protected account.
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub protected: Option<bool>,
    /// The banner image.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub banner_url: Option<String>,
    /// The avatar image.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub avatar_url: Option<String>,
    /// When the account was created (`Tue Feb 14 09:30:11 +0000 2023`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub joined: Option<String>,
    /// The website the account links.
    #[serde(deserialize_with = "website", skip_serializing_if = "Option::is_none")]
    pub website: Option<Website>,
    /// The verification badge.
    #[serde(
        deserialize_with = "verification",
        skip_serializing_if = "Option::is_none"
    )]
    pub verification: Option<Verification>,
}

/// The fields of a [`User`] shown only with `full`, while taken out.
#[derive(Debug)]
pub struct FullOnly(Option<RawText>);

/// True for a handle a row may link (`https://x.com/<handle>`): one or
/// more ASCII letters, digits or underscores. No length cap: X has served
/// legacy handles longer than today's 15.
pub fn is_screen_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl User {
    /// This account without `raw_description` (the upstream's second copy
    /// of the bio) unless `full`, as every tool serves accounts.
    pub fn lean(mut self, full: bool) -> User {
        drop(self.take_full_only(full));
        self
    }

    /// Takes out what [`User::lean`] leaves out, for a caller that still
    /// needs it afterwards ([`User::put_back`]): the profile serializes
    /// the lean account once, then renders its bio's links with the facets.
    pub fn take_full_only(&mut self, full: bool) -> FullOnly {
        FullOnly(if full {
            None
        } else {
            self.raw_description.take()
        })
    }

    /// Puts back what [`User::take_full_only`] took.
    pub fn put_back(&mut self, taken: FullOnly) {
        if let Some(r) = taken.0 {
            self.raw_description = Some(r);
        }
    }

    /// True for a row of an accounts list (followers, following, reposts,
    /// the users search): an account with a linkable handle, not a row of
    /// another kind (`status`, `tombstone`). Other rows are skipped, never
    /// shown as `[@ (@)](https://x.com/)`.
    pub fn is_account_row(&self) -> bool {
        !matches!(self.kind.as_deref(), Some("status" | "tombstone"))
            && self.handle().is_some_and(is_screen_name)
    }

    /// The handle, when non-empty.
    pub fn handle(&self) -> Option<&str> {
        self.screen_name.as_deref().filter(|h| !h.is_empty())
    }

    /// The same account reduced to what identifies it (`id`,
    /// `screen_name`, `name`): a list row's author. Moved, not copied.
    pub fn into_identity(self) -> User {
        User {
            id: self.id,
            screen_name: self.screen_name,
            name: self.name,
            ..User::default()
        }
    }
}

/// A user's `website`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a website object")]
pub struct Website {
    /// The expanded link.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The link as shown.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub display_url: Option<String>,
}

/// A user's `verification`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a verification object")]
pub struct Verification {
    /// True when verified.
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// When.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<String>,
    /// `individual`, `business`, `government`.
    #[serde(
        rename = "type",
        deserialize_with = "opt_word",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Word>,
}

/// Text as X sent it (`raw_text` of a status, `raw_description` of a
/// user), with its facets.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a raw text object")]
pub struct RawText {
    /// The text, t.co links unexpanded.
    #[serde(deserialize_with = "super::scalar::text")]
    pub text: String,
    /// `[start, end]` of the shown part, when sent.
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub display_text_range: Option<Box<serde_json::value::RawValue>>,
    /// Links, mentions, media links in the text.
    #[serde(deserialize_with = "super::parse::facets")]
    pub facets: Vec<Facet>,
}

/// One facet of a [`RawText`].
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a facet object")]
pub struct Facet {
    /// `url`, `media`, `mention`, `hashtag`, …
    #[serde(
        rename = "type",
        deserialize_with = "opt_word",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Word>,
    /// `[start, end)` in UTF-16 code units (code points in a note tweet);
    /// used only where the text there is `original` ([`super::expand`]).
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub indices: Option<Box<serde_json::value::RawValue>>,
    /// The text in the raw string (a t.co link).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// What it stands for (the expanded link).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// How X shows it.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
}

/// A post's author when read as [`super::parse::Authors::Identity`]: the fields read as
/// [`User`] reads them, the rest skipped.
#[derive(Deserialize, Default)]
#[serde(default, expecting = "a user object")]
struct Identity {
    #[serde(deserialize_with = "id")]
    id: Option<crate::x::model::scalar::Id>,
    #[serde(deserialize_with = "crate::x::model::scalar::opt_text")]
    screen_name: Option<String>,
    #[serde(deserialize_with = "crate::x::model::scalar::opt_text")]
    name: Option<String>,
}

/// Deserializes the optional object `author` (a user object or `null`),
/// naming it in errors; read as [`super::parse::Authors`] says outside quotes.
pub fn author<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<User>>, D::Error> {
    if authors_as_identity() {
        let who = d.deserialize_any(ObjectOrNull::<Identity>("a user object", PhantomData));
        return in_field("author", who).map(|who| {
            who.map(|i| {
                Box::new(User {
                    id: i.id,
                    screen_name: i.screen_name,
                    name: i.name,
                    ..User::default()
                })
            })
        });
    }
    in_field(
        "author",
        d.deserialize_any(ObjectOrNull::<Box<User>>("a user object", PhantomData)),
    )
}

/// X's "About this account" (`APIAboutAccount`, FxEmbed
/// `packages/atmosphere/src/types/api-schemas.ts`; built by
/// `mergeAboutAccountData` in `providers/twitter/profile.ts`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "an about-account object")]
pub struct AboutAccount {
    /// The country or region the account is based in.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub based_in: Option<String>,
    /// Whether X judges that location accurate.
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub location_accurate: Option<bool>,
    /// Whether the country the account was created in is accurate.
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub created_country_accurate: Option<bool>,
    /// How the account connects (e.g. an app store's country).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// How often the handle changed, and when last.
    #[serde(
        deserialize_with = "super::parse::username_changes",
        skip_serializing_if = "Option::is_none"
    )]
    pub username_changes: Option<UsernameChanges>,
}

/// `about_account.username_changes`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a username changes object")]
pub struct UsernameChanges {
    /// How many times.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub count: Count,
    /// When last (ISO 8601), `null` when X gives no date.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub last_changed_at: Option<String>,
}
