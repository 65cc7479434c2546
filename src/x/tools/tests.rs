//! The unit tests of the tool surface: definitions, refusals at prepare,
//! the cache member in the budget, and generated calls.

use super::*;
use crate::x::args;
use serde_json::{json, Map};

#[test]
fn definitions_complete() {
    let defs = Tools::definitions();
    let defs = defs.as_array().unwrap();
    let names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, TOOL_NAMES);
    for d in defs {
        assert!(d["title"].as_str().unwrap().len() > 5);
        assert!(d["description"].as_str().unwrap().len() > 80);
        assert_eq!(d["inputSchema"]["$schema"], schema::DIALECT);
        assert_eq!(d["inputSchema"]["type"], "object");
        assert_eq!(d["inputSchema"]["additionalProperties"], false);
        assert_eq!(d["outputSchema"]["$schema"], schema::DIALECT);
        assert_eq!(
            d["annotations"],
            json!({"title": d["title"], "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
        );
        assert_eq!(
            Tools::input_schema(d["name"].as_str().unwrap()).unwrap(),
            d["inputSchema"]
        );
    }
    assert_eq!(
        defs[2]["inputSchema"]["properties"]["limit"],
        json!({"type":"integer","minimum":1,"maximum":20,"default":20,"description":"Items per page, 1 to 20 (default 20)."})
    );
    assert_eq!(defs[2]["inputSchema"]["required"], json!(["q"]));
    assert_eq!(
        defs[2]["inputSchema"]["properties"]["feed"]["enum"],
        json!(["latest", "top", "photos", "videos", "media", "users"])
    );
    assert_eq!(Tools::input_schema("nope"), None);
}

#[test]
fn prepare_refusals() {
    assert_eq!(
        Tools::prepare("x_md_delete_post", None).unwrap_err(),
        PrepareError::UnknownTool
    );
    let e = Tools::prepare("x_md_get_post", Some(&json!({}))).unwrap_err();
    assert!(matches!(e, PrepareError::InvalidArguments(m) if m.starts_with("supply `url`")));
    let ok = Tools::prepare("x_md_get_profile", Some(&json!({"handle": "@a"}))).unwrap();
    assert_eq!(ok.name(), "x_md_get_profile");
    assert_eq!(ok.arguments(), json!({"handle": "a"}));
    assert_eq!(
        Tools::prepare("x_md_get_following", None).unwrap_err(),
        PrepareError::InvalidArguments("missing required property `handle`".into())
    );
}

#[test]
fn the_cache_member_is_counted_by_the_budget() {
    for c in [CacheStatus::Hit, CacheStatus::Miss, CacheStatus::Bypass] {
        let mut out = Vec::new();
        write_structured(&mut out, br#"{"a":1}"#, c);
        let parsed: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(parsed, json!({"cache": c.as_str(), "a": 1}));
        assert!(out.len() - 7 <= crate::x::budget::CACHE_MEMBER_BYTES);
    }
    let mut out = Vec::new();
    write_structured(&mut out, b"{}", CacheStatus::Bypass);
    assert_eq!(out.len() - 2 + 1, crate::x::budget::CACHE_MEMBER_BYTES);
    let mut out = Vec::new();
    write_structured(&mut out, b"[1]", CacheStatus::Hit);
    assert_eq!(out, b"[1]");
}

/// An argument object of any tool built from generated values, each
/// argument present or absent, spelled as sent or as its default.
fn arguments_strategy() -> impl proptest::strategy::Strategy<Value = (Tool, Value, Value)> {
    use proptest::prelude::*;
    (
        proptest::sample::select(Tool::ALL.to_vec()),
        "[A-Za-z0-9_]{1,20}",
        "[1-9][0-9]{0,15}",
        proptest::collection::vec(proptest::option::of(0usize..6), 12),
    )
        .prop_map(|(tool, handle, id, picks)| {
            // For each property: absent, its default spelled out, or
            // another valid value; `want` omits explicit defaults.
            let mut sent = Map::new();
            let mut want = Map::new();
            for (p, pick) in tool.spec().props.iter().zip(picks) {
                let Some(pick) = pick else { continue };
                let (v, is_default) = match (p.name, p.kind) {
                    ("url", _) => continue,
                    ("handle", _) => (Value::from(format!("@{handle}")), false),
                    ("id", _) => (Value::from(id.clone()), false),
                    ("q", _) => (Value::from("rust lang:en"), false),
                    ("cursor", _) => continue,
                    // Only with feed=posts: refused with another feed.
                    ("with_replies", _) => continue,
                    // The one spelling of a `since` is its shortest
                    // decimal, as a string.
                    (_, args::Kind::Since) => (Value::from((pick * 1000).to_string()), false),
                    // `lang` is lower-cased: sent so already.
                    ("lang", _) => (Value::from(["en", "es", "zh-cn"][pick % 3]), false),
                    (_, args::Kind::Enum(vals)) => {
                        let i = pick % vals.len();
                        (Value::from(vals[i]), i == 0)
                    }
                    (_, args::Kind::Int { min, max, default }) => {
                        let v = if pick % 2 == 0 {
                            default
                        } else {
                            min.max(max - pick as i64)
                        };
                        // `3.0` is an integer too.
                        let spelled = if pick == 3 {
                            Value::from(v as f64)
                        } else {
                            Value::from(v)
                        };
                        (spelled, v == default && p.name != "max_chars")
                    }
                    (_, args::Kind::Bool) => (Value::Bool(pick % 2 == 1), pick % 2 == 0),
                    (_, args::Kind::Str { .. }) => continue,
                };
                if !is_default {
                    want.insert(p.name.into(), v.clone());
                }
                sent.insert(p.name.into(), v);
            }
            for r in tool.spec().required {
                let v = match *r {
                    "handle" => Value::from(format!("@{handle}")),
                    _ => Value::from("rust lang:en"),
                };
                sent.entry(r.to_string()).or_insert(v.clone());
                want.entry(r.to_string()).or_insert(v);
            }
            // A tool about one post names it with `handle` and `id`.
            if tool.spec().props.iter().any(|p| p.name == "id") {
                sent.insert("handle".into(), Value::from(format!("@{handle}")));
                sent.insert("id".into(), Value::from(id.clone()));
                want.insert("handle".into(), Value::from(format!("@{handle}")));
                want.insert("id".into(), Value::from(id));
            }
            (tool, Value::Object(sent), Value::Object(want))
        })
}

proptest::proptest! {
    /// A call with its defaults spelled out is the call without them
    /// (one key), and the canonical form of any call is a valid call
    /// of its own that gives the same typed arguments: the oracle is
    /// the argument object built without the defaults.
    #[test]
    fn equal_calls_get_equal_keys((tool, sent, want) in arguments_strategy()) {
        use proptest::prop_assert_eq;
        let a = Tools::prepare(tool.name(), Some(&sent)).unwrap();
        let b = Tools::prepare(tool.name(), Some(&want)).unwrap();
        prop_assert_eq!(&a.call, &b.call);
        prop_assert_eq!((a.name(), a.arguments()), (b.name(), b.arguments()));
        let again = Tools::prepare(tool.name(), Some(&a.arguments())).unwrap();
        prop_assert_eq!(&again.call, &a.call);
        prop_assert_eq!(again.arguments(), a.arguments());
    }
}

proptest::proptest! {
    /// Any spelling of a handle (case, `@`) and of a post id (leading
    /// zeros), in any argument form of any tool, gives one call: the
    /// oracle is the spelling built from scratch in lowercase.
    #[test]
    fn every_spelling_of_a_target_is_one_call(
        handle in "[A-Za-z0-9_]{1,20}",
        flips in proptest::collection::vec(proptest::bool::ANY, 15),
        at in proptest::bool::ANY,
        zeros in 0usize..4,
        id in "[1-9][0-9]{0,15}",
        host in proptest::sample::select(vec!["x.com", "twitter.com", "mobile.twitter.com", "fxtwitter.com"]),
    ) {
        use proptest::prop_assert_eq;
        let spelled: String = handle
            .chars()
            .zip(flips.iter().cycle())
            .map(|(c, f)| if *f { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
            .collect();
        let spelled = if at { format!("@{spelled}") } else { spelled };
        let padded = format!("{}{id}", "0".repeat(zeros));
        let want_handle = handle.to_ascii_lowercase();
        for tool in ["x_md_get_profile", "x_md_get_followers", "x_md_get_following"] {
            let a = Tools::prepare(tool, Some(&json!({"handle": spelled}))).unwrap();
            let b = Tools::prepare(tool, Some(&json!({"handle": want_handle}))).unwrap();
            prop_assert_eq!((a.name(), a.arguments()), (b.name(), b.arguments()));
        }
        let want = Tools::prepare(
            "x_md_get_post",
            Some(&json!({"handle": want_handle, "id": id})),
        )
        .unwrap();
        if padded.len() <= 20 {
            let by_args = Tools::prepare(
                "x_md_get_post",
                Some(&json!({"handle": spelled, "id": padded})),
            )
            .unwrap();
            prop_assert_eq!((by_args.name(), by_args.arguments()), (want.name(), want.arguments()));
        }
        let link = format!("https://{host}/{}/status/{id}", spelled.trim_start_matches('@'));
        let by_url = Tools::prepare("x_md_get_post", Some(&json!({"url": link}))).unwrap();
        prop_assert_eq!((by_url.name(), by_url.arguments()), (want.name(), want.arguments()));
    }
}
