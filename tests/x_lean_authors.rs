//! A list read lean (`full` off) reads each row's author as its identity
//! only (`model::parse::Authors::Identity`, issue #15 item 7). The class:
//! any row whose author is read so must be served exactly as when the
//! author is read whole and then leaned (`post::lean_status_row`). The
//! oracle is the whole read: every fixture page, and generated rows whose
//! authors carry any extra members, quotes with their own authors, and
//! identity fields in every spelling the model accepts.

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::model::parse::{parse_with, Authors};
use xmd::x::model::status::{Page, Status};
use xmd::x::post::lean_status_row;

/// A page read with `authors`, each row leaned as a list serves it
/// without `full`, as JSON.
fn served(body: &str, authors: Authors) -> Result<Value, String> {
    let page: Page<Status> =
        parse_with(body.as_bytes(), "a list page", authors).map_err(|e| e.to_string())?;
    let rows: Vec<Status> = page
        .results
        .unwrap_or_default()
        .into_iter()
        .map(|mut p| {
            lean_status_row(&mut p, false);
            p
        })
        .collect();
    Ok(serde_json::from_slice(&xmd::json::to_vec(&rows)).unwrap())
}

#[test]
fn every_fixture_page_is_served_the_same_from_either_read() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fxtwitter");
    let mut pages = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let body = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&body).unwrap();
        let Some(rows) = v["results"].as_array() else {
            continue;
        };
        if !rows.iter().any(|r| r.get("author").is_some()) {
            continue;
        }
        pages += 1;
        let whole = served(&body, Authors::Whole).unwrap();
        assert_eq!(
            served(&body, Authors::Identity).unwrap(),
            whole,
            "{}",
            path.display()
        );
        // The authors are identities: what a lean row carries.
        for row in whole.as_array().unwrap() {
            if let Some(a) = row["author"].as_object() {
                assert!(a
                    .keys()
                    .all(|k| ["id", "screen_name", "name"].contains(&k.as_str())));
            }
        }
    }
    assert!(pages >= 5, "{pages} pages with authors");
}

/// A JSON value of any kind, small.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An identity field in the spellings the model reads: text, null, absent,
/// or (for `id`) a number.
fn id_spelling() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        "[0-9]{1,19}".prop_map(|s| Some(Value::from(s))),
        any::<u64>().prop_map(|n| Some(Value::from(n))),
    ]
}

fn text_spelling() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        "\\PC{0,16}".prop_map(|s| Some(Value::from(s))),
    ]
}

/// An author object: identity fields in any spelling, plus any members.
fn author() -> impl Strategy<Value = Value> {
    (
        id_spelling(),
        text_spelling(),
        text_spelling(),
        prop::collection::btree_map(
            prop::sample::select(vec![
                "description",
                "location",
                "followers",
                "verification",
                "website",
                "avatar_url",
                "joined",
                "unknown_member",
            ]),
            any_value(),
            0..4,
        ),
    )
        .prop_map(|(id, screen_name, name, extra)| {
            let mut a: serde_json::Map<String, Value> =
                extra.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            for (k, v) in [("id", id), ("screen_name", screen_name), ("name", name)] {
                if let Some(v) = v {
                    a.insert(k.into(), v);
                }
            }
            Value::Object(a)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whenever the whole read takes the page, the identity read serves
    /// the same rows; the identity read never refuses a page the whole
    /// read takes.
    #[test]
    fn a_lean_row_is_the_whole_row_leaned(
        authors in prop::collection::vec(author(), 1..4),
        quote_author in author(),
    ) {
        let rows: Vec<Value> = authors.iter().enumerate().map(|(i, a)| json!({
            "type": "status", "id": (i + 1).to_string(), "text": "t",
            "author": a,
            "quote": {"type": "status", "id": "99", "text": "q", "author": quote_author},
        })).collect();
        let body = json!({"code": 200, "results": rows}).to_string();
        if let Ok(whole) = served(&body, Authors::Whole) {
            prop_assert_eq!(served(&body, Authors::Identity), Ok(whole));
        }
    }
}
