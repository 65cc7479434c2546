//! An FxTwitter `APITwitterStatus` or tombstone (upstream.md §1.3, §1.6),
//! the list page (`results` + `cursor`) and the envelopes.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;

use super::attached::{Article, Card, CommunityNote, Poll};
use super::media::Media;
use super::parse::{
    article, card, community_note, id, media, opt_rows, poll, quote, raw_text, reposted_by,
};
use super::scalar::{count, opt_bool, opt_number, opt_text, opt_word, text, Count, Id, Word};
use super::user::{author, RawText, User};

/// A status, or a tombstone (`type: "tombstone"`: a deleted, suspended,
/// private or withheld post, with `reason` and `message`).
///
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a status object")]
pub struct Status {
    /// `status` or `tombstone`.
    #[serde(
        rename = "type",
        deserialize_with = "opt_word",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Word>,
    /// The post id (exact, whether sent as a string or a number).
    #[serde(deserialize_with = "id", skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// The permalink.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The text, t.co links expanded (empty when missing).
    #[serde(deserialize_with = "text")]
    pub text: String,
    /// The text as X sent it, with facets (kept only with `full`).
    #[serde(deserialize_with = "raw_text", skip_serializing_if = "Option::is_none")]
    pub raw_text: Option<RawText>,
    /// The author.
    #[serde(deserialize_with = "author", skip_serializing_if = "Option::is_none")]
    pub author: Option<Box<User>>,
    /// Replies.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub replies: Count,
    /// Reposts.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub reposts: Count,
    /// Reposts under their older name (filled from `reposts`).
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub retweets: Count,
    /// Likes.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub likes: Count,
    /// Bookmarks.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub bookmarks: Count,
    /// Quotes.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub quotes: Count,
    /// Views.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub views: Count,
    /// `Wed Aug 12 08:14:20 +0000 2026`.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Unix seconds, as sent.
    #[serde(
        deserialize_with = "opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_timestamp: Option<Number>,
    /// FxTwitter's embed kind (`tweet`).
    #[serde(deserialize_with = "opt_word", skip_serializing_if = "Option::is_none")]
    pub embed_card: Option<Word>,
    /// Marked sensitive.
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub possibly_sensitive: Option<bool>,
    /// A long post (note tweet).
    #[serde(deserialize_with = "opt_bool", skip_serializing_if = "Option::is_none")]
    pub is_note_tweet: Option<bool>,
    /// The language X detected.
    #[serde(deserialize_with = "opt_word", skip_serializing_if = "Option::is_none")]
    pub lang: Option<Word>,
    /// The client that posted it.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `twitter`.
    #[serde(deserialize_with = "opt_word", skip_serializing_if = "Option::is_none")]
    pub provider: Option<Word>,
    /// The post it replies to: `{screen_name, status}` (v2), as sent.
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub replying_to: Option<Box<RawValue>>,
    /// The legacy form: `[status id]` or the id itself, as sent.
    #[serde(
        deserialize_with = "super::parse::raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub replying_to_status: Option<Box<RawValue>>,
    /// Who reposted it (a timeline row that is a repost).
    #[serde(
        deserialize_with = "reposted_by",
        skip_serializing_if = "Option::is_none"
    )]
    pub reposted_by: Option<Box<User>>,
    /// Photos, videos, GIFs (dropped when empty).
    #[serde(deserialize_with = "media", skip_serializing_if = "Option::is_none")]
    pub media: Option<Box<Media>>,
    /// The quoted post (a status or a tombstone).
    #[serde(deserialize_with = "quote", skip_serializing_if = "Option::is_none")]
    pub quote: Option<Box<Status>>,
    /// A poll.
    #[serde(deserialize_with = "poll", skip_serializing_if = "Option::is_none")]
    pub poll: Option<Box<Poll>>,
    /// A link card.
    #[serde(deserialize_with = "card", skip_serializing_if = "Option::is_none")]
    pub card: Option<Box<Card>>,
    /// An X article.
    #[serde(deserialize_with = "article", skip_serializing_if = "Option::is_none")]
    pub article: Option<Box<Article>>,
    /// A Community Note.
    #[serde(
        deserialize_with = "community_note",
        skip_serializing_if = "Option::is_none"
    )]
    pub community_note: Option<Box<CommunityNote>>,
    /// FxTwitter's translation of the text (only asked with `?lang=`).
    #[serde(
        deserialize_with = "super::parse::translation",
        skip_serializing_if = "Option::is_none"
    )]
    pub translation: Option<Box<Translation>>,
    /// xmd's role for the post in an `x_md_get_post` result (`parent`,
    /// `post`, `thread`, `reply`); never read from the upstream.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub context: Option<&'static str>,
    /// Set by xmd when the post's text was cut to fit the result budget;
    /// never read from the upstream.
    #[serde(skip_deserializing, skip_serializing_if = "std::ops::Not::not")]
    pub text_truncated: bool,
    /// True when the source sent only the start of the post's text: the
    /// syndication fallback's answer for a long post (it carries
    /// `note_tweet`). Set by the syndication mapping; FxTwitter sends the
    /// whole text.
    #[serde(
        deserialize_with = "super::scalar::flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub text_partial: bool,
    /// A tombstone's reason (`deleted`, `suspended`, …).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A tombstone's message.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An FxTwitter `APITranslate` (`packages/atmosphere/src/types/api-schemas.ts`):
/// the text in `target_lang`, from `source_lang` (`source_lang_en` its
/// English name), by `provider` (`grok`, …).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a translation object")]
pub struct Translation {
    /// The translated text.
    #[serde(deserialize_with = "text")]
    pub text: String,
    /// The language translated from (`ja`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub source_lang: Option<String>,
    /// Its English name (`Japanese`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub source_lang_en: Option<String>,
    /// The language translated into (`en`).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub target_lang: Option<String>,
    /// Who translated it.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl super::parse::PastQuoteNesting for Box<Status> {
    fn past_quote_nesting() -> Self {
        Box::new(Status {
            kind: Some("tombstone".into()),
            reason: Some(super::parse::PAST_QUOTE_NESTING.into()),
            message: Some(super::parse::past_quote_nesting_message()),
            ..Status::default()
        })
    }
}

impl Status {
    /// True for a tombstone.
    pub fn is_tombstone(&self) -> bool {
        self.kind.as_deref() == Some("tombstone")
    }

    /// True for a status with an id (not a tombstone).
    pub fn is_status(&self) -> bool {
        !self.is_tombstone() && self.id.is_some()
    }

    /// True for a row of a posts list (quotes, search): a status whose id
    /// is a post id ([`crate::x::url::is_id`]: the model reads any string as
    /// an [`Id`]) and whose `type`, when sent, is `status`; when it names
    /// an author, a linkable handle. A `profile` row or one with an id like
    /// `"abc"` is skipped, never shown as a post.
    pub fn is_post_row(&self) -> bool {
        self.is_status()
            && matches!(self.kind.as_deref(), None | Some("status"))
            && self.id().is_some_and(crate::x::url::is_id)
            && self.handle().is_none_or(super::user::is_screen_name)
    }

    /// The id, if any.
    pub fn id(&self) -> Option<&str> {
        self.id.as_ref().map(Id::as_str)
    }

    /// The author's handle, if any.
    pub fn handle(&self) -> Option<&str> {
        self.author.as_ref()?.screen_name.as_deref()
    }

    /// True when the post replies to another (either form, non-empty).
    pub fn is_reply(&self) -> bool {
        non_empty(self.replying_to.as_deref()) || non_empty(self.replying_to_status.as_deref())
    }

    /// The handle the post replies to, when sent: `replying_to.screen_name`
    /// (v2), the legacy handle string, or the first of a legacy list;
    /// without `@`, non-empty.
    pub fn replying_to_handle(&self) -> Option<String> {
        use serde_json::Value;
        let v: Value = serde_json::from_str(self.replying_to.as_deref()?.get()).ok()?;
        let h = match &v {
            Value::Object(o) => o.get("screen_name").and_then(Value::as_str),
            Value::String(h) => Some(h.as_str()),
            Value::Array(a) => a.first().and_then(Value::as_str),
            _ => None,
        }?;
        let h = h.trim().trim_start_matches('@');
        (!h.is_empty()).then(|| h.to_string())
    }

    /// The author's id, if any.
    pub fn author_id(&self) -> Option<&str> {
        self.author.as_ref()?.id.as_ref().map(Id::as_str)
    }

    /// The parent post id: `replying_to.status` for the v2 object form,
    /// else the first of the legacy `replying_to_status` array. Only digit
    /// strings count.
    pub fn parent_id(&self) -> Option<String> {
        use serde_json::Value;
        let read = |r: Option<&RawValue>| -> Option<Value> { serde_json::from_str(r?.get()).ok() };
        let p = match read(self.replying_to.as_deref()) {
            Some(Value::Object(o)) => o.get("status").and_then(Value::as_str).map(str::to_string),
            _ => None,
        };
        let p = p.or_else(|| match read(self.replying_to_status.as_deref()) {
            Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_string),
            Some(Value::String(s)) => Some(s),
            _ => None,
        });
        p.filter(|p| crate::x::url::is_id(p))
    }

    /// The `(reason, message)` of a tombstone.
    pub fn tombstone(&self) -> Option<(Option<&str>, Option<&str>)> {
        self.is_tombstone()
            .then_some((self.reason.as_deref(), self.message.as_deref()))
    }

    /// The link: `url`, else built from handle and id.
    pub fn link(&self) -> Option<String> {
        if let Some(u) = self.url.as_deref().filter(|u| !u.is_empty()) {
            return Some(u.to_string());
        }
        let i = self.id()?;
        Some(match self.handle() {
            Some(h) if !h.is_empty() => format!("https://x.com/{h}/status/{i}"),
            _ => format!("https://x.com/i/status/{i}"),
        })
    }

    /// Normalises as the `Value` path does ([`super::value::normalize`]):
    /// `retweets` from `reposts`, empty `media` dropped, media items
    /// amended, recursively into `quote` (to depth 8). Tombstones are
    /// left as they are.
    pub fn normalize(&mut self, depth: usize) {
        if self.is_tombstone() || depth > 8 {
            return;
        }
        if self.retweets.is_none() {
            self.retweets = self.reposts;
        }
        if self.media.as_deref().is_some_and(Media::is_empty) {
            self.media = None;
        }
        if let Some(m) = &mut self.media {
            m.normalize();
        }
        if let Some(q) = &mut self.quote {
            q.normalize(depth + 1);
        }
    }

    /// Fills `url` (post and quote) so every post carries a link.
    pub fn fill_url(&mut self, fallback: Option<&str>) {
        // A non-empty `url` is its own link: kept, not copied.
        if self.url.as_deref().is_none_or(str::is_empty) {
            let url = self
                .link()
                .or_else(|| fallback.map(str::to_string))
                .unwrap_or_else(|| super::value::MISSING_IDENTITY.into());
            self.url = Some(url);
        }
        if let Some(q) = &mut self.quote {
            if q.url.is_none() {
                q.url = q.link();
            }
        }
    }
}

/// True for a present, non-empty object, array or string (as sent). Read
/// from the text, which is valid JSON: a string is empty only as `""`, an
/// object or array only with nothing but whitespace inside its brackets.
fn non_empty(raw: Option<&RawValue>) -> bool {
    let Some(r) = raw else { return false };
    let t = r
        .get()
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .as_bytes();
    let inside_is_blank = |close: u8| {
        t[1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == close)
    };
    match t.first() {
        Some(b'{') => !inside_is_blank(b'}'),
        Some(b'[') => !inside_is_blank(b']'),
        Some(b'"') => t.len() > 2,
        _ => false,
    }
}

/// A list page (`/2/profile/{h}/statuses`, followers, search):
/// `results` and `cursor`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a list page object")]
pub struct Page<T> {
    /// The rows; a row that is not an object is skipped. `None` when the
    /// answer has no `results` member (a shape error, never an empty list).
    #[serde(
        deserialize_with = "opt_rows",
        bound(deserialize = "T: Deserialize<'de>")
    )]
    pub results: Option<Vec<T>>,
    /// Where the neighbouring pages start.
    pub cursor: Option<PageCursor>,
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
}

/// A page's `cursor`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a cursor object")]
pub struct PageCursor {
    /// The newer page.
    #[serde(deserialize_with = "opt_text")]
    pub top: Option<String>,
    /// The older page.
    #[serde(deserialize_with = "opt_text")]
    pub bottom: Option<String>,
}

impl<T> Page<T> {
    /// `cursor.bottom`, when a non-empty string.
    pub fn bottom(&self) -> Option<&str> {
        self.cursor
            .as_ref()?
            .bottom
            .as_deref()
            .filter(|b| !b.is_empty())
    }
}

/// The `/2/profile/{handle}` answer's `user`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a profile answer object")]
pub struct ProfileEnvelope {
    /// The account.
    #[serde(deserialize_with = "super::parse::user")]
    pub user: Option<User>,
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
    /// Why the account is unavailable (`suspended`).
    #[serde(deserialize_with = "opt_text")]
    pub reason: Option<String>,
}

/// The `/2/profile/{handle}/about` answer (`ProfileAboutAPIResponse`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "an about answer object")]
pub struct AboutEnvelope {
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
    /// The "About this account" data; absent when X has none.
    #[serde(deserialize_with = "super::parse::about_account")]
    pub about_account: Option<super::user::AboutAccount>,
}

/// The `/2/thread/{id}` answer: the author's thread around the post.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a thread answer object")]
pub struct ThreadEnvelope {
    /// The posts in reading order (a row that is not an object is
    /// skipped).
    #[serde(deserialize_with = "super::parse::thread")]
    pub thread: Vec<Status>,
    /// The requested post.
    #[serde(deserialize_with = "super::parse::status")]
    pub status: Option<Status>,
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
}

/// The `/2/conversation/{id}` answer: the replies to a post, under the
/// first of `replies`, `results`, `tweets`, `conversation` present.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a conversation answer object")]
pub struct ConversationEnvelope {
    /// The replies.
    #[serde(deserialize_with = "super::parse::replies")]
    pub replies: Option<Vec<Status>>,
    /// The replies, as some answers name them.
    #[serde(deserialize_with = "super::parse::results")]
    pub results: Option<Vec<Status>>,
    /// The replies, as some answers name them.
    #[serde(deserialize_with = "super::parse::tweets")]
    pub tweets: Option<Vec<Status>>,
    /// The replies, as some answers name them.
    #[serde(deserialize_with = "super::parse::conversation")]
    pub conversation: Option<Vec<Status>>,
    /// The requested post.
    #[serde(deserialize_with = "super::parse::status")]
    pub status: Option<Status>,
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
}

impl ConversationEnvelope {
    /// The replies: the first list present.
    pub fn into_replies(self) -> Vec<Status> {
        self.replies
            .or(self.results)
            .or(self.tweets)
            .or(self.conversation)
            .unwrap_or_default()
    }
}

/// The `/2/status/{id}` answer's `status` (or v1 `tweet`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a status answer object")]
pub struct StatusEnvelope {
    /// The post.
    #[serde(deserialize_with = "super::parse::status")]
    pub status: Option<Status>,
    /// The post (v1 API).
    #[serde(deserialize_with = "super::parse::tweet")]
    pub tweet: Option<Status>,
    /// The answer's `code` (an error when 400 or more).
    #[serde(deserialize_with = "count")]
    pub code: Count,
    /// The answer's `message`.
    #[serde(deserialize_with = "opt_text")]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// The oracle: the value read whole, as `non_empty` used to.
    fn read_whole(r: &RawValue) -> bool {
        match serde_json::from_str::<Value>(r.get()) {
            Ok(Value::Object(o)) => !o.is_empty(),
            Ok(Value::Array(a)) => !a.is_empty(),
            Ok(Value::String(s)) => !s.is_empty(),
            _ => false,
        }
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop_oneof![".{0,3}", "[\"\\\\{}\\[\\] ]{0,3}"].prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((".{0,2}", inner), 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn non_empty_at_the_edges() {
        let raw = |t: &str| RawValue::from_string(t.to_string()).unwrap();
        for (t, expected) in [
            (r#""a""#, true),
            (r#""""#, false),
            (r#""\u0000""#, true),
            ("{ \n }", false),
            (r#"{"":0}"#, true),
            ("[\t]", false),
            ("[[]]", true),
            ("null", false),
            ("0", false),
            ("false", false),
        ] {
            assert_eq!(non_empty(Some(&raw(t))), expected, "{t}");
        }
        assert!(!non_empty(None));
    }

    proptest! {
        /// Any value, compact or pretty, with blank space inside empty
        /// brackets: the text says what the whole read says.
        #[test]
        fn non_empty_reads_the_text_as_the_value_says(
            v in value(),
            pretty in any::<bool>(),
            pad in "[ \t\r\n]{0,3}",
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            let text = text.replace("{}", &format!("{{{pad}}}")).replace("[]", &format!("[{pad}]"));
            // (Brackets inside a string may have taken a line break: not JSON.)
            let raw = RawValue::from_string(text);
            prop_assume!(raw.is_ok());
            let raw = raw.unwrap();
            prop_assert_eq!(non_empty(Some(&raw)), read_whole(&raw));
        }
    }
}
