//! The depth caps on upstream data, one fact each, for both providers:
//! how deep an upstream body may nest ([`MAX_JSON_DEPTH`], checked by one
//! iterative scan before any parse) and how many quotes inside quotes are
//! read ([`MAX_QUOTE_NESTING`], counted by [`super::parse::quote`] before
//! it descends).

use crate::x::error::{code, XError};

/// Most levels of quotes inside quotes read, on both providers (FxTwitter's
/// `quote`, the syndication endpoint's `quoted_tweet`). Default 16 (the
/// post renderer shows 3, `structuredContent` every level read). The quote
/// one level deeper is read as a tombstone whose `reason` is
/// [`PAST_QUOTE_NESTING`] and whose `message` says the deeper quotes were
/// not read ([`past_quote_nesting_message`]); what it quoted is skipped
/// unread. Each level costs a worker's stack (`WORKER_STACK_BYTES`) a few
/// deserializer frames, and JSON may nest to [`MAX_JSON_DEPTH`].
pub const MAX_QUOTE_NESTING: usize = 16;

/// The `reason` of the tombstone that stands for a quote nested deeper
/// than [`MAX_QUOTE_NESTING`].
pub const PAST_QUOTE_NESTING: &str = "nested_too_deep";

/// The `message` of the tombstone that stands for a quote nested deeper
/// than [`MAX_QUOTE_NESTING`].
pub fn past_quote_nesting_message() -> String {
    format!("Quotes nested deeper than {MAX_QUOTE_NESTING} levels are not read.")
}

/// Most levels of JSON nesting (arrays and objects inside each other) in
/// an upstream body. Default 64: an FxTwitter or syndication answer nests
/// about 10 levels, plus one per quote level read ([`MAX_QUOTE_NESTING`]).
/// serde_json's own limit, 128, is too deep for a worker's stack
/// (`WORKER_STACK_BYTES`) under a tool call: reading 116 levels of objects
/// into a `serde_json::Value` there overflowed it. A body nested deeper is
/// refused whole, before any parse ([`too_deep`]), with an
/// `upstream_invalid_response` error that says so ([`too_deep_error`]).
pub const MAX_JSON_DEPTH: usize = 64;

/// True when the JSON text `t` nests arrays and objects deeper than
/// [`MAX_JSON_DEPTH`] (brackets inside strings do not count). One pass
/// over the bytes, no recursion; stops at the first level too deep. Most
/// of a body's bytes are inside strings, which are skipped eight bytes
/// at a time ([`string_stop`]).
pub fn too_deep(t: &str) -> bool {
    let b = t.as_bytes();
    // Most bodies are settled without the walk: too few brackets.
    if b.len() <= MAX_JSON_DEPTH {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b'"' => loop {
                // To the string's closing quote, past escapes.
                i = string_stop(b, i);
                match b.get(i) {
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 2,
                    None => return false,
                }
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The index of the first quote or backslash in `b` from `i` on, or
/// `b.len()`. Eight bytes at a time: a byte equal to the pattern is a
/// zero byte of `word ^ pattern`, found by the borrow of subtracting 1
/// from each byte (the lowest such byte exactly; a borrow only marks
/// bytes above it).
fn string_stop(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    while let Some(w) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or([b'"'; 8]));
        let (q, s) = (w ^ QUOTES, w ^ BACKSLASHES);
        let found = ((q.wrapping_sub(ONES) & !q) | (s.wrapping_sub(ONES) & !s)) & HIGH_BITS;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// True when serde_json refused a text for nesting past its own limit
/// (128; [`too_deep`] refuses less deep bodies first).
pub fn is_too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// The error for an FxTwitter body nested past [`MAX_JSON_DEPTH`].
pub fn too_deep_error(what: &str) -> XError {
    XError::new(
        502,
        code::INVALID_RESPONSE,
        format!(
            "FxTwitter answered {what} that is not the expected shape: its JSON is nested \
             deeper than {MAX_JSON_DEPTH} levels, which xmd does not read."
        ),
    )
}

/// What a quote nested deeper than [`MAX_QUOTE_NESTING`] is read as.
pub trait PastQuoteNesting {
    /// The stand-in: a tombstone that says the deeper quotes were not read.
    fn past_quote_nesting() -> Self;
}

#[cfg(test)]
mod tests {
    use super::{too_deep, MAX_JSON_DEPTH};
    use proptest::prelude::*;

    /// Levels of arrays and objects in `v` (the oracle's count).
    fn depth(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            serde_json::Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// The byte-at-a-time scan [`too_deep`] replaced (the word-at-a-time
    /// one must agree with it on any text, JSON or not).
    fn bytewise(t: &str) -> bool {
        let b = t.as_bytes();
        let (mut depth, mut i) = (0usize, 0);
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_JSON_DEPTH {
                        return true;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        false
    }

    proptest! {
        /// Any text at all, unclosed strings and a trailing backslash
        /// included, after up to 80 opening brackets (both verdicts come
        /// up): the same verdict as the byte-at-a-time scan, and no
        /// panic (an index past the end).
        #[test]
        fn the_word_scan_agrees_with_the_bytewise_one(
            t in "[\\[{]{0,80}([\\[\\]{}\"\\\\a ]|[a-z]{20,70}){0,400}"
        ) {
            prop_assert_eq!(too_deep(&t), bytewise(&t), "{}", t);
        }

        /// The oracle: serde_json's parse of the text, its levels counted.
        /// Strings full of brackets, quotes and backslashes count nothing.
        #[test]
        fn the_depth_scan_counts_what_the_parser_nests(
            levels in prop::collection::vec(
                (prop::sample::select(vec!["[", "{\"k\":"]), "[\\[\\]{}\"\\\\a]{0,6}"),
                0..(MAX_JSON_DEPTH + 8),
            )
        ) {
            let mut t = String::new();
            let mut close = Vec::new();
            for (open, s) in &levels {
                t.push_str(open);
                t.push_str(&serde_json::to_string(s).unwrap());
                t.push(',');
                close.push(if *open == "[" { "]" } else { "}" });
                if *open != "[" {
                    // An object's next member is a key, then a value.
                    t.push_str("\"n\":");
                }
            }
            t.push('1');
            for c in close.iter().rev() {
                t.push_str(c);
            }
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            prop_assert_eq!(too_deep(&t), depth(&v) > MAX_JSON_DEPTH, "{}", t);
        }
    }
}
