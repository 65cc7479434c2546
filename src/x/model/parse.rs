//! Reading an upstream body into the model.
//!
//! - Lone UTF-16 surrogate escapes (`"\ud800"` without its pair), which
//!   serde_json rejects, become `\ufffd` (U+FFFD), so one odd character
//!   never fails a whole answer. The body is parsed as it came; only one
//!   that fails is repaired and parsed again (no pass over every body).
//! - A body that is JSON but not the expected shape is a distinct
//!   `upstream_invalid_response` error naming the field that was wrong
//!   (`FxTwitter answered a status that is not the expected shape:
//!   `author`: invalid type: integer `5`, expected a user object.`),
//!   never a "not found". The per-field wrappers below put each object
//!   field's name on the errors from inside it.

use std::borrow::Cow;
use std::fmt::Display;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

pub use super::depth::{
    is_too_deep, past_quote_nesting_message, too_deep, too_deep_error, PastQuoteNesting,
    MAX_JSON_DEPTH, MAX_QUOTE_NESTING, PAST_QUOTE_NESTING,
};
use crate::x::error::{code, XError};

/// Rewrites every lone surrogate escape (`\uD800`–`\uDFFF` not forming a
/// high-low pair) in JSON text as `\ufffd`. Borrowed when there is none.
pub fn repair_surrogates(text: &str) -> Cow<'_, str> {
    if !has_surrogate_escape(text) {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let hex4 = |at: usize| -> Option<u32> {
        let s = b.get(at..at + 4)?;
        std::str::from_utf8(s)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let escape_at = |at: usize| -> Option<u32> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex4(at + 2))
            .flatten()
    };
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(u) = escape_at(i) else {
            // Any other escape: skip the escaped character (so `\\` is
            // never read as the start of an escape).
            i += 2;
            continue;
        };
        let lone = match u {
            0xD800..=0xDBFF => {
                if escape_at(i + 6).is_some_and(|l| (0xDC00..=0xDFFF).contains(&l)) {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `text` holds `\ud` or `\uD` anywhere (what may start a
/// surrogate escape): found from backslash to backslash, which the
/// standard library finds a word at a time, instead of two substring
/// searches over the whole body.
fn has_surrogate_escape(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find('\\') {
        let i = from + at;
        if b.get(i + 1) == Some(&b'u') && matches!(b.get(i + 2), Some(b'd' | b'D')) {
            return true;
        }
        from = i + 1;
    }
    false
}

/// Parses an upstream body into `T`: `what` names the answer in a shape
/// error (`a status`, `a profile`, `a timeline page`).
///
/// The body is read as it came: serde_json rejects a lone surrogate escape
/// in every string it decodes, so only a body that fails is searched for
/// one, repaired ([`repair_surrogates`]) and read again. A lone surrogate
/// that reaches the model without being decoded (inside a value kept as
/// sent) is repaired by [`raw`].
pub fn parse<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, XError> {
    parse_with(body, what, Authors::Whole)
}

/// How a parse reads the `author` of a post that is not itself a quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authors {
    /// Every field, as any object is read.
    Whole,
    /// Only what identifies the account (`id`, `screen_name`, `name`);
    /// the rest of the object is skipped unread. For the rows of a list
    /// served lean (`full` off): a lean row's author shows no more
    /// ([`crate::x::post::lean_status_row`]), and the author's profile,
    /// most of a row's bytes, then costs no allocation. A quote's author
    /// is read whole (a row's quote keeps it).
    Identity,
}

impl Authors {
    /// The authors a list read with `full` needs.
    pub fn for_rows(full: bool) -> Authors {
        if full {
            Authors::Whole
        } else {
            Authors::Identity
        }
    }
}

thread_local! {
    /// How the parse running on this thread reads authors ([`parse_with`]).
    static AUTHORS: std::cell::Cell<Authors> = const { std::cell::Cell::new(Authors::Whole) };
}

/// [`parse`], reading the authors of posts as `authors` says.
pub fn parse_with<T: DeserializeOwned>(
    body: &[u8],
    what: &str,
    authors: Authors,
) -> Result<T, XError> {
    struct Restore(Authors);
    impl Drop for Restore {
        fn drop(&mut self) {
            AUTHORS.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(AUTHORS.with(|a| a.replace(authors)));
    parse_body(body, what)
}

fn parse_body<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, XError> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(XError::unexpected_response());
    };
    // Every answer xmd reads is a JSON object: anything else is the general
    // error, before serde, which would read an array as a struct's fields
    // in order (`[]` as a list page with no rows, an empty list).
    if !text.trim_start().starts_with('{') {
        return Err(XError::unexpected_response());
    }
    if too_deep(text) {
        return Err(too_deep_error(what));
    }
    match serde_json::from_str(text) {
        Ok(t) => Ok(t),
        Err(e) => match repair_surrogates(text) {
            Cow::Owned(repaired) => {
                serde_json::from_str(&repaired).map_err(|e| parse_error(what, &repaired, &e))
            }
            Cow::Borrowed(_) => Err(parse_error(what, text, &e)),
        },
    }
}

/// The error for a body that failed to parse: a shape error when it is
/// JSON throughout, else the general error.
fn parse_error(what: &str, text: &str, e: &serde_json::Error) -> XError {
    if is_too_deep(e) {
        return too_deep_error(what);
    }
    // A syntax error inside a named field is re-raised as a custom (data)
    // error by the field wrappers; only a body that is JSON throughout is
    // of the wrong shape.
    let is_json = || serde_json::from_str::<IgnoredAny>(text).is_ok();
    if e.classify() == serde_json::error::Category::Data && is_json() {
        shape_error(what, e)
    } else {
        XError::unexpected_response()
    }
}

/// Deserializes a value kept as sent (`replying_to`, `indices`, …), `null`
/// as absent, with any lone surrogate escape in it made `\ufffd` (serde_json
/// does not decode it, so [`parse`] would not see it fail).
///
/// A value no `serde_json::Value` can hold (a number past `f64`'s range
/// such as `1e400`, nesting past serde_json's limit) is absent as well:
/// the post renderer reads a post through `Value`, and such a value would
/// have failed the whole post.
pub fn raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    let Some(r) = Option::<Box<RawValue>>::deserialize(d)? else {
        return Ok(None);
    };
    let r = match repair_surrogates(r.get()) {
        Cow::Borrowed(_) => r,
        Cow::Owned(repaired) => RawValue::from_string(repaired).map_err(de::Error::custom)?,
    };
    let holds =
        !may_not_fit_a_value(r.get()) || serde_json::from_str::<serde_json::Value>(r.get()).is_ok();
    Ok(holds.then_some(r))
}

/// Most nesting of a kept value read without the check of [`raw`]: 32.
const PLAIN_RAW_DEPTH: usize = 32;

/// Most digits of a number read without the check of [`raw`]: 300
/// (`f64` reaches about 1.8e308).
const PLAIN_RAW_DIGITS: usize = 300;

/// Whether the JSON text `t` may hold what a `Value` cannot: a number with
/// an exponent or more than [`PLAIN_RAW_DIGITS`] digits, or nesting past
/// [`PLAIN_RAW_DEPTH`]. One pass over the bytes; strings are skipped.
fn may_not_fit_a_value(t: &str) -> bool {
    // Most kept values (index pairs, short objects) are settled without
    // the walk: no digit followed by `e` (an exponent follows a digit),
    // too short for too many digits, too few brackets to nest too deep.
    let b = t.as_bytes();
    if b.len() <= PLAIN_RAW_DIGITS
        && !b
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && matches!(w[1], b'e' | b'E'))
        && b.iter().filter(|&&c| c == b'[' || c == b'{').count() <= PLAIN_RAW_DEPTH
    {
        return false;
    }
    let (mut depth, mut digits) = (0usize, 0usize);
    for (b, inside) in crate::json::bytes_in_strings(t) {
        if inside {
            digits = 0;
            continue;
        }
        // An exponent follows a digit (`true` and `false` hold an `e` too).
        if matches!(b, b'e' | b'E') && digits > 0 {
            return true;
        }
        digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > PLAIN_RAW_DEPTH || digits > PLAIN_RAW_DIGITS {
            return true;
        }
    }
    false
}

/// The error for a body of the wrong shape.
pub fn shape_error(what: &str, e: &dyn Display) -> XError {
    XError::new(
        502,
        code::INVALID_RESPONSE,
        format!(
            "FxTwitter answered {what} that is not the expected shape: {}.",
            echoed(strip_position(&e.to_string()))
        ),
    )
}

/// A parse error's message as echoed: clipped, controls blanked, and the
/// upstream string serde quotes in it (`invalid type: string "…"`)
/// escaped for Markdown as [`crate::x::error::clip_message`] does; the
/// rest is xmd's and serde's own words.
fn echoed(m: &str) -> String {
    use crate::x::escape::escape_inline;
    let m = crate::text::clip_inert(m, crate::x::error::MAX_ECHOED_MESSAGE_CHARS);
    let Some(open) = m.find('"') else {
        return m;
    };
    let close = m.rfind('"').filter(|&c| c > open).unwrap_or(m.len());
    format!(
        "{}\"{}{}",
        &m[..open],
        escape_inline(&m[open + 1..close]),
        &m[close..]
    )
}

/// A serde_json message without its ` at line L column C` tail.
fn strip_position(m: &str) -> &str {
    match m.rfind(" at line ") {
        Some(i) => &m[..i],
        None => m,
    }
}

/// `r` with the field `name` put in front of its error's path:
/// `` `author`: … ``, `` `author.website`: … ``.
pub(crate) fn in_field<T, E: de::Error>(name: &str, r: Result<T, E>) -> Result<T, E> {
    r.map_err(|e| {
        let m = e.to_string();
        let m = strip_position(&m);
        match m.strip_prefix('`') {
            Some(rest) if rest.contains("`: ") => E::custom(format_args!("`{name}.{rest}")),
            _ => E::custom(format_args!("`{name}`: {m}")),
        }
    })
}

macro_rules! named_fields {
    ($($f:ident),* $(,)?) => {$(
        #[doc = concat!("Deserializes the `", stringify!($f), "` field, naming it in errors.")]
        pub fn $f<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
            in_field(stringify!($f), T::deserialize(d))
        }
    )*};
}

named_fields!(id, formats, variants, facets, choices, blocks, entities);

macro_rules! object_fields {
    ($($f:ident => $what:literal),* $(,)?) => {$(
        #[doc = concat!("Deserializes the optional object `", stringify!($f), "` (", $what, " or `null`), naming it in errors.")]
        pub fn $f<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
            in_field(stringify!($f), d.deserialize_any(ObjectOrNull::<T>($what, PhantomData)))
        }
    )*};
}

object_fields!(
    media => "a media object",
    raw_text => "a raw text object",
    raw_description => "a raw text object",
    reposted_by => "a user object",
    website => "a website object",
    verification => "a verification object",
    user => "a user object",
    status => "a status object",
    tweet => "a status object",
    poll => "a poll object",
    card => "a card object",
    article => "an article object",
    community_note => "a community note object",
    cover_media => "a cover media object",
    media_info => "a media info object",
    content => "an article content object",
    translation => "a translation object",
    about_account => "an about-account object",
    username_changes => "a username changes object",
);

thread_local! {
    /// Quotes being read on this thread, outermost first.
    static QUOTE_NESTING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a post's `author` read now is read as [`Authors::Identity`]:
/// the parse asked for identities and the post is not inside a quote (a
/// quote's author is read whole).
pub(crate) fn authors_as_identity() -> bool {
    QUOTE_NESTING.with(std::cell::Cell::get) == 0
        && AUTHORS.with(std::cell::Cell::get) == Authors::Identity
}

/// Deserializes the optional object `quote` (a status object or `null`),
/// naming it in errors; beyond [`MAX_QUOTE_NESTING`] levels it is skipped
/// unread and stands as [`PastQuoteNesting::past_quote_nesting`]. The
/// count is checked before descending.
pub fn quote<'de, D: Deserializer<'de>, T: Deserialize<'de> + PastQuoteNesting>(
    d: D,
) -> Result<Option<T>, D::Error> {
    struct Level(usize);
    impl Drop for Level {
        fn drop(&mut self) {
            QUOTE_NESTING.with(|n| n.set(self.0));
        }
    }
    let depth = QUOTE_NESTING.with(std::cell::Cell::get);
    if depth >= MAX_QUOTE_NESTING {
        // `null` (no quote) stays absent; anything else was a quote.
        return match Option::<IgnoredAny>::deserialize(d)? {
            None => Ok(None),
            Some(_) => Ok(Some(T::past_quote_nesting())),
        };
    }
    QUOTE_NESTING.with(|n| n.set(depth + 1));
    let _restore = Level(depth);
    in_field(
        "quote",
        d.deserialize_any(ObjectOrNull::<T>("a status object", PhantomData)),
    )
}

/// Deserializes a note entity's optional `ref` object, naming it.
pub fn note_ref<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    in_field(
        "ref",
        d.deserialize_any(ObjectOrNull::<T>("a note entity ref object", PhantomData)),
    )
}

/// An optional object: `null` is absent, an object is read as `T`, and
/// anything else (an array too, which serde would read as the struct's
/// fields in order) is a shape error expecting `.0`.
pub(crate) struct ObjectOrNull<T>(pub(crate) &'static str, pub(crate) PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOrNull<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, a: A) -> Result<Option<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(a)).map(Some)
    }
}

/// Deserializes a media list (`media.all`, `photos`, …), naming it.
pub fn media_items<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    in_field("items", T::deserialize(d))
}

/// Deserializes a page's `results`: `null` is empty, a row that is not an
/// object is skipped, an error inside row `i` is named `results[i]`.
pub fn rows<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(d.deserialize_any(Rows("results", PhantomData))?
        .unwrap_or_default())
}

/// [`rows`] of a thread answer's `thread` (errors named `thread[i]`).
pub fn thread<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(d.deserialize_any(Rows("thread", PhantomData))?
        .unwrap_or_default())
}

macro_rules! optional_rows {
    ($($f:ident),* $(,)?) => {$(
        #[doc = concat!("The optional rows `", stringify!($f), "` (`null` is absent; see [`rows`]).")]
        pub fn $f<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
            d.deserialize_any(Rows(stringify!($f), PhantomData))
        }
    )*};
}

optional_rows!(replies, results, tweets, conversation);

/// A list of rows named `.0` in errors: `None` for `null`.
struct Rows<T>(&'static str, PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Rows<T> {
    type Value = Option<Vec<T>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of rows")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            // The row's name is built only for an error.
            let row = match a.next_element::<ObjectOrSkip<T>>() {
                Ok(row) => row,
                Err(e) => return in_field(&format!("{}[{i}]", self.0), Err(e)),
            };
            match row {
                None => return Ok(Some(out)),
                Some(ObjectOrSkip(Some(t))) => out.push(t),
                Some(ObjectOrSkip(None)) => {}
            }
            i += 1;
        }
    }
}

/// Deserializes a page's `results` that may be absent (then `None`, which
/// a list page reports as a shape error), else as [`rows`].
pub fn opt_rows<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    rows(d).map(Some)
}

/// A row: `Some` for an object, `None` (skipped) for anything else.
struct ObjectOrSkip<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOrSkip<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ObjectOrSkip<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a row")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(a))
                    .map(|t| ObjectOrSkip(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjectOrSkip(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ObjectOrSkip(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[cfg(test)]
mod tests;
