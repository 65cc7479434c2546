//! The options of issue 31 ("what readers ask for next"): a profile's
//! `feed`, `with_replies` and `since`, and a post's `lang`.

use super::{Kind, ProfileFeed, Prop};

/// True for a `lang`: 2 ASCII letters, optionally a hyphen and 2 more.
pub fn is_lang(s: &str) -> bool {
    let b = s.as_bytes();
    let letters = |r: &[u8]| r.iter().all(u8::is_ascii_alphabetic);
    match b.len() {
        2 => letters(b),
        5 => letters(&b[..2]) && b[2] == b'-' && letters(&b[3..]),
        _ => false,
    }
}

/// `lang` of `x_md_get_post`: FxTwitter translates a post only into a
/// code of 2 or 5 characters (`processor.ts`: "a valid ISO 639-1 or ISO
/// 639-5 code"); xmd takes the letter forms of those lengths.
pub const LANG: Prop = Prop {
    name: "lang",
    kind: Kind::Str {
        min: 2,
        max: 5,
        pattern: Some("^[A-Za-z]{2}(-[A-Za-z]{2})?$"),
        check: Some(is_lang),
        what: "a language code: 2 letters (ISO 639-1, e.g. \"en\", \"es\") or 2 letters, a hyphen and 2 letters (e.g. \"zh-cn\", \"pt-br\")",
    },
    description: "Translate the requested post into this language (ISO 639-1, e.g. \"en\", or \"zh-cn\"), as FxTwitter does (X's or Grok's translation): shown under the original with the source language named. No translation (same language, unknown language, none available) is a note, not an error.",
};

/// `feed` of `x_md_get_profile`.
pub const PROFILE_FEED: Prop = Prop {
    name: "feed",
    kind: Kind::Enum(ProfileFeed::NAMES),
    description: "posts (default): the account's latest posts (originals; with with_replies=true its replies too); media: its posts with photos or videos (the profile's Media tab); articles: its X Articles.",
};
/// `with_replies` of `x_md_get_profile`.
pub const WITH_REPLIES: Prop = Prop {
    name: "with_replies",
    kind: Kind::Bool,
    description: "true adds the account's replies to its posts (each marked `Replying to @…`); feed=posts only (default false).",
};
/// `since` of `x_md_get_profile`.
pub const SINCE: Prop = Prop {
    name: "since",
    kind: Kind::Since,
    description: "Only posts newer than this Unix time: seconds, or milliseconds from 1e12 on (e.g. 1786464342). A number, or a string as FxTwitter reads it. No newer post gives an empty list with a note, not an error.",
};
