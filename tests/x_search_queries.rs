//! Any search query the schema accepts (1 to 500 characters, any Unicode,
//! at least one non-space) reaches the upstream whole (trimmed of white
//! space at both ends), in every feed: the
//! request it makes fits the upstream client's buffers. At a 4 KiB write
//! buffer a 500-character query in CJK or emoji failed the call as an
//! upstream network error. The oracle is the request-target the loopback
//! upstream received, form-decoded here as the WHATWG URL standard
//! decodes `application/x-www-form-urlencoded` (what FxTwitter's
//! `URLSearchParams` does): `+` is a space, `%XX` a byte.

mod common;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::json;
use xmd::x::args::MAX_QUERY_CHARS;

const EMPTY_SEARCH: &str = r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#;
const EMPTY_TYPEAHEAD: &str = r#"{"code":200,"query":"q","num_results":0,"users":[]}"#;

fn upstream() -> FakeUpstream {
    let fake = FakeUpstream::start();
    fake.handler(|target| {
        if target.starts_with("/2/search?") {
            Some(Answer::json(200, EMPTY_SEARCH))
        } else if target.starts_with("/2/typeahead?") {
            Some(Answer::json(200, EMPTY_TYPEAHEAD))
        } else {
            None
        }
    });
    fake
}

/// `q` of a request-target, form-decoded.
fn q_of(target: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let value = query.split('&').find_map(|p| p.strip_prefix("q="))?;
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// A query: any characters, weighted to the widest (4 UTF-8 bytes, 12
/// percent-encoded) and to lengths near the limit, where the request is
/// longest; at least one character is not white space.
fn query() -> impl Strategy<Value = String> {
    let ch = prop_oneof![any::<char>(), prop::char::range('\u{10000}', '\u{10FFFF}'),];
    let len = prop_oneof![0..MAX_QUERY_CHARS, MAX_QUERY_CHARS - 100..MAX_QUERY_CHARS];
    (
        len.prop_flat_map(move |n| prop::collection::vec(ch.clone(), n)),
        prop::char::range('!', '~'),
    )
        .prop_map(|(mut chars, visible)| {
            chars.push(visible);
            chars.into_iter().collect()
        })
}

fn searched(fake: &FakeUpstream) -> Vec<String> {
    fake.targets()
        .into_iter()
        .filter(|t| t.starts_with("/2/search?") || t.starts_with("/2/typeahead?"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_valid_query_reaches_the_upstream_whole(
        q in query(),
        feed in prop::sample::select(vec!["latest", "top", "videos", "users"]),
    ) {
        let fake = upstream();
        let tools = tools_for(&fake);
        ok(&tools, "x_md_search_posts", json!({"q": q, "feed": feed}));
        let targets = searched(&fake);
        prop_assert_eq!(targets.len(), 1, "{:?}", targets);
        // Searched trimmed of Unicode white space at both ends, as
        // documented (`char::is_whitespace`).
        prop_assert_eq!(q_of(&targets[0]), Some(q.trim().to_string()));
    }
}

/// The longest query in the widest characters (500 of 4 UTF-8 bytes each:
/// 6,000 bytes percent-encoded), in every feed.
#[test]
fn the_longest_query_in_four_byte_characters_is_searched() {
    let q: String = "𝕏".repeat(MAX_QUERY_CHARS);
    for feed in ["latest", "top", "photos", "videos", "users"] {
        let fake = upstream();
        let tools = tools_for(&fake);
        ok(&tools, "x_md_search_posts", json!({"q": q, "feed": feed}));
        let targets = searched(&fake);
        assert_eq!(targets.len(), 1, "{feed}: {targets:?}");
        assert!(targets[0].len() > 6000, "{feed}: {}", targets[0].len());
        assert_eq!(q_of(&targets[0]).as_deref(), Some(q.as_str()), "{feed}");
    }
}
