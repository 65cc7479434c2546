//! The parse's tests, through the model's types.

use super::{has_surrogate_escape, may_not_fit_a_value};
use crate::x::model::status::Status;
use proptest::prelude::*;

/// A value kept as sent that no `Value` holds is absent; the post
/// stays readable through `Value`, as the post renderer reads it.
#[test]
fn a_kept_value_no_value_holds_is_absent() {
    let post = |replying_to: &str| {
        let body =
            format!(r#"{{"type":"status","id":"20","text":"hi","replying_to":{replying_to}}}"#);
        serde_json::from_str::<Status>(&body).unwrap()
    };
    for unreadable in [
        "[1e400, 2]",
        "{\"n\": -1E+999}",
        &format!("[{}]", "9".repeat(400)),
    ] {
        let p = post(unreadable);
        assert!(p.replying_to.is_none(), "{unreadable}");
        assert_eq!(serde_json::to_value(&p).unwrap()["text"], "hi");
    }
    for readable in [
        "[1e300, 2]",
        "{\"status\": \"5\", \"ok\": true}",
        "[[[[1]]]]",
    ] {
        assert!(post(readable).replying_to.is_some(), "{readable}");
    }
}

proptest! {
    /// The oracle: the two substring searches it replaces.
    #[test]
    fn the_backslash_walk_finds_what_substring_search_finds(
        parts in prop::collection::vec(
            prop::sample::select(vec!["\\", "u", "d", "D", "\\ud", "\\\\", "x", "é", "\"", "0"]),
            0..40,
        )
    ) {
        let s = parts.concat();
        prop_assert_eq!(
            has_surrogate_escape(&s),
            s.contains("\\ud") || s.contains("\\uD"),
            "{:?}", s
        );
    }

    /// The oracle: serde_json reading the text into a `Value`. The
    /// cheap scan never calls a value that a `Value` cannot hold safe.
    #[test]
    fn the_scan_flags_every_value_a_value_cannot_hold(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "1", "9".repeat(120).leak(), "e", "E", "400", "-", ".", "[", "]", "{", "}",
                ",", ":", "\"e9\"", "\"k\"", "true", "false", "null", " ",
            ]),
            0..60,
        )
    ) {
        let s = parts.concat();
        if let Ok(raw) = serde_json::value::RawValue::from_string(s.clone()) {
            if serde_json::from_str::<serde_json::Value>(raw.get()).is_err() {
                prop_assert!(may_not_fit_a_value(raw.get()), "{:?}", s);
            }
        }
    }
}
