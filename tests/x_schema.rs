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
