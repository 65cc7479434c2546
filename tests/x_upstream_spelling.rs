//! What the upstream spells oddly is read as what it means (issue 15,
//! helper G, round 21):
//!
//! - an id sent as a string of digits with leading zeros is the post it
//!   names: `"007"` and `7` are one post, written `7` everywhere (links,
//!   `structuredContent`, and the check that drops a quote row's copy of
//!   the requested post), as a caller's `id` already is;
//! - a count sent as a float too large for any count (`1e30`) is absent,
//!   never shown as 18446744073709551615.
//!
//! Oracles: `u128`'s own parse and `to_string` for ids; `u128` range
//! arithmetic for counts.

mod common;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::json;
use xmd::x::model::scalar::{Count, Id};

#[derive(Deserialize)]
struct Leaf {
    id: Id,
    #[serde(default, deserialize_with = "xmd::x::model::scalar::count")]
    n: Count,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Oracle: the number the digits spell (`u128` reads up to 38 digits).
    #[test]
    fn an_id_of_digits_has_one_spelling(zeros in 0usize..6, digits in "[0-9]{1,32}") {
        let sent = format!("{}{digits}", "0".repeat(zeros));
        let leaf: Leaf = serde_json::from_value(json!({ "id": sent })).unwrap();
        let want = sent.parse::<u128>().unwrap().to_string();
        prop_assert_eq!(leaf.id.as_str(), want.as_str());
    }

    /// Oracle: a float is a count when it is not negative (as the other
    /// negative numbers) and its rounded value fits a `u64` (checked in
    /// `u128`).
    #[test]
    fn a_float_count_past_u64_is_absent(f in prop_oneof![
        any::<f64>(),
        0.0f64..1e6,
        1.8e19f64..1.9e19,
    ]) {
        let leaf: Result<Leaf, _> = serde_json::from_str(&format!(r#"{{"id":"1","n":{f:?}}}"#));
        let Ok(leaf) = leaf else {
            // NaN and the infinities are no JSON number at all.
            prop_assert!(!f.is_finite());
            return Ok(());
        };
        let r = f.round();
        let want = (f >= 0.0 && (r as u128) <= u64::MAX as u128).then_some(r as u128 as u64);
        prop_assert_eq!(leaf.n, want, "{:?}", f);
    }
}

/// End to end: a quote row whose quote is the requested post spelled with
/// leading zeros is a row without that repeated copy, and a row id with
/// leading zeros links the post by its one spelling.
#[test]
fn a_zero_padded_id_from_the_upstream_is_the_post_it_names() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/7/quotes?count=20",
        Answer::json(
            200,
            r#"{"code":200,"results":[{"type":"status","id":"008","text":"t","created_timestamp":1,
                "author":{"id":"01","screen_name":"bob","name":"Bob"},
                "quote":{"type":"status","id":"0007","text":"o","author":{"id":"2","screen_name":"a","name":"A"}}}],
                "cursor":{"top":null,"bottom":null}}"#,
        ),
    );
    let tools = tools_for(&fake);
    let out = ok(
        &tools,
        "x_md_get_quotes",
        json!({"handle": "a", "id": "7", "full": true}),
    );
    let post = &out.structured.as_ref().unwrap()["posts"][0];
    assert_eq!(post["id"], "8");
    assert_eq!(post["url"], "https://x.com/bob/status/8");
    assert_eq!(post["author"]["id"], "1");
    assert_eq!(post.get("quote"), None, "{post}");
    assert!(
        out.text.contains("[Source](https://x.com/bob/status/8)"),
        "{}",
        out.text
    );
}
