//! The advertised schemas: every `inputSchema`/`outputSchema` is valid JSON
//! Schema 2020-12, and `prepare` agrees with a strict validator on a corpus
//! of arguments (same accept/refuse verdict).

use serde_json::{json, Value};
use xmd::x::tools::{Tools, TOOL_NAMES};

fn validator(schema: &Value) -> jsonschema::Validator {
    assert!(
        jsonschema::meta::is_valid(schema),
        "not a valid 2020-12 schema: {schema}"
    );
    jsonschema::draft202012::new(schema).expect("schema compiles")
}

#[test]
fn all_schemas_are_valid_2020_12() {
    for name in TOOL_NAMES {
        validator(&Tools::input_schema(name).unwrap());
        validator(&Tools::output_schema(name).unwrap());
    }
    let defs = Tools::definitions();
    for d in defs.as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
        assert_eq!(d["inputSchema"]["type"], "object");
        assert_eq!(d["outputSchema"]["type"], "object");
        for k in ["oneOf", "anyOf", "allOf"] {
            assert!(d["inputSchema"].get(k).is_none(), "{name}: top-level {k}");
        }
    }
}

#[test]
fn prepare_agrees_with_the_schema() {
    let corpus: Vec<(&str, Value)> = vec![
        ("x_md_get_profile", json!({"handle": "example_user"})),
        (
            "x_md_get_profile",
            json!({"handle": "@example_user", "page": 10, "limit": 1, "cursor": "x", "full": true}),
        ),
        ("x_md_get_profile", json!({"handle": "has spaces here"})),
        ("x_md_get_profile", json!({})),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "unknown_flag": true}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "limit": 21}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "limit": 0}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "page": "2"}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "example_user", "cursor": ""}),
        ),
        ("x_md_get_profile", json!({"handle": "sixteen_chars_xx"})),
        ("x_md_get_profile", json!({"handle": null})),
        ("x_md_search_posts", json!({"q": "rust"})),
        ("x_md_search_posts", json!({"query": "rust", "limit": 500})),
        ("x_md_search_posts", json!({"q": "rust", "feed": "users"})),
        ("x_md_search_posts", json!({"q": "rust", "feed": "people"})),
        ("x_md_search_posts", json!({"q": "🦀".repeat(500)})),
        ("x_md_search_posts", json!({"q": "🦀".repeat(501)})),
        ("x_md_search_posts", json!({"q": ""})),
        ("x_md_search_posts", json!({"q": "  "})),
        ("x_md_get_followers", json!({"handle": "a", "full": "true"})),
        ("x_md_get_following", json!({"handle": "a", "page": 1.0})),
        // Issue 31: feed, with_replies, since (FxTwitter's Number() rule;
        // the pattern leaves out only the ±Infinity and -0 edges), lang,
        // the trends.
        ("x_md_get_profile", json!({"handle": "a", "feed": "media"})),
        (
            "x_md_get_profile",
            json!({"handle": "a", "feed": "replies"}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "with_replies": true}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "with_replies": "yes"}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": 1786464342}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": 1786464342.5}),
        ),
        ("x_md_get_profile", json!({"handle": "a", "since": -1})),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": "1786464342000"}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": " 0x6A7A4D00 "}),
        ),
        ("x_md_get_profile", json!({"handle": "a", "since": "1.5e9"})),
        ("x_md_get_profile", json!({"handle": "a", "since": ""})),
        ("x_md_get_profile", json!({"handle": "a", "since": "-0"})),
        ("x_md_get_profile", json!({"handle": "a", "since": "-5"})),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": "yesterday"}),
        ),
        (
            "x_md_get_profile",
            json!({"handle": "a", "since": "2026-12-01"}),
        ),
        ("x_md_get_profile", json!({"handle": "a", "since": "0x"})),
        ("x_md_get_profile", json!({"handle": "a", "since": true})),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "1", "lang": "en"}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "1", "lang": "zh-CN"}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "1", "lang": "eng"}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "1", "lang": "en_US"}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "1", "lang": "e"}),
        ),
        ("x_md_get_trends", json!({})),
        ("x_md_get_trends", json!({"limit": 5, "full": true})),
        ("x_md_get_trends", json!({"handle": "a"})),
        ("x_md_get_post", json!({"url": "https://x.com/a/status/1"})),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "12345678901234567890"}),
        ),
        (
            "x_md_get_post",
            json!({"handle": "a", "id": "123456789012345678901"}),
        ),
        ("x_md_get_post", json!({"handle": "a", "id": 5})),
        (
            "x_md_get_post",
            json!({"url": "https://x.com/a/status/1", "max_posts": 101}),
        ),
        (
            "x_md_get_post",
            json!({"url": "https://x.com/a/status/1", "format": "obsidian", "userinfo": "all", "context": "thread", "replies": "recent", "thread": "conversation", "full": false}),
        ),
    ];
    for (name, args) in corpus {
        let schema_ok = validator(&Tools::input_schema(name).unwrap()).is_valid(&args);
        let prepare_ok = Tools::prepare(name, Some(&args)).is_ok();
        assert_eq!(prepare_ok, schema_ok, "{name} {args}");
    }
}
